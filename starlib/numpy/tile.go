package numpy

import (
	"fmt"

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
		if err := starlark.AsInt(rv, &n); err != nil {
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
	return starlib.FromArray(tileArray(a, reps)), nil
}

// tileArray is numpy.tile for non-negative reps.
func tileArray(a *nd.Array, reps []int) *nd.Array {
	n := max(a.NDim(), len(reps))
	in := make([]int, n)
	rp := make([]int, n)
	for i := range n {
		in[i], rp[i] = 1, 1
	}
	copy(in[n-a.NDim():], a.Shape)
	copy(rp[n-len(reps):], reps)
	out := make([]int, n)
	for i := range n {
		out[i] = in[i] * rp[i]
	}
	res := nd.New(a.DType(), out...)
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
