package starlib

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// RandomStreams is Theano's random streams as a Starlark value: kind
// "MRG_RandomStreams" (theano.sandbox.rng_mrg) or "RandomStreams"
// (theano.tensor.shared_randomstreams), both drawing as core.RandomStreams
// does. Its methods (normal, uniform, binomial, multinomial) return
// symbolic variables holding fresh draws at every call of a compiled
// function. Drawing changes the streams' state even when the value is
// frozen.
type RandomStreams struct {
	S    *core.RandomStreams
	Kind string
}

var (
	_ starlark.HasAttrs   = (*RandomStreams)(nil)
	_ starlark.Comparable = (*RandomStreams)(nil)
)

// Theano's defaults: MRG_RandomStreams(seed=12345); RandomStreams(seed=None)
// seeds from the clock in Theano, here from Blocks' default_seed.
const (
	mrgDefaultSeed     = 12345
	streamsDefaultSeed = 1
	// mrgM2 is Theano's M2: an MRG seed must be below it.
	mrgM2 = 2147462579
)

// NewRandomStreams makes a stream of kind ("MRG_RandomStreams" or
// "RandomStreams") from a Starlark seed (None: the kind's default) and
// records it in the thread's run, whose checkpoints save its draws'
// generators.
func NewRandomStreams(thread *starlark.Thread, kind string, seed starlark.Value) (*RandomStreams, error) {
	s := int64(streamsDefaultSeed)
	if kind == "MRG_RandomStreams" {
		s = mrgDefaultSeed
	}
	if seed != nil && seed != starlark.None {
		if _, isList := Elems(seed); isList {
			return nil, fmt.Errorf("%s: seed must be one int here (Theano's list of 6 ints is MRG31k3p's own state)", kind)
		}
		if err := starlark.AsInt(IndexValue(seed), &s); err != nil {
			return nil, fmt.Errorf("%s: seed: got %s, want an int", kind, seed.Type())
		}
	}
	switch {
	case kind == "MRG_RandomStreams" && s == 0:
		return nil, fmt.Errorf("%s: ValueError: seed should not be 0", kind)
	case kind == "MRG_RandomStreams" && s >= mrgM2:
		return nil, fmt.Errorf("%s: ValueError: seed should be less than %d, got %d", kind, mrgM2, s)
	case s < 0 || s > math.MaxUint32:
		return nil, fmt.Errorf("%s: seed must be between 0 and 2**32 - 1, got %d", kind, s)
	}
	r := &RandomStreams{S: core.NewRandomStreams(uint32(s)), Kind: kind}
	if st := state(thread); st != nil {
		st.mu.Lock()
		st.streams = append(st.streams, r.S)
		st.mu.Unlock()
	}
	return r, nil
}

// RandomStreamsOf lists the random streams the thread's run has made, in
// order (for checkpoints: checkpoint.Bindings.RandomStreams).
func RandomStreamsOf(thread *starlark.Thread) []*core.RandomStreams {
	st := state(thread)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]*core.RandomStreams(nil), st.streams...)
}

// RandomStreamsConstructor is the builtin MRG_RandomStreams(seed=12345) or
// RandomStreams(seed=None).
func RandomStreamsConstructor(kind string) *starlark.Builtin {
	return NewBuiltin(kind, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var seed starlark.Value = starlark.None
		if err := starlark.UnpackArgs(kind, args, kwargs, "seed?", &seed); err != nil {
			return nil, err
		}
		return NewRandomStreams(thread, kind, seed)
	})
}

func (r *RandomStreams) String() string {
	return fmt.Sprintf("<%s seed=%d>", r.Kind, r.S.DefaultSeed())
}
func (r *RandomStreams) Type() string          { return r.Kind }
func (r *RandomStreams) Freeze()               {}
func (r *RandomStreams) Truth() starlark.Bool  { return true }
func (r *RandomStreams) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: %s", r.Kind) }

var streamsMethods = map[string]BuiltinFunc{
	"normal":      streamsNormal,
	"uniform":     streamsUniform,
	"binomial":    streamsBinomial,
	"multinomial": streamsMultinomial,
	"seed":        streamsSeed,
	"updates":     streamsUpdates,
}

// Attr returns the methods and default_instance_seed.
func (r *RandomStreams) Attr(name string) (starlark.Value, error) {
	if m, ok := streamsMethods[name]; ok {
		return NewBuiltin(name, m).BindReceiver(r), nil
	}
	if name == "default_instance_seed" {
		return starlark.MakeUint64(uint64(r.S.DefaultSeed())), nil
	}
	return nil, nil
}

// AttrNames lists the methods and attributes.
func (r *RandomStreams) AttrNames() []string {
	return []string{"binomial", "default_instance_seed", "multinomial", "normal", "seed", "uniform", "updates"}
}

func streamsOf(b *starlark.Builtin) *RandomStreams { return b.Receiver().(*RandomStreams) }

// drawParam is a distribution parameter: a constant number, or a variable
// (V != nil) combined with a standard draw in the graph.
type drawParam struct {
	c float64
	v *core.Variable
}

func readDrawParam(thread *starlark.Thread, fname, name string, v starlark.Value) (drawParam, error) {
	switch x := v.(type) {
	case starlark.Int, starlark.Float:
		f, _ := starlark.AsFloat(x)
		return drawParam{c: f}, nil
	case starlark.Bool:
		if x {
			return drawParam{c: 1}, nil
		}
		return drawParam{}, nil
	}
	cv, err := AsVariable(thread, v)
	if err != nil {
		return drawParam{}, fmt.Errorf("%s: %s: %v", fname, name, err)
	}
	if cv.IsConstant() && cv.NDim() == 0 {
		return drawParam{c: cv.Value().Flat(0)}, nil
	}
	return drawParam{v: cv}, nil
}

// drawSize reads size (None: the shape of the variable parameters, or a
// 0-d draw when all are numbers) and checks it against ndim.
func drawSize(fname string, size, ndim starlark.Value, params ...drawParam) ([]*core.Variable, error) {
	var dims []*core.Variable
	n := 0
	if size == nil || size == starlark.None {
		var widest *core.Variable
		for _, p := range params {
			if p.v != nil && (widest == nil || p.v.NDim() > widest.NDim()) {
				widest = p.v
			}
		}
		if widest != nil && widest.NDim() > 0 {
			dims, n = []*core.Variable{core.ShapeOf(widest)}, widest.NDim()
		}
	} else {
		var err error
		if dims, err = ShapeDims(fname, size); err != nil {
			return nil, err
		}
		n = len(dims)
		if len(dims) == 1 && dims[0].NDim() == 1 {
			n = -1 // a shape vector: core checks its length
		}
	}
	if ndim != nil && ndim != starlark.None {
		var want int
		if err := starlark.AsInt(IndexValue(ndim), &want); err != nil {
			return nil, fmt.Errorf("%s: ndim: got %s, want an int", fname, ndim.Type())
		}
		if n >= 0 && want != n {
			return nil, fmt.Errorf("%s: ndim=%d but the size has %d dimensions", fname, want, n)
		}
	}
	return dims, nil
}

// drawDType is the dtype of a draw: dtype when given, else def (nil:
// floatX upcast with the variable parameters' float dtypes, as Theano's
// scal.upcast(floatX, avg.dtype, std.dtype)).
func drawDType(thread *starlark.Thread, dt DTypeArg, def *nd.DType, params ...drawParam) nd.DType {
	if p := dt.Get(thread); p != nil {
		return *p
	}
	if def != nil {
		return *def
	}
	out := FloatX(thread)
	for _, p := range params {
		if p.v != nil && p.v.DType() == nd.Float64 {
			out = nd.Float64
		}
	}
	return out
}

// affine is a + scale * x with a and scale cast to x's dtype (a constant
// 0 or 1 is left out).
func affine(x *core.Variable, a, scale drawParam) *core.Variable {
	dt := x.DType()
	param := func(p drawParam) *core.Variable {
		if p.v != nil {
			return core.Cast(p.v, dt)
		}
		return core.Const(dt, p.c)
	}
	if scale.v != nil || scale.c != 1 {
		x = core.Mul(param(scale), x)
	}
	if a.v != nil || a.c != 0 {
		x = core.Add(param(a), x)
	}
	return x
}

// ignoredDrawKwargs drops Theano's MRG arguments that choose how its
// generator is parallelized (nstreams): they do not change what a draw
// here is.
func ignoredDrawKwargs(kwargs []starlark.Tuple) []starlark.Tuple {
	out := kwargs[:0:0]
	for _, kv := range kwargs {
		if s, _ := starlark.AsString(kv[0]); s == "nstreams" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// streamsNormal is normal(size=None, avg=0.0, std=1.0, ndim=None,
// dtype=None): numpy's normal(avg, std) for numbers; for variables,
// avg + std * normal(0, 1) in the graph (so gradients reach avg and std).
func streamsNormal(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r := streamsOf(b)
	var size, ndim starlark.Value
	var avgV, stdV starlark.Value = starlark.Float(0), starlark.Float(1)
	var dt DTypeArg
	var truncate bool
	if err := starlark.UnpackArgs("normal", args, ignoredDrawKwargs(kwargs), "size?", &size, "avg?", &avgV, "std?", &stdV, "ndim?", &ndim, "dtype?", &dt, "truncate?", &truncate); err != nil {
		return nil, err
	}
	if truncate {
		return nil, fmt.Errorf("normal: truncate=True (MRG's truncated normal) is not provided")
	}
	avg, err := readDrawParam(thread, "normal", "avg", avgV)
	if err != nil {
		return nil, err
	}
	std, err := readDrawParam(thread, "normal", "std", stdV)
	if err != nil {
		return nil, err
	}
	dims, err := drawSize("normal", size, ndim, avg, std)
	if err != nil {
		return nil, err
	}
	dtype := drawDType(thread, dt, nil, avg, std)
	if avg.v == nil && std.v == nil {
		return drawVariable(thread, "normal", r, core.DistNormal, avg.c, std.c, dtype, dims)
	}
	eps, err := r.S.Draw(core.DistNormal, 0, 1, dtype, dims)
	if err != nil {
		return nil, fmt.Errorf("normal: %v", err)
	}
	SetTrace(thread, eps)
	return NewVariable(thread, affine(eps, avg, std)), nil
}

// streamsUniform is uniform(size=None, low=0.0, high=1.0, ndim=None,
// dtype=None): numpy's uniform(low, high) for numbers; for variables,
// low + (high - low) * uniform(0, 1) in the graph.
func streamsUniform(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r := streamsOf(b)
	var size, ndim starlark.Value
	var lowV, highV starlark.Value = starlark.Float(0), starlark.Float(1)
	var dt DTypeArg
	if err := starlark.UnpackArgs("uniform", args, ignoredDrawKwargs(kwargs), "size?", &size, "low?", &lowV, "high?", &highV, "ndim?", &ndim, "dtype?", &dt); err != nil {
		return nil, err
	}
	low, err := readDrawParam(thread, "uniform", "low", lowV)
	if err != nil {
		return nil, err
	}
	high, err := readDrawParam(thread, "uniform", "high", highV)
	if err != nil {
		return nil, err
	}
	dims, err := drawSize("uniform", size, ndim, low, high)
	if err != nil {
		return nil, err
	}
	dtype := drawDType(thread, dt, nil, low, high)
	if low.v == nil && high.v == nil {
		return drawVariable(thread, "uniform", r, core.DistUniform, low.c, high.c, dtype, dims)
	}
	u, err := r.S.Draw(core.DistUniform, 0, 1, dtype, dims)
	if err != nil {
		return nil, fmt.Errorf("uniform: %v", err)
	}
	SetTrace(thread, u)
	lo := low.v
	if lo == nil {
		lo = core.Const(dtype, low.c)
	}
	hi := high.v
	if hi == nil {
		hi = core.Const(dtype, high.c)
	}
	width := drawParam{v: core.Sub(core.Cast(hi, dtype), core.Cast(lo, dtype))}
	return NewVariable(thread, affine(u, drawParam{v: lo}, width)), nil
}

// streamsBinomial is binomial(size=None, n=1, p=0.5, ndim=None,
// dtype='int64'): numpy's binomial(n, p) for a number p; for a variable p
// (n = 1), uniform(0, 1) < p cast to dtype, as Theano's MRG draws it.
func streamsBinomial(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r := streamsOf(b)
	var size, ndim, prob starlark.Value
	var pV starlark.Value = starlark.Float(0.5)
	var n int = 1
	dt := DTypeArg{Name: "int64", dt: nd.Int64}
	if err := starlark.UnpackArgs("binomial", args, ignoredDrawKwargs(kwargs), "size?", &size, "n?", &n, "p?", &pV, "ndim?", &ndim, "dtype?", &dt, "prob?", &prob); err != nil {
		return nil, err
	}
	if prob != nil && prob != starlark.None {
		pV = prob // Theano's deprecated name
	}
	p, err := readDrawParam(thread, "binomial", "p", pV)
	if err != nil {
		return nil, err
	}
	dims, err := drawSize("binomial", size, ndim, p)
	if err != nil {
		return nil, err
	}
	int64DT := nd.Int64
	dtype := drawDType(thread, dt, &int64DT)
	if p.v == nil {
		return drawVariable(thread, "binomial", r, core.DistBinomial, float64(n), p.c, dtype, dims)
	}
	if n != 1 {
		return nil, fmt.Errorf("binomial: with a symbolic p, n must be 1 (as MRG_RandomStreams.binomial), got %d", n)
	}
	u, err := r.S.Draw(core.DistUniform, 0, 1, FloatX(thread), dims)
	if err != nil {
		return nil, fmt.Errorf("binomial: %v", err)
	}
	SetTrace(thread, u)
	return NewVariable(thread, core.Cast(core.LT(u, core.Cast(p.v, u.DType())), dtype)), nil
}

// streamsMultinomial is multinomial(size=None, n=1, pvals=None, ndim=None,
// dtype='int64'): counts of n draws from each distribution of pvals (its
// last axis), shaped like pvals without a size (MRG's form: one row per
// row of pvals), size + (k,) with one (RandomStreams' form).
func streamsMultinomial(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r := streamsOf(b)
	var size, ndim, pvalsV starlark.Value
	var n int = 1
	dt := DTypeArg{Name: "int64", dt: nd.Int64}
	if err := starlark.UnpackArgs("multinomial", args, ignoredDrawKwargs(kwargs), "size?", &size, "n?", &n, "pvals?", &pvalsV, "ndim?", &ndim, "dtype?", &dt); err != nil {
		return nil, err
	}
	if pvalsV == nil || pvalsV == starlark.None {
		if r.Kind == "MRG_RandomStreams" {
			return nil, fmt.Errorf("multinomial: TypeError: You have to specify pvals")
		}
		pvalsV = starlark.Tuple{starlark.Float(0.5), starlark.Float(0.5)}
	}
	pvals, err := AsVariable(thread, pvalsV)
	if err != nil {
		return nil, fmt.Errorf("multinomial: pvals: %v", err)
	}
	var dims []*core.Variable
	if size != nil && size != starlark.None {
		if dims, err = drawSize("multinomial", size, ndim); err != nil {
			return nil, err
		}
		if dims == nil {
			dims = []*core.Variable{}
		}
	} else if ndim != nil && ndim != starlark.None {
		var want int
		if err := starlark.AsInt(IndexValue(ndim), &want); err != nil {
			return nil, fmt.Errorf("multinomial: ndim: got %s, want an int", ndim.Type())
		}
		if want != pvals.NDim()-1 {
			return nil, fmt.Errorf("multinomial: ndim=%d but pvals has %d dimensions (the draw has ndim + 1)", want, pvals.NDim())
		}
	}
	int64DT := nd.Int64
	v, err := r.S.Multinomial(int64(n), pvals, drawDType(thread, dt, &int64DT), dims)
	if err != nil {
		return nil, fmt.Errorf("multinomial: %v", err)
	}
	return NewVariable(thread, v), nil
}

func drawVariable(thread *starlark.Thread, fname string, r *RandomStreams, dist core.Distribution, a, b float64, dt nd.DType, dims []*core.Variable) (starlark.Value, error) {
	v, err := r.S.Draw(dist, a, b, dt, dims)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fname, err)
	}
	return NewVariable(thread, v), nil
}

// streamsSeed is Theano's seed(seed=None): every draw made so far starts
// again from a generator seeded from seed (None: the stream's own seed).
func streamsSeed(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r := streamsOf(b)
	var seed starlark.Value = starlark.None
	if err := starlark.UnpackArgs("seed", args, kwargs, "seed?", &seed); err != nil {
		return nil, err
	}
	s := int64(r.S.DefaultSeed())
	if seed != starlark.None {
		if err := starlark.AsInt(IndexValue(seed), &s); err != nil || s < 0 || s > math.MaxUint32 {
			return nil, fmt.Errorf("seed: want an int between 0 and 2**32 - 1, got %s", seed.String())
		}
	}
	r.S.Reseed(uint32(s))
	return starlark.None, nil
}

// streamsUpdates is Theano's updates(): the draws' state updates, which a
// script passes to theano.function. Here a draw advances its generator by
// itself at every call, so the list is empty.
func streamsUpdates(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs("updates", args, kwargs); err != nil {
		return nil, err
	}
	return starlark.NewList(nil), nil
}

// CompareSameType: two values are equal when they are the same streams
// (a brick's theano_rng is the same at every read).
func (r *RandomStreams) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	same := r.S == y.(*RandomStreams).S
	switch op {
	case syntax.EQL:
		return same, nil
	case syntax.NEQ:
		return !same, nil
	}
	return false, fmt.Errorf("%s %s %s not supported", r.Kind, op, y.Type())
}
