package starlib

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// RandomState is numpy.random.RandomState as a Starlark value. Drawing
// changes its state even when the value is frozen: a generator defined by
// a loaded module is still usable.
type RandomState struct {
	R *numpyrand.RandomState
}

var _ starlark.HasAttrs = (*RandomState)(nil)

func (r *RandomState) String() string        { return "RandomState(MT19937)" }
func (r *RandomState) Type() string          { return "RandomState" }
func (r *RandomState) Freeze()               {}
func (r *RandomState) Truth() starlark.Bool  { return true }
func (r *RandomState) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: RandomState") }

var randomMethods = map[string]BuiltinFunc{
	"random_sample":   rsSample,
	"rand":            rsShaped,
	"randn":           rsShaped,
	"uniform":         rsUniform,
	"normal":          rsNormal,
	"standard_normal": rsSample,
	"randint":         rsRandint,
	"binomial":        rsBinomial,
	"permutation":     rsPermutation,
	"shuffle":         rsShuffle,
	"seed":            rsSeed,
}

// Attr returns the generator's methods.
func (r *RandomState) Attr(name string) (starlark.Value, error) {
	if m, ok := randomMethods[name]; ok {
		return NewBuiltin(name, m).BindReceiver(r), nil
	}
	return nil, nil
}

// AttrNames lists the methods.
func (r *RandomState) AttrNames() []string {
	return []string{"binomial", "normal", "permutation", "rand", "randint", "randn", "random_sample", "seed", "shuffle", "standard_normal", "uniform"}
}

func rng(b *starlark.Builtin) *numpyrand.RandomState { return b.Receiver().(*RandomState).R }

// SeedRandom makes or reseeds a generator from an int or a list of ints.
func SeedRandom(r *numpyrand.RandomState, v starlark.Value) (*numpyrand.RandomState, error) {
	toU32 := func(x starlark.Value) (uint32, error) {
		i, ok := x.(starlark.Int)
		if !ok {
			return 0, fmt.Errorf("got %s, want an int", x.Type())
		}
		n, ok := i.Int64()
		if !ok || n < 0 || n > math.MaxUint32 {
			return 0, fmt.Errorf("seed must be between 0 and 2**32 - 1, got %v", x)
		}
		return uint32(n), nil
	}
	if v == starlark.None {
		return nil, fmt.Errorf("a seed is required: scripts are deterministic, so there is no seeding from the clock")
	}
	if items, ok := Elems(v); ok {
		if len(items) == 0 {
			return nil, fmt.Errorf("seed must be non-empty")
		}
		key := make([]uint32, len(items))
		for i, it := range items {
			k, err := toU32(it)
			if err != nil {
				return nil, err
			}
			key[i] = k
		}
		if r == nil {
			return numpyrand.NewFromArray(key), nil
		}
		r.SeedArray(key)
		return r, nil
	}
	s, err := toU32(v)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return numpyrand.New(s), nil
	}
	r.Seed(s)
	return r, nil
}

func rsSeed(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seed starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "seed", &seed); err != nil {
		return nil, err
	}
	if _, err := SeedRandom(rng(b), seed); err != nil {
		return nil, fmt.Errorf("seed: %v", err)
	}
	return starlark.None, nil
}

// SizeArg unpacks numpy's size argument: None (one number), an int or a
// shape.
type SizeArg struct{ Shape []int }

// Unpack implements starlark.Unpacker.
func (s *SizeArg) Unpack(v starlark.Value) error {
	if v == starlark.None {
		s.Shape = nil
		return nil
	}
	var sh ShapeArg
	if err := sh.Unpack(v); err != nil {
		return err
	}
	s.Shape = sh.Shape
	if s.Shape == nil {
		s.Shape = []int{}
	}
	return nil
}

// draw makes one number (nil shape) or an array of shape filled by f.
func draw(thread *starlark.Thread, b *starlark.Builtin, shape []int, dt nd.DType, f func() float64) (starlark.Value, error) {
	if shape == nil {
		return NumberValue(dt, f()), nil
	}
	a, err := NewArray(thread, dt, shape)
	if err != nil {
		return nil, err
	}
	for i, n := 0, a.Size(); i < n; i++ {
		a.SetFlat(i, f())
	}
	return FromArray(a), nil
}

func rsSample(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var size SizeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "size?", &size); err != nil {
		return nil, err
	}
	r := rng(b)
	f := r.RandomSample
	if b.Name() == "standard_normal" {
		f = r.StandardNormal
	}
	return draw(thread, b, size.Shape, nd.Float64, f)
}

func rsShaped(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword arguments", b.Name())
	}
	var shape []int
	if len(args) > 0 {
		var err error
		if shape, err = AsInts(args); err != nil {
			return nil, fmt.Errorf("%s: dimensions must be ints", b.Name())
		}
	}
	r := rng(b)
	f := r.RandomSample
	if b.Name() == "randn" {
		f = r.StandardNormal
	}
	return draw(thread, b, shape, nd.Float64, f)
}

func rsUniform(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	low, high := FloatArg(0), FloatArg(1)
	var size SizeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "low?", &low, "high?", &high, "size?", &size); err != nil {
		return nil, err
	}
	if d := float64(high) - float64(low); math.IsInf(d, 0) || math.IsNaN(d) {
		return nil, fmt.Errorf("uniform: high - low is not finite")
	}
	r := rng(b)
	return draw(thread, b, size.Shape, nd.Float64, func() float64 { return r.Uniform(float64(low), float64(high)) })
}

func rsNormal(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	loc, scale := FloatArg(0), FloatArg(1)
	var size SizeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "loc?", &loc, "scale?", &scale, "size?", &size); err != nil {
		return nil, err
	}
	if math.Signbit(float64(scale)) && !math.IsNaN(float64(scale)) {
		return nil, fmt.Errorf("normal: scale < 0")
	}
	r := rng(b)
	return draw(thread, b, size.Shape, nd.Float64, func() float64 { return r.Normal(float64(loc), float64(scale)) })
}

func rsRandint(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var low int64
	var highV starlark.Value = starlark.None
	var size SizeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "low", &low, "high?", &highV, "size?", &size); err != nil {
		return nil, err
	}
	var high int64
	if highV == starlark.None {
		low, high = 0, low
	} else if err := starlark.AsInt(IndexValue(highV), &high); err != nil {
		return nil, fmt.Errorf("randint: high: %v", err)
	}
	if low >= high {
		return nil, fmt.Errorf("randint: low >= high (%d >= %d)", low, high)
	}
	r := rng(b)
	return draw(thread, b, size.Shape, nd.Int64, func() float64 { return float64(r.Randint(low, high)) })
}

func rsBinomial(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var n int64
	var p FloatArg
	var size SizeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "n", &n, "p", &p, "size?", &size); err != nil {
		return nil, err
	}
	if n < 0 || !(p >= 0 && p <= 1) {
		return nil, fmt.Errorf("binomial: want n >= 0 and 0 <= p <= 1, got n=%d, p=%v", n, float64(p))
	}
	r := rng(b)
	return draw(thread, b, size.Shape, nd.Int64, func() float64 { return float64(r.Binomial(n, float64(p))) })
}

func rsPermutation(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x); err != nil {
		return nil, err
	}
	r := rng(b)
	if _, ok := x.(starlark.Int); ok {
		var n int
		if err := starlark.AsInt(IndexValue(x), &n); err != nil {
			return nil, fmt.Errorf("permutation: %v", err)
		}
		// The result, then Permutation's own []int of n: both checked
		// before either is made (permutation(1 << 40) was a fatal out
		// of memory).
		a, err := NewArray(thread, nd.Int64, []int{max(n, 0)})
		if err != nil {
			return nil, fmt.Errorf("permutation: %w", err)
		}
		if err := nd.CheckBudget(nd.Int64, []int{max(n, 0)}); err != nil {
			return nil, fmt.Errorf("permutation: %w", err)
		}
		p := r.Permutation(n)
		for i, v := range p {
			a.I64()[i] = int64(v)
		}
		return FromArray(a), nil
	}
	a, err := ToArray(x, nil)
	if err != nil {
		return nil, fmt.Errorf("permutation: %v", err)
	}
	if a.NDim() == 0 {
		return nil, fmt.Errorf("permutation: x must be an int or have at least one axis")
	}
	idx := make([]int, a.Shape[0])
	for i := range idx {
		idx[i] = i
	}
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	return FromArray(a.Take(idx)), nil
}

func rsShuffle(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x); err != nil {
		return nil, err
	}
	l, ok := x.(*starlark.List)
	if !ok {
		if _, isArray := x.(*Array); isArray {
			return nil, fmt.Errorf("shuffle: arrays cannot be changed in place here; use rng.permutation(a)")
		}
		return nil, fmt.Errorf("shuffle: got %s, want a list", x.Type())
	}
	if l.Len() > 0 {
		if err := l.SetIndex(0, l.Index(0)); err != nil {
			return nil, fmt.Errorf("shuffle: %v", err) // frozen: draw nothing
		}
	}
	var err error
	rng(b).Shuffle(l.Len(), func(i, j int) {
		if err != nil {
			return
		}
		xi, xj := l.Index(i), l.Index(j)
		if err = l.SetIndex(i, xj); err == nil {
			err = l.SetIndex(j, xi)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("shuffle: %v", err)
	}
	return starlark.None, nil
}
