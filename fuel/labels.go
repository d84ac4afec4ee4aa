package fuel

import (
	"maps"
	"slices"
)

// CloneAxisLabels is a deep copy of axis labels (nil for nil), so that
// what a dataset or transformer keeps is not the caller's to change.
func CloneAxisLabels(m map[string][]string) map[string][]string {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = slices.Clone(v)
	}
	return out
}
