package numpy

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// tileModules is numpy's tile:
//
//	tile(A, reps) - A repeated reps times along each axis (numpy's rules:
//	    reps an int or a tuple; A is given leading axes of length 1 when
//	    reps is longer, reps leading 1s when A has more axes).
func tileModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "numpy", Members: starlark.StringDict{
		"tile": starlib.NewBuiltin("tile", npTile),
	}})
	return mods
}

func npTile(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var av, rv starlark.Value
	if err := starlark.UnpackArgs("tile", args, kwargs, "A", &av, "reps", &rv); err != nil {
		return nil, err
	}
	a, err := starlib.ToArray(av, nil)
	if err != nil {
		return nil, fmt.Errorf("tile: A: %v", err)
	}
	var reps []int
	if _, ok := rv.(starlark.Int); ok {
		var n int
		if err := starlark.AsInt(starlib.IndexValue(rv), &n); err != nil {
			return nil, fmt.Errorf("tile: reps: %v", err)
		}
		reps = []int{n}
	} else if reps, err = starlib.AsInts(rv); err != nil {
		return nil, fmt.Errorf("tile: reps: %v", err)
	}
	for _, r := range reps {
		if r < 0 {
			return nil, fmt.Errorf("tile: reps must be non-negative, got %v", reps)
		}
	}
	// The result's shape, refused before anything is allocated when a
	// dimension overflows (it used to wrap to a negative one).
	n := max(a.NDim(), len(reps))
	out := make([]int, n)
	for i := range n {
		d, r := 1, 1
		if j := i - (n - a.NDim()); j >= 0 {
			d = a.Shape[j]
		}
		if j := i - (n - len(reps)); j >= 0 {
			r = reps[j]
		}
		if d != 0 && r > math.MaxInt/d {
			return nil, fmt.Errorf("tile: reps %s repeat A of shape %s into more elements than any array can hold (dimension %d overflows a 64-bit int)",
				nd.ShapeString(reps), nd.ShapeString(a.Shape), i)
		}
		out[i] = d * r
	}
	res, err := starlib.NewArray(thread, a.DType(), out)
	if err != nil {
		return nil, fmt.Errorf("tile: %w", err)
	}
	return starlib.FromArray(tileArray(a, res)), nil
}

// tileArray is numpy.tile into res, of the result's shape.
func tileArray(a *nd.Array, res *nd.Array) *nd.Array {
	out := res.Shape
	n := len(out)
	in := make([]int, n)
	for i := range n {
		in[i] = 1
	}
	copy(in[n-a.NDim():], a.Shape)
	size := res.Size()
	idx := make([]int, n)
	for k := 0; k < size; k++ {
		// k's multi-index in out, reduced modulo in's shape.
		rem, src, stride := k, 0, 1
		for i := n - 1; i >= 0; i-- {
			idx[i] = rem % out[i]
			rem /= out[i]
		}
		for i := n - 1; i >= 0; i-- {
			src += (idx[i] % in[i]) * stride
			stride *= in[i]
		}
		res.SetFlat(k, a.Flat(src))
	}
	return res
}
