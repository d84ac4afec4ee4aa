package transformers

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/internal/vec"
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
// source scaled, shifted and cast to a float dtype is computed exactly as
// the two steps compute it (float64(x)*scale + shift in float64, then the
// cast; to float32 in a vectorized loop, to float64 through a table of the
// 256 results), so the batches are bit-identical to the unfused pipeline's
// with no float64 intermediate. The fusion is this package's own: the
// pipeline is unchanged for its user (t.DataStream() is still the
// ScaleAndShift, and the iterator states have its level). An iterator
// whose consumer releases its items (fuel.Lender) draws the float32
// batches from a Recycler, so that an epoch reuses a few buffers.
func fuseCast(t *Transformer, dt nd.DType, castSel []bool) {
	ss, ok := t.child.(*Transformer)
	if !ok || ss.fuse == nil || ss.open != nil || ss.rng != nil || !dt.IsFloat() {
		return
	}
	t.iterated = ss.input()
	t.transform = fusedCast(ss, dt, castSel, t.sources, nil)
	t.lentTransform = fusedCast(ss, dt, castSel, t.sources, new(nd.Recycler))
	// Lent items are asked of the stream below too (a dataset's uint8
	// batches, fuel.LendingDataset): the fused pass releases each one it
	// converted, and hands the others on.
	t.passesLoans = true
	// The uint8 sources the fused pass converts it reads once and drops:
	// they may be views of an in-memory dataset (no copy of the bytes).
	t.views = make([]bool, len(castSel))
	for i := range t.views {
		t.views[i] = ss.fuse.sel[i] && castSel[i]
	}
}

// fusedCast is the fused Cast's transform over ss; batches, when not nil,
// lends the float32 outputs.
func fusedCast(ss *Transformer, dt nd.DType, castSel []bool, sources []string, batches *nd.Recycler) transformFunc {
	spec := *ss.fuse
	conv := vec.NewByteScaler(spec.scale, spec.shift)
	inner := ss.transform
	return func(data []*nd.Array) ([]*nd.Array, error) {
		out := slices.Clone(data)
		var rest []int  // sources the fused pass does not cover
		scaled := false // whether one of them needs the ScaleAndShift
		for i, a := range data {
			if spec.sel[i] || castSel[i] {
				if err := numeric(a); err != nil {
					return nil, fmt.Errorf("source %q: %w", sources[i], err)
				}
			}
		}
		for i, a := range data {
			x, isU8 := a.Data.([]uint8)
			if !spec.sel[i] || !castSel[i] || !isU8 {
				rest = append(rest, i)
				scaled = scaled || spec.sel[i]
				continue
			}
			out[i] = scaleShiftCast(x, a.Shape, spec, conv, dt, batches)
			if batches != nil {
				a.Release() // converted: nothing reads it again
			}
		}
		if len(rest) == 0 {
			return out, nil
		}
		if !scaled {
			for _, i := range rest {
				if castSel[i] {
					out[i] = castOne(data[i], dt)
				}
			}
			return out, nil
		}
		// The other sources take the two steps one after the other.
		stepped, err := inner(data)
		if err != nil {
			return nil, err
		}
		for _, i := range rest {
			if castSel[i] {
				out[i] = castOne(stepped[i], dt)
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

// castOne is Cast's step on one source (a ragged batch part by part).
func castOne(a *nd.Array, dt nd.DType) *nd.Array {
	if a.DType() == nd.Object {
		b, _ := eachPart(a, func(p *nd.Array) (*nd.Array, error) { return astype(p, dt), nil })
		return b
	}
	return astype(a, dt)
}

// scaleShiftCast is the fused pass over one uint8 source; conv is spec's
// float32 converter. Float32 outputs are lent by batches when it is not
// nil.
func scaleShiftCast(x []uint8, shape []int, spec scaleShiftSpec, conv vec.ByteScaler, dt nd.DType, batches *nd.Recycler) *nd.Array {
	if dt == nd.Float32 {
		out := batches.Float32(slices.Clone(shape)...)
		conv.Convert(out.Data.([]float32), x)
		return out
	}
	var f64 [256]float64
	for v := range f64 {
		f64[v] = float64(float64(v)*spec.scale) + spec.shift
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = f64[v]
	}
	return &nd.Array{Shape: slices.Clone(shape), Data: out}
}

var _ fuel.Stream = (*Transformer)(nil)
