package tensor

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// extraModules are the rest of Theano's tensor namespace that research
// code calls (the survey of public Blocks projects in docs/reference.md),
// in tensor (theano.tensor), tensor.nnet and tensor.extra_ops:
//
//	concatenate(tensor_list, axis=0)    join along an existing axis
//	stack(tensors, axis=0)              join along a new axis (also stack(x, y, ...))
//	clip(x, min, max)                   x limited to [min, max]
//	floor(x), ceil(x)                   integral values, in x's dtype (zero gradient)
//	arange(start, stop=None, step=1, dtype=None)
//	                                    start, start+step, ... below stop; bounds are
//	                                    numbers or int scalars computed from shapes
//	                                    (arange(x.shape[0])); int64 for int bounds,
//	                                    else floatX
//	set_subtensor(x, y), inc_subtensor(x, y)
//	                                    x a subtensor v[...] of a variable v: v with
//	                                    y (broadcast) in place of, or added to, v[...]
//	batched_dot(a, b)                   dot(a[i], b[i]) for each i of the first axis
//	roll(x, shift, axis=None)           numpy.roll (axis None: of the flattened x)
//	tile(x, reps)                       numpy.tile, reps one int per dimension
//	repeat(x, repeats, axis=None)       numpy.repeat with an int repeats
//	cumsum(x, axis=None)                running sums (also tensor.extra_ops.cumsum)
//	eye(n, m=None, k=0, dtype=floatX)   a constant identity-like matrix
//	all(x, axis=None, keepdims=False), any(...)  whether all (any) entries are
//	                                    non-zero: uint8
//	shape_padleft(x, n_ones=1), shape_padright(x, n_ones=1)
//	                                    x with n_ones size-1 axes added on the left
//	                                    (right)
//	patternbroadcast(x, broadcastable), addbroadcast(x, *axes), unbroadcast(x, *axes)
//	                                    x itself: variables here carry no
//	                                    broadcastable flags (any size-1 axis
//	                                    broadcasts), so there is nothing to change
//
//	TensorVariable                      the type of symbolic variables, for
//	                                    isinstance(x, tensor.TensorVariable); not
//	                                    callable (make variables with matrix(), ...)
//
// tensor.nnet: binary_crossentropy(output, target), hard_sigmoid(x)
// (clip(0.2 x + 0.5, 0, 1)), ultra_fast_sigmoid(x) (Theano's fast
// approximation of the sigmoid; the exact sigmoid here),
// conv2d(input, filters, input_shape=None, filter_shape=None,
// border_mode='valid', subsample=(1, 1), filter_flip=True) (the shapes are
// hints, checked against the variables' dimensions only).
func extraModules() (mods []*starlarkstruct.Module) {
	members := starlark.StringDict{
		"concatenate":      starlib.NewBuiltin("concatenate", tensorConcatenate),
		"stack":            starlib.NewBuiltin("stack", tensorStack),
		"clip":             starlib.NewBuiltin("clip", tensorClip),
		"floor":            unaryBuiltin("floor", core.Floor),
		"ceil":             unaryBuiltin("ceil", core.Ceil),
		"arange":           starlib.NewBuiltin("arange", tensorArange),
		"set_subtensor":    starlib.NewBuiltin("set_subtensor", incSubtensor(true)),
		"inc_subtensor":    starlib.NewBuiltin("inc_subtensor", incSubtensor(false)),
		"batched_dot":      starlib.NewBuiltin("batched_dot", productOf(core.BatchedDot)),
		"roll":             starlib.NewBuiltin("roll", tensorRoll),
		"tile":             starlib.NewBuiltin("tile", tensorTile),
		"eye":              starlib.NewBuiltin("eye", tensorEye),
		"all":              starlib.NewBuiltin("all", tensorAllAny("all")),
		"any":              starlib.NewBuiltin("any", tensorAllAny("any")),
		"shape_padleft":    starlib.NewBuiltin("shape_padleft", shapePad(true)),
		"shape_padright":   starlib.NewBuiltin("shape_padright", shapePad(false)),
		"patternbroadcast": starlib.NewBuiltin("patternbroadcast", tensorBroadcastFlags),
		"addbroadcast":     starlib.NewBuiltin("addbroadcast", tensorBroadcastFlags),
		"unbroadcast":      starlib.NewBuiltin("unbroadcast", tensorBroadcastFlags),
		"TensorVariable":   starlib.NewBuiltin("TensorVariable", tensorVariableClass),
	}
	extra := starlark.StringDict{
		"cumsum": starlib.NewBuiltin("cumsum", tensorCumsum),
		"repeat": starlib.NewBuiltin("repeat", tensorRepeat),
	}
	nnet := starlark.StringDict{
		"binary_crossentropy": starlib.NewBuiltin("binary_crossentropy", nnetBinaryCrossEntropy),
		"hard_sigmoid":        unaryBuiltin("hard_sigmoid", core.HardSigmoid),
		"ultra_fast_sigmoid":  unaryBuiltin("ultra_fast_sigmoid", core.Sigmoid),
		"conv2d":              starlib.NewBuiltin("conv2d", nnetConv2d),
	}
	for _, prefix := range []string{"tensor", "theano.tensor"} {
		all := starlark.StringDict{}
		for k, v := range members {
			all[k] = v
		}
		for k, v := range extra {
			all[k] = v
		}
		mods = append(mods,
			&starlarkstruct.Module{Name: prefix, Members: all},
			&starlarkstruct.Module{Name: prefix + ".extra_ops", Members: extra},
			&starlarkstruct.Module{Name: prefix + ".nnet", Members: nnet})
	}
	return mods
}

// intArg reads an int argument (a Starlark int).
func intArg(fname, what string, v starlark.Value) (int, error) {
	var i int
	if err := starlark.AsInt(starlib.IndexValue(v), &i); err != nil {
		return 0, fmt.Errorf("%s: %s must be an int, got %s", fname, what, v.Type())
	}
	return i, nil
}

// optAxis reads axis=None or an int.
func optAxis(fname string, v starlark.Value) (*int, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	i, err := intArg(fname, "axis", v)
	if err != nil {
		return nil, err
	}
	return &i, nil
}

func tensorConcatenate(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var xsV starlark.Value
	axis := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "tensor_list", &xsV, "axis?", &axis); err != nil {
		return nil, err
	}
	xs, single, err := starlib.VariableList(thread, xsV)
	if err != nil || single {
		return nil, fmt.Errorf("concatenate: tensor_list must be a list or tuple of variables, got %s", xsV.Type())
	}
	r, err := core.Concatenate(xs, axis)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorStack(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	axis := 0
	var rest []starlark.Tuple
	for _, kv := range kwargs {
		if kv[0] == starlark.String("axis") {
			a, err := intArg("stack", "axis", kv[1])
			if err != nil {
				return nil, err
			}
			axis = a
			continue
		}
		rest = append(rest, kv)
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("stack: unexpected keyword argument %s", rest[0][0])
	}
	var xsV starlark.Value = args
	if len(args) == 1 {
		if _, isVar := args[0].(*starlib.Variable); !isVar {
			xsV = args[0] // stack([x, y], axis)
		}
	} else if len(args) == 2 {
		if _, isInt := args[1].(starlark.Int); isInt { // stack([x, y], 1)
			a, _ := intArg("stack", "axis", args[1])
			axis, xsV = a, args[0]
		}
	}
	xs, single, err := starlib.VariableList(thread, xsV)
	if err != nil || single {
		return nil, fmt.Errorf("stack: want a list of variables (stack([x, y], axis=0)) or variables (stack(x, y)), got %s", xsV.Type())
	}
	r, err := core.Stack(xs, axis)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorClip(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, lo, hi starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "min", &lo, "max", &hi); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x", "min", "max"}, x, lo, hi)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, core.Clip(vs[0], vs[1], vs[2])), nil
}

func tensorArange(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var start, stop starlark.Value = nil, starlark.None
	var step starlark.Value = starlark.MakeInt(1)
	var dt starlib.DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "start", &start, "stop?", &stop, "step?", &step, "dtype??", &dt); err != nil {
		return nil, err
	}
	if stop == starlark.None {
		start, stop = starlark.MakeInt(0), start
	}
	dtype := nd.Int64
	var vs []*core.Variable
	for i, v := range []starlark.Value{start, stop, step} {
		name := [3]string{"start", "stop", "step"}[i]
		switch v := v.(type) {
		case starlark.Int:
			x, err := starlib.ToVariable(v, nd.Int64)
			if err != nil {
				return nil, fmt.Errorf("arange: %s: %v", name, err)
			}
			vs = append(vs, x)
		case starlark.Float:
			dtype = starlib.FloatX(thread)
			vs = append(vs, core.Const(nd.Float64, float64(v)))
		case *starlib.Variable:
			if v.V.DType().IsFloat() {
				dtype = v.V.DType()
			}
			vs = append(vs, v.V)
		default:
			return nil, fmt.Errorf("arange: %s must be a number or an int scalar variable, got %s", name, v.Type())
		}
	}
	if d := dt.Get(thread); d != nil {
		dtype = *d
	}
	r, err := core.Arange(vs[0], vs[1], vs[2], dtype)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func incSubtensor(set bool) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x, y starlark.Value
		var inplace, tolerate, setInstead bool
		var err error
		if set {
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "y", &y, "inplace?", &inplace, "tolerate_inplace_aliasing?", &tolerate)
		} else {
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "y", &y, "inplace?", &inplace, "set_instead_of_inc?", &setInstead, "tolerate_inplace_aliasing?", &tolerate)
		}
		if err != nil {
			return nil, err
		}
		sub, ok := x.(*starlib.Variable)
		if !ok {
			return nil, fmt.Errorf("%s: x must be a subtensor of a variable (v[1:3]), got %s", b.Name(), x.Type())
		}
		vs, err := starlib.Variables(thread, b.Name(), []string{"y"}, y)
		if err != nil {
			return nil, err
		}
		r, err := core.IncSubtensor(sub.V, vs[0], set || setInstead)
		if err != nil {
			return nil, err
		}
		return starlib.NewVariable(thread, r), nil
	}
}

// flatAxis is x itself and its axis, or x flattened and axis 0 for axis None.
func flatAxis(x *core.Variable, axis *int) (*core.Variable, int, error) {
	if axis != nil {
		return x, *axis, nil
	}
	f, err := core.Flatten(x, 1)
	return f, 0, err
}

func tensorRoll(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, shiftV, axisV starlark.Value = nil, nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "shift", &shiftV, "axis?", &axisV); err != nil {
		return nil, err
	}
	shift, err := intArg("roll", "shift", shiftV)
	if err != nil {
		return nil, err
	}
	axis, err := optAxis("roll", axisV)
	if err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	f, ax, err := flatAxis(vs[0], axis)
	if err != nil {
		return nil, err
	}
	r, err := core.Roll(f, shift, ax)
	if err == nil && axis == nil {
		r, err = core.ReshapeLike(r, vs[0])
	}
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorTile(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, repsV starlark.Value
	var ndim starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "reps", &repsV, "ndim?", &ndim); err != nil {
		return nil, err
	}
	reps, err := starlib.AsInts(repsV)
	if err != nil {
		return nil, fmt.Errorf("tile: reps must be a list or tuple of ints: %v", err)
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	r, err := core.Tile(vs[0], reps)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorRepeat(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, repV, axisV starlark.Value = nil, nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "repeats", &repV, "axis?", &axisV); err != nil {
		return nil, err
	}
	n, err := intArg("repeat", "repeats", repV)
	if err != nil {
		return nil, fmt.Errorf("%v (for a count read from a shape, tensor.repeat(x[None], n, 0) of an initial state, Blocks' bricks use their own op)", err)
	}
	axis, err := optAxis("repeat", axisV)
	if err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	f, ax, err := flatAxis(vs[0], axis)
	if err != nil {
		return nil, err
	}
	r, err := core.Repeat(f, n, ax)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorCumsum(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, axisV starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "axis?", &axisV); err != nil {
		return nil, err
	}
	axis, err := optAxis("cumsum", axisV)
	if err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	r, err := core.CumSum(vs[0], axis)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorEye(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var nV, mV starlark.Value = nil, starlark.None
	k := 0
	var dt starlib.DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "n", &nV, "m?", &mV, "k?", &k, "dtype??", &dt); err != nil {
		return nil, err
	}
	n, err := intArg("eye", "n (a symbolic size is not supported)", nV)
	if err != nil {
		return nil, err
	}
	m := n
	if mV != starlark.None {
		if m, err = intArg("eye", "m", mV); err != nil {
			return nil, err
		}
	}
	if n < 0 || m < 0 {
		return nil, fmt.Errorf("eye: negative dimensions (%d, %d)", n, m)
	}
	dtype := starlib.FloatX(thread)
	if d := dt.Get(thread); d != nil {
		dtype = *d
	}
	a := nd.New(dtype, n, m)
	for i := 0; i < n; i++ {
		if j := i + k; j >= 0 && j < m {
			a.SetFlat(i*m+j, 1)
		}
	}
	return starlib.NewVariable(thread, core.NewConstant(a)), nil
}

func tensorAllAny(name string) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x, axisV starlark.Value = nil, starlark.None
		keepdims := false
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "axis?", &axisV, "keepdims?", &keepdims); err != nil {
			return nil, err
		}
		vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
		if err != nil {
			return nil, err
		}
		var axes []int
		if axisV != starlark.None {
			if axes, err = starlib.AsInts(axisV); err != nil {
				return nil, fmt.Errorf("%s: axis must be None, an int or a tuple of ints", name)
			}
		}
		nz := core.NEQ(vs[0], core.Const(vs[0].DType(), 0))
		var r *core.Variable
		if name == "all" {
			r, err = core.Min(nz, axes, keepdims)
		} else {
			r, err = core.Max(nz, axes, keepdims)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return starlib.NewVariable(thread, r), nil
	}
}

func shapePad(left bool) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x starlark.Value
		n := 1
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "t", &x, "n_ones?", &n); err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, fmt.Errorf("%s: n_ones must not be negative, got %d", b.Name(), n)
		}
		vs, err := starlib.Variables(thread, b.Name(), []string{"t"}, x)
		if err != nil {
			return nil, err
		}
		v := vs[0]
		var pattern []int
		for i := 0; i < n && left; i++ {
			pattern = append(pattern, -1)
		}
		for i := 0; i < v.NDim(); i++ {
			pattern = append(pattern, i)
		}
		for i := 0; i < n && !left; i++ {
			pattern = append(pattern, -1)
		}
		r, err := core.Dimshuffle(v, pattern)
		if err != nil {
			return nil, err
		}
		return starlib.NewVariable(thread, r), nil
	}
}

// tensorBroadcastFlags is patternbroadcast(x, broadcastable),
// addbroadcast(x, *axes) and unbroadcast(x, *axes): x itself, once the
// axes are checked.
func tensorBroadcastFlags(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 || len(args) == 0 {
		return nil, fmt.Errorf("%s: want a variable and axes, got %d arguments and %d keywords", b.Name(), len(args), len(kwargs))
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, args[0])
	if err != nil {
		return nil, err
	}
	v := vs[0]
	if b.Name() == "patternbroadcast" {
		if len(args) != 2 {
			return nil, fmt.Errorf("patternbroadcast(x, broadcastable): got %d arguments", len(args))
		}
		items, ok := starlib.Elems(args[1])
		if !ok || len(items) != v.NDim() {
			return nil, fmt.Errorf("patternbroadcast: broadcastable must be one bool per dimension of x (%d)", v.NDim())
		}
	} else {
		for _, a := range args[1:] {
			ax, err := intArg(b.Name(), "an axis", a)
			if err != nil {
				return nil, err
			}
			if ax < -v.NDim() || ax >= v.NDim() {
				return nil, fmt.Errorf("%s: axis %d out of range for a %d-d variable", b.Name(), ax, v.NDim())
			}
		}
	}
	if _, isVar := args[0].(*starlib.Variable); isVar {
		return args[0], nil
	}
	return starlib.NewVariable(thread, v), nil
}

func nnetBinaryCrossEntropy(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var o, t starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "output", &o, "target", &t); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"output", "target"}, o, t)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, core.BinaryCrossEntropy(vs[0], vs[1])), nil
}

// tensorVariableClass is TensorVariable: isinstance names it (its name is
// the variables' type); it makes nothing.
func tensorVariableClass(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return nil, fmt.Errorf("TensorVariable cannot be called here: make a variable with tensor.matrix(name), tensor.TensorType(dtype, broadcastable)(), ... (TensorVariable serves isinstance)")
}

func nnetConv2d(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, w starlark.Value
	var inShape, fShape, border, subsample starlark.Value = starlark.None, starlark.None, starlark.String("valid"), starlark.None
	flip := true
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "input", &x, "filters", &w, "input_shape?", &inShape, "filter_shape?", &fShape,
		"border_mode?", &border, "subsample?", &subsample, "filter_flip?", &flip); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"input", "filters"}, x, w)
	if err != nil {
		return nil, err
	}
	for i, hint := range []starlark.Value{inShape, fShape} {
		if hint == starlark.None {
			continue
		}
		items, ok := starlib.Elems(hint)
		if !ok || len(items) != 4 {
			return nil, fmt.Errorf("conv2d: %s must be a tuple of 4 (ints or None), got %s", [2]string{"input_shape", "filter_shape"}[i], hint)
		}
	}
	opts := core.Conv2dOptions{NoFlip: !flip}
	if subsample != starlark.None {
		st, err := starlib.AsInts(subsample)
		if err != nil || len(st) != 2 {
			return nil, fmt.Errorf("conv2d: subsample must be two ints, got %s", subsample)
		}
		opts.Step = [2]int{st[0], st[1]}
	}
	if s, ok := starlark.AsString(border); ok {
		opts.Border, err = core.ParseBorder(s, nil)
	} else {
		var pad []int
		if pad, err = starlib.AsInts(border); err == nil {
			opts.Border, err = core.ParseBorder("", pad)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("conv2d: %v", err)
	}
	r, err := core.Conv2d(vs[0], vs[1], opts)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}
