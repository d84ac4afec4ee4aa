package starlib

import (
	"fmt"
	"math"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/nd"
)

// A Describer has a description for people, longer than its String: what
// the interactive session prints when a value is echoed or asked about
// with :info.
type Describer interface {
	Describe() string
}

// Describe is v's description for people: Describe() when v has one, else
// its String().
func Describe(v starlark.Value) string {
	if d, ok := v.(Describer); ok {
		return d.Describe()
	}
	return v.String()
}

// Describe summarises an array: dtype and shape, statistics, and its
// values (elided in the middle when there are many).
func (a *Array) Describe() string { return describeArray(a.A) }

func describeArray(a *nd.Array) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ndarray %s %s", a.DType(), nd.ShapeString(a.Shape))
	if n := a.Size(); n > 1 {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for i := 0; i < n; i++ {
			v := a.Flat(i)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			sum += v
		}
		mean := sum / float64(n)
		ss := 0.0
		for i := 0; i < n; i++ {
			d := a.Flat(i) - mean
			ss += d * d
		}
		fmt.Fprintf(&b, "  mean=%.4g std=%.4g min=%.4g max=%.4g", mean, math.Sqrt(ss/float64(n)), lo, hi)
	}
	b.WriteString("\n")
	b.WriteString(a.String())
	return b.String()
}
