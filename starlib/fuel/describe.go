package fuel

import (
	"fmt"
	"strings"
)

// The descriptions (Describer) of the fuel modules' values.

// Describe lists the stream's sources with their axis labels.
func (s *Stream) Describe() string {
	var b strings.Builder
	b.WriteString(s.Type())
	labels := s.S.AxisLabels()
	for _, src := range s.S.Sources() {
		fmt.Fprintf(&b, "\n  %s", src)
		if l, ok := labels[src]; ok && len(l) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(l, ", "))
		}
	}
	return b.String()
}
