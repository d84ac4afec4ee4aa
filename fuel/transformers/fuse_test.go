package transformers_test

import (
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/schemes"
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

// Sourcewise transformers apply to each example of a ragged batch, fused
// or not, instead of failing on the object array.
func TestSourcewiseOnRaggedBatches(t *testing.T) {
	noConfig(t)
	mk := func() fuel.Stream {
		return must(Batch(iterStream(t, nil, "data", [][]int64{{1}, {2, 3}, {4, 5, 6}}), must(schemes.ConstantScheme(3, 0, 0)), 0))
	}
	for name, s := range map[string]fuel.Stream{
		"ScaleAndShift+Cast": must(Cast(must(ScaleAndShift(mk(), 2, 1, nil)), "float32", nil)),
		"Cast":               must(Cast(mk(), "float64", nil)),
		"Flatten":            must(Flatten(mk(), nil)),
		"ForceFloatX":        must(ForceFloatX(must(ScaleAndShift(mk(), 2, 1, nil)), nil)),
	} {
		d := epoch(t, s)[0][0]
		parts, err := d.Parts()
		if err != nil || d.DType() != nd.Object || len(parts) != 3 || parts[2].Shape[0] != 3 {
			t.Errorf("%s: %s%v %v", name, d.DType(), d.Shape, err)
			continue
		}
		if name == "ScaleAndShift+Cast" && (parts[1].DType() != nd.Float32 || parts[1].Flat(1) != 7) {
			t.Errorf("%s: example 1 = %v", name, parts[1])
		}
	}
}
