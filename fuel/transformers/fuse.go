package transformers

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// scaleShiftSpec is what a Cast needs to know of the ScaleAndShift it
// wraps to do both in one pass.
type scaleShiftSpec struct {
	scale, shift float64
	sel          []bool // the sources ScaleAndShift transforms
}

// fuseCast makes the Cast t, when it wraps a ScaleAndShift, read the
// ScaleAndShift's input itself and do both steps in one pass: a uint8
// source scaled, shifted and cast to a float dtype goes through a table of
// its 256 results, each computed exactly as the two steps compute it
// (float64(x)*scale + shift in float64, then the cast), so the batches are
// bit-identical to the unfused pipeline's with no float64 intermediate.
// The pipeline's structure is unchanged for its user (t.DataStream() is
// still the ScaleAndShift); its iterator state skips the ScaleAndShift
// level, the same in every pipeline built this way.
func fuseCast(t *Transformer, dt nd.DType, castSel []bool) {
	ss, ok := t.child.(*Transformer)
	if !ok || ss.fuse == nil || ss.open != nil || ss.rng != nil || !dt.IsFloat() {
		return
	}
	spec := *ss.fuse
	inner := ss.transform
	sources := t.sources
	t.iterated = ss.input()
	t.transform = func(data []*nd.Array) ([]*nd.Array, error) {
		out := slices.Clone(data)
		var rest []int // sources the table does not cover
		for i, a := range data {
			x, isU8 := a.Data.([]uint8)
			if !spec.sel[i] || !castSel[i] || !isU8 {
				rest = append(rest, i)
				continue
			}
			out[i] = lookup(x, a.Shape, spec, dt)
		}
		if len(rest) == 0 {
			return out, nil
		}
		// The other sources take the two steps one after the other.
		stepped, err := inner(data)
		if err != nil {
			return nil, err
		}
		for _, i := range rest {
			if castSel[i] && stepped[i].DType() == nd.Object {
				out[i], _ = eachPart(stepped[i], func(p *nd.Array) (*nd.Array, error) { return astype(p, dt), nil })
			} else if castSel[i] {
				out[i] = astype(stepped[i], dt)
			} else {
				out[i] = stepped[i]
			}
		}
		if len(out) != len(sources) {
			return nil, fmt.Errorf("fused ScaleAndShift and Cast gave %d arrays for %d sources", len(out), len(sources))
		}
		return out, nil
	}
}

func lookup(x []uint8, shape []int, spec scaleShiftSpec, dt nd.DType) *nd.Array {
	var f64 [256]float64
	for v := range f64 {
		f64[v] = float64(float64(v)*spec.scale) + spec.shift
	}
	if dt == nd.Float32 {
		var lut [256]float32
		for v := range lut {
			lut[v] = float32(f64[v])
		}
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = lut[v]
		}
		return &nd.Array{Shape: slices.Clone(shape), Data: out}
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = f64[v]
	}
	return &nd.Array{Shape: slices.Clone(shape), Data: out}
}

var _ fuel.Stream = (*Transformer)(nil)
