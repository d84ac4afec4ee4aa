package numpy

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

func numpyModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "numpy", Members: Module.Members})
	mods = append(mods, &starlarkstruct.Module{Name: "numpy.random", Members: RandomModule.Members})
	return
}

// Module is the Starlark module numpy: the small part of numpy
// scripts use to build toy data and check results. Arrays are ndarray
// values (see Array); a, b, x may also be numbers or nested lists.
// Arguments named dtype take a dtype name ("float32", "int64", ...,
// "floatX") or one of the names below.
//
//	array(object, dtype=None) - a new array from an array, a number or
//	    nested lists (numpy's dtype inference: float64 if any float, else
//	    int64, else bool).
//	asarray(a, dtype=None) - the same without copying an array.
//	zeros(shape, dtype="float64"), ones(shape, dtype="float64") - shape an
//	    int or a tuple.
//	zeros_like(a, dtype=None), ones_like(a, dtype=None).
//	eye(N, M=None, k=0, dtype="float64") - ones on the k-th diagonal of an
//	    N x M (N x N) array, zeros elsewhere.
//	arange(start, stop=None, step=1, dtype=None) - evenly spaced values in
//	    [start, stop) (arange(n) is 0..n-1); int64 unless a bound is a float.
//	transpose(a, axes=None) - the axes reversed, or permuted as axes says.
//	linspace(start, stop, num=50, endpoint=True, dtype=None) - num evenly
//	    spaced float64 values.
//	float32, float64, int64, int32, uint8, int16, uint16, int8, bool_ -
//	    dtype names (strings).
//	sum(a, axis=None, keepdims=False), mean, max, min, prod, std(..., ddof=0),
//	    var(..., ddof=0), all, any
//	    - as the array methods: a full reduction gives a number.
//	argmax(a, axis=None), argmin(a, axis=None).
//	isnan(x), isinf(x), isfinite(x) - elementwise tests (a bool for a
//	    number).
//	exp(x), log(x), sqrt(x), tanh(x), abs(x), sin(x), cos(x) - elementwise
//	    (a number for a number).
//	maximum(a, b), minimum(a, b) - elementwise, broadcasting.
//	dot(a, b) - matrix product of 1-d and 2-d arrays.
//	reshape(a, shape), transpose(a) - as the methods.
//	concatenate(arrays, axis=0) - join a list of arrays along an axis.
//	allclose(a, b, rtol=1e-05, atol=1e-08) - whether |a - b| <= atol +
//	    rtol*|b| everywhere (broadcasting; NaNs are never close).
//	array_equal(a, b) - same shape and values.
//	cast - numpy.cast: cast[dtype](x) is x as an array of dtype (cast[theano.config.floatX](lr)).
//	pi, e, nan, inf - the constants.
//	random - the numpy.random module.
var Module = &starlarkstruct.Module{
	Name: "numpy",
	Members: starlark.StringDict{
		"array":       starlib.NewBuiltin("array", npArray),
		"asarray":     starlib.NewBuiltin("asarray", npArray),
		"zeros":       starlib.NewBuiltin("zeros", npFill(0)),
		"ones":        starlib.NewBuiltin("ones", npFill(1)),
		"zeros_like":  starlib.NewBuiltin("zeros_like", npFillLike(0)),
		"eye":         starlib.NewBuiltin("eye", npEye),
		"ones_like":   starlib.NewBuiltin("ones_like", npFillLike(1)),
		"arange":      starlib.NewBuiltin("arange", npArange),
		"linspace":    starlib.NewBuiltin("linspace", npLinspace),
		"sum":         npReduce("sum"),
		"mean":        npReduce("mean"),
		"max":         npReduce("max"),
		"min":         npReduce("min"),
		"prod":        npReduce("prod"),
		"std":         npReduce("std"),
		"var":         npReduce("var"),
		"all":         npReduce("all"),
		"any":         npReduce("any"),
		"isnan":       npPredicate("isnan", math.IsNaN),
		"isinf":       npPredicate("isinf", func(x float64) bool { return math.IsInf(x, 0) }),
		"isfinite":    npPredicate("isfinite", func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }),
		"nan":         starlark.Float(math.NaN()),
		"inf":         starlark.Float(math.Inf(1)),
		"argmax":      npArg("argmax"),
		"argmin":      npArg("argmin"),
		"exp":         npUnary("exp", math.Exp),
		"log":         npUnary("log", math.Log),
		"sqrt":        npUnary("sqrt", math.Sqrt),
		"tanh":        npUnary("tanh", math.Tanh),
		"sin":         npUnary("sin", math.Sin),
		"cos":         npUnary("cos", math.Cos),
		"abs":         npUnary("abs", math.Abs),
		"maximum":     npBinary("maximum", core.Maximum),
		"minimum":     npBinary("minimum", core.Minimum),
		"dot":         starlib.NewBuiltin("dot", npDot),
		"reshape":     starlib.NewBuiltin("reshape", npReshape),
		"transpose":   starlib.NewBuiltin("transpose", npTranspose),
		"concatenate": starlib.NewBuiltin("concatenate", npConcatenate),
		"allclose":    starlib.NewBuiltin("allclose", npAllclose),
		"array_equal": starlib.NewBuiltin("array_equal", npArrayEqual),
		"cast":        npCastTable(),
		"float32":     starlark.String("float32"),
		"float64":     starlark.String("float64"),
		"int64":       starlark.String("int64"),
		"int32":       starlark.String("int32"),
		"uint8":       starlark.String("uint8"),
		"int16":       starlark.String("int16"),
		"uint16":      starlark.String("uint16"),
		"int8":        starlark.String("int8"),
		"bool_":       starlark.String("bool"),
		"pi":          starlark.Float(math.Pi),
		"e":           starlark.Float(math.E),
	},
}

// RandomModule is the Starlark module numpy.random: numpy's legacy
// RandomState, bit for bit (the same seed gives the same numbers as
// numpy). There is no global generator: scripts are deterministic, so
// every generator has an explicit seed.
//
//	RandomState(seed) - a generator; seed an int in [0, 2**32) or a list of
//	    them. Its methods (size: None for one number, an int or a shape
//	    tuple for a float64 array; int64 for randint and permutation):
//	    rng.random_sample(size=None) - uniform in [0, 1).
//	    rng.rand(*shape), rng.randn(*shape) - uniform, standard normal.
//	    rng.uniform(low=0.0, high=1.0, size=None)
//	    rng.normal(loc=0.0, scale=1.0, size=None)
//	    rng.standard_normal(size=None)
//	    rng.randint(low, high=None, size=None) - ints in [low, high), or
//	        [0, low) without high.
//	    rng.binomial(n, p, size=None)
//	    rng.permutation(x) - a shuffled arange(x) for an int, else a copy of
//	        the array or list x with its first axis shuffled.
//	    rng.shuffle(x) - shuffle the list x in place (arrays are immutable
//	        here: use permutation).
//	    rng.seed(seed) - reseed.
var RandomModule = &starlarkstruct.Module{
	Name: "numpy.random",
	Members: starlark.StringDict{
		"RandomState": starlib.NewBuiltin("RandomState", npRandomState),
	},
}

func npArray(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var obj starlark.Value
	var dt starlib.DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "object", &obj, "dtype??", &dt); err != nil {
		return nil, err
	}
	a, err := starlib.ToArray(obj, dt.Get(thread))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	if b.Name() == "array" && a == starlib.ValueArray(obj) {
		a = a.Copy()
	}
	return starlib.FromArray(a), nil
}

// npCastTable is numpy.cast: a frozen dict from each dtype name to a
// function of one argument converting it to an array of that dtype, as
// astype converts (a float to an int truncates).
func npCastTable() *starlark.Dict {
	names := []string{"float32", "float64", "int64", "int32", "uint8", "int16", "uint16", "int8", "bool"}
	d := starlark.NewDict(len(names))
	for _, name := range names {
		var dt starlib.DTypeArg
		if err := dt.Unpack(starlark.String(name)); err != nil {
			panic(err) // a name of the list above
		}
		to := *dt.Get(nil)
		_ = d.SetKey(starlark.String(name), starlib.NewBuiltin("cast["+name+"]", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x starlark.Value
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
				return nil, err
			}
			a, err := starlib.ToArray(x, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", b.Name(), err)
			}
			return starlib.FromArray(a.Astype(to)), nil
		}))
	}
	d.Freeze()
	return d
}

func npFill(c float64) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var shape starlib.ShapeArg
		var dt starlib.DTypeArg
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shape, "dtype??", &dt); err != nil {
			return nil, err
		}
		d := nd.Float64
		if p := dt.Get(thread); p != nil {
			d = *p
		}
		a, err := filled(thread, d, shape.Shape, c)
		if err != nil {
			return nil, err
		}
		return starlib.FromArray(a), nil
	}
}

func filled(thread *starlark.Thread, dt nd.DType, shape []int, c float64) (*nd.Array, error) {
	a, err := starlib.NewArray(thread, dt, shape)
	if err != nil {
		return nil, err
	}
	if c != 0 {
		for i, n := 0, a.Size(); i < n; i++ {
			a.SetFlat(i, c)
		}
	}
	return a, nil
}

func npEye(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var n, k int
	var mV starlark.Value = starlark.None
	var dt starlib.DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "N", &n, "M?", &mV, "k?", &k, "dtype??", &dt); err != nil {
		return nil, err
	}
	m := n
	if mV != starlark.None {
		if err := starlark.AsInt(starlib.IndexValue(mV), &m); err != nil {
			return nil, fmt.Errorf("eye: M: got %s, want an int or None", mV.Type())
		}
	}
	if n < 0 || m < 0 {
		return nil, fmt.Errorf("eye: negative dimensions are not allowed: (%d, %d)", n, m)
	}
	d := nd.Float64
	if p := dt.Get(thread); p != nil {
		d = *p
	}
	a, err := filled(thread, d, []int{n, m}, 0)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		if j := i + k; j >= 0 && j < m {
			a.SetFlat(i*m+j, 1)
		}
	}
	return starlib.FromArray(a), nil
}

func npFillLike(c float64) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x starlark.Value
		var dt starlib.DTypeArg
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &x, "dtype??", &dt); err != nil {
			return nil, err
		}
		a, err := starlib.ToArray(x, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		d := a.DType()
		if p := dt.Get(thread); p != nil {
			d = *p
		}
		r, err := filled(thread, d, a.Shape, c)
		if err != nil {
			return nil, err
		}
		return starlib.FromArray(r), nil
	}
}

func npArange(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var start, stop, step starlark.Value = nil, starlark.None, starlark.MakeInt(1)
	var dt starlib.DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "start", &start, "stop?", &stop, "step?", &step, "dtype??", &dt); err != nil {
		return nil, err
	}
	if stop == starlark.None {
		start, stop = starlark.MakeInt(0), start
	}
	isFloat := false
	var v [3]float64
	for i, x := range []starlark.Value{start, stop, step} {
		f, ok := starlark.AsFloat(x)
		if !ok {
			return nil, fmt.Errorf("arange: got %s, want a number", x.Type())
		}
		if _, ok := x.(starlark.Float); ok {
			isFloat = true
		}
		v[i] = f
	}
	if v[2] == 0 {
		return nil, fmt.Errorf("arange: step must not be zero")
	}
	count := math.Ceil((v[1] - v[0]) / v[2])
	if math.IsNaN(count) || count > math.MaxInt32*float64(1<<20) {
		return nil, fmt.Errorf("arange: (%v - %v) / %v elements are more than an array can hold", v[1], v[0], v[2])
	}
	n := max(int(count), 0)
	d := nd.Int64
	if isFloat {
		d = nd.Float64
	}
	if p := dt.Get(thread); p != nil {
		d = *p
	}
	a, err := starlib.NewArray(thread, d, []int{n})
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		a.SetFlat(i, v[0]+float64(i)*v[2])
	}
	return starlib.FromArray(a), nil
}

func npLinspace(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var start, stop starlib.FloatArg
	num := 50
	endpoint := true
	var dt starlib.DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "start", &start, "stop", &stop, "num?", &num, "endpoint?", &endpoint, "dtype??", &dt); err != nil {
		return nil, err
	}
	if num < 0 {
		return nil, fmt.Errorf("linspace: num must not be negative, got %d", num)
	}
	div := num
	if endpoint {
		div = num - 1
	}
	a, err := starlib.NewArray(thread, nd.Float64, []int{num})
	if err != nil {
		return nil, err
	}
	x := a.F64()
	step := (float64(stop) - float64(start)) / float64(max(div, 1))
	for i := range x {
		x[i] = float64(start) + float64(i)*step
	}
	if endpoint && num > 1 {
		x[num-1] = float64(stop)
	}
	if p := dt.Get(thread); p != nil && *p != nd.Float64 {
		a = a.Astype(*p)
	}
	return starlib.FromArray(a), nil
}

// arrayArg converts an argument to an array, naming it in errors.
func arrayParam(fname, param string, v starlark.Value) (*nd.Array, error) {
	a, err := starlib.ToArray(v, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: for parameter %s: %v", fname, param, err)
	}
	return a, nil
}

// unaryArg unpacks the one argument x of builtin name, as given and as an
// array.
func unaryArg(name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, *nd.Array, error) {
	var x starlark.Value
	if err := starlark.UnpackArgs(name, args, kwargs, "x", &x); err != nil {
		return nil, nil, err
	}
	a, err := arrayParam(name, "x", x)
	if err != nil {
		return nil, nil, err
	}
	return x, a, nil
}

// arrayPair unpacks the two array arguments p1 and p2 of builtin name.
func arrayPair(name string, args starlark.Tuple, kwargs []starlark.Tuple, p1, p2 string) (a, c *nd.Array, err error) {
	var x, y starlark.Value
	if err := starlark.UnpackArgs(name, args, kwargs, p1, &x, p2, &y); err != nil {
		return nil, nil, err
	}
	if a, err = arrayParam(name, p1, x); err != nil {
		return nil, nil, err
	}
	if c, err = arrayParam(name, p2, y); err != nil {
		return nil, nil, err
	}
	return a, c, nil
}

func npReduce(name string) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x starlark.Value
		var axes starlib.Axes
		var keepdims bool
		var dt starlib.DTypeArg
		ddof := 0
		pairs := []any{"a", &x, "axis?", &axes, "dtype?", &dt, "keepdims?", &keepdims}
		if name == "std" || name == "var" {
			pairs = append(pairs, "ddof?", &ddof)
		}
		if name == "all" || name == "any" {
			pairs = []any{"a", &x, "axis?", &axes, "keepdims?", &keepdims}
		}
		if err := starlark.UnpackArgs(name, args, kwargs, pairs...); err != nil {
			return nil, err
		}
		a, err := arrayParam(name, "a", x)
		if err != nil {
			return nil, err
		}
		if name == "all" || name == "any" {
			return starlib.AllAny(name, a, axes.Axes, keepdims)
		}
		if a, err = starlib.ReduceDType(thread, name, a, dt); err != nil {
			return nil, err
		}
		return starlib.ReduceArray(name, a, axes.Axes, keepdims, ddof)
	})
}

func npArg(name string) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x starlark.Value
		var axis starlib.Axis
		if err := starlark.UnpackArgs(name, args, kwargs, "a", &x, "axis?", &axis); err != nil {
			return nil, err
		}
		a, err := arrayParam(name, "a", x)
		if err != nil {
			return nil, err
		}
		return starlib.ArgArray(name, a, axis.Axis)
	})
}

// npUnary applies f elementwise; integer arrays give float64, numbers
// give numbers.
func npUnary(name string, f func(float64) float64) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		x, a, err := unaryArg(name, args, kwargs)
		if err != nil {
			return nil, err
		}
		dt := a.DType()
		switch {
		case dt.IsFloat() || name == "abs" && dt != nd.Bool:
		case dt.Size() <= 2:
			// numpy's float32 for (u)int16, and for bool and (u)int8,
			// whose float16 nd lacks, the next float (as Theano's
			// upgrade_to_float).
			dt = nd.Float32
		default:
			dt = nd.Float64
		}
		out := nd.New(dt, a.Shape...)
		for i, n := 0, a.Size(); i < n; i++ {
			out.SetFlat(i, f(a.Flat(i)))
		}
		if _, isArray := x.(*starlib.Array); !isArray && out.NDim() == 0 {
			return starlib.NumberValue(dt, out.Flat(0)), nil
		}
		return starlib.FromArray(out), nil
	})
}

// npPredicate makes numpy's isnan and its kind: a bool array (a bool for a
// number).
func npPredicate(name string, f func(float64) bool) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		x, a, err := unaryArg(name, args, kwargs)
		if err != nil {
			return nil, err
		}
		out := nd.New(nd.Bool, a.Shape...)
		for i, n := 0, a.Size(); i < n; i++ {
			if f(a.Flat(i)) {
				out.SetFlat(i, 1)
			}
		}
		if _, isArray := x.(*starlib.Array); !isArray && out.NDim() == 0 {
			return starlark.Bool(out.Flat(0) != 0), nil
		}
		return starlib.FromArray(out), nil
	})
}

func npBinary(name string, f func(a, b *core.Variable) *core.Variable) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		a, c, err := arrayPair(name, args, kwargs, "a", "b")
		if err != nil {
			return nil, err
		}
		r, err := starlib.ComputeArray(thread, func() (*core.Variable, error) {
			return f(core.NewConstant(a), core.NewConstant(c)), nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return starlib.FromArray(r), nil
	})
}

func npDot(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a, c, err := arrayPair(b.Name(), args, kwargs, "a", "b")
	if err != nil {
		return nil, err
	}
	r, err := starlib.ComputeArray(thread, func() (*core.Variable, error) {
		return core.Dot(core.NewConstant(a), core.NewConstant(c))
	})
	if err != nil {
		return nil, err
	}
	if r.NDim() == 0 {
		return starlib.NumberValue(r.DType(), r.Flat(0)), nil
	}
	return starlib.FromArray(r), nil
}

func npReshape(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var shape starlib.ShapeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &x, "newshape", &shape); err != nil {
		return nil, err
	}
	a, err := arrayParam("reshape", "a", x)
	if err != nil {
		return nil, err
	}
	r, err := a.Reshape(shape.Shape...)
	if err != nil {
		return nil, fmt.Errorf("reshape: cannot reshape an array of shape %v into shape %v", a.Shape, shape.Shape)
	}
	return starlib.FromArray(r), nil
}

func npTranspose(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, axes starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &x, "axes?", &axes); err != nil {
		return nil, err
	}
	a, err := arrayParam("transpose", "a", x)
	if err != nil {
		return nil, err
	}
	r, err := starlib.TransposeArray(a, axes)
	if err != nil {
		return nil, err
	}
	return &starlib.Array{A: r}, nil
}

func npConcatenate(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seq starlark.Value
	axis := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "arrays", &seq, "axis?", &axis); err != nil {
		return nil, err
	}
	items, ok := starlib.Elems(seq)
	if !ok || len(items) == 0 {
		return nil, fmt.Errorf("concatenate: want a non-empty list of arrays")
	}
	parts := make([]*nd.Array, len(items))
	dt := nd.Bool
	for i, it := range items {
		a, err := starlib.ToArray(it, nil)
		if err != nil {
			return nil, fmt.Errorf("concatenate: array %d: %v", i, err)
		}
		if a.NDim() == 0 {
			return nil, fmt.Errorf("concatenate: zero-dimensional arrays cannot be concatenated")
		}
		parts[i] = a
		if i == 0 {
			dt = a.DType()
		} else {
			dt = starlib.PromoteDT(dt, a.DType())
		}
	}
	ndim := parts[0].NDim()
	if axis < 0 {
		axis += ndim
	}
	if axis < 0 || axis >= ndim {
		return nil, fmt.Errorf("concatenate: axis %d is out of bounds for arrays of dimension %d", axis, ndim)
	}
	shape := append([]int(nil), parts[0].Shape...)
	shape[axis] = 0
	for i, p := range parts {
		bad := p.NDim() != ndim
		for d := 0; !bad && d < ndim; d++ {
			bad = d != axis && p.Shape[d] != parts[0].Shape[d]
		}
		if bad {
			return nil, fmt.Errorf("concatenate: array %d has shape %v, which does not match %v except along axis %d", i, p.Shape, parts[0].Shape, axis)
		}
		shape[axis] += p.Shape[axis]
	}
	out := nd.New(dt, shape...)
	outer := nd.Prod(shape[:axis])
	o := 0
	for r := 0; r < outer; r++ {
		for _, p := range parts {
			inner := nd.Prod(p.Shape[axis:])
			for k := 0; k < inner; k++ {
				out.SetFlat(o, p.Flat(r*inner+k))
				o++
			}
		}
	}
	return starlib.FromArray(out), nil
}

func npAllclose(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	rtol, atol := starlib.FloatArg(1e-5), starlib.FloatArg(1e-8)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &x, "b", &y, "rtol?", &rtol, "atol?", &atol); err != nil {
		return nil, err
	}
	ok, err := allClose(x, y, float64(rtol), float64(atol))
	if err != nil {
		return nil, fmt.Errorf("allclose: %v", err)
	}
	return starlark.Bool(ok), nil
}

// allClose is numpy.allclose: |a - b| <= atol + rtol*|b| elementwise with
// broadcasting, computed in float64.
func allClose(x, y starlark.Value, rtol, atol float64) (bool, error) {
	f64 := nd.Float64
	a, err := starlib.ToArray(x, &f64)
	if err != nil {
		return false, err
	}
	c, err := starlib.ToArray(y, &f64)
	if err != nil {
		return false, err
	}
	r, err := starlib.ComputeArray(nil, func() (*core.Variable, error) {
		av, bv := core.NewConstant(a), core.NewConstant(c)
		tol := core.Add(core.Const(nd.Float64, atol), core.Mul(core.Const(nd.Float64, rtol), core.Abs(bv)))
		return core.LE(core.Abs(core.Sub(av, bv)), tol), nil
	})
	if err != nil {
		return false, err
	}
	for i, n := 0, r.Size(); i < n; i++ {
		if r.Flat(i) == 0 {
			return false, nil
		}
	}
	return true, nil
}

func npArrayEqual(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a, c, err := arrayPair(b.Name(), args, kwargs, "a1", "a2")
	if err != nil {
		return nil, err
	}
	return starlark.Bool(starlib.ArraysEqual(a, c)), nil
}

func npRandomState(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seed starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "seed?", &seed); err != nil {
		return nil, err
	}
	r, err := starlib.SeedRandom(nil, seed)
	if err != nil {
		return nil, fmt.Errorf("RandomState: %v", err)
	}
	return &starlib.RandomState{R: r}, nil
}
