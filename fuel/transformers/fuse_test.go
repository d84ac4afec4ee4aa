package transformers_test

import (
	"testing"

	"github.com/blocks-go/blocks/fuel"
	. "github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

// Cast over ScaleAndShift runs fused (a lookup table for uint8 sources);
// the batches are bit-identical to the two steps run apart (a Mapping in
// between prevents the fusion), for every mix of selected sources and
// dtypes, and the fused pipeline resumes.
func TestFusedScaleShiftCast(t *testing.T) {
	noConfig(t)
	identity := func(d []*nd.Array) ([]*nd.Array, error) { return d, nil }
	for _, c := range []struct {
		scale, shift float64
		ss, cast     []string
		dtype        string
	}{
		{1 / 255.0, 0, nil, nil, "float32"},
		{0.1, -3.7, []string{"x"}, nil, "float32"},
		{2.5, 1, nil, []string{"x", "y"}, "float64"},
		{1e-3, 0.5, []string{"x", "z"}, []string{"x"}, "float32"},
	} {
		fused := must(Cast(must(ScaleAndShift(toyStream(t, 2), c.scale, c.shift, c.ss)), c.dtype, c.cast))
		apart := must(Cast(must(Mapping(must(ScaleAndShift(toyStream(t, 2), c.scale, c.shift, c.ss)), identity, nil)), c.dtype, c.cast))
		a, b := epoch(t, fused), epoch(t, apart)
		for k := range b {
			for i := range b[k] {
				if !nd.Equal(a[k][i], b[k][i]) {
					t.Errorf("%+v: batch %d source %d: fused %v, apart %v", c, k, i, a[k][i], b[k][i])
				}
			}
		}
		it := must(fused.GetEpochIterator())
		it.Next()
		st := must(it.(fuel.StatefulIterator).State())
		rest := must(must(Cast(must(ScaleAndShift(toyStream(t, 2), c.scale, c.shift, c.ss)), c.dtype, c.cast)).ResumeEpochIterator(st))
		d := must(rest.Next())
		for i := range d {
			if !nd.Equal(d[i], b[1][i]) {
				t.Errorf("%+v: resumed batch source %d differs", c, i)
			}
		}
	}
}
