package tensor

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

func tensorModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "tensor", Members: Module.Members})
	mods = append(mods, &starlarkstruct.Module{Name: "tensor.nnet", Members: NnetModule.Members})
	// Theano's own dotted names: load("theano", "tensor") is the port of
	// `from theano import tensor`.
	mods = append(mods, &starlarkstruct.Module{Name: "theano.tensor", Members: Module.Members})
	mods = append(mods, &starlarkstruct.Module{Name: "theano.tensor.nnet", Members: NnetModule.Members})
	// theano.grad is theano.tensor.grad (Theano's theano.gradient.grad).
	mods = append(mods, &starlarkstruct.Module{Name: "theano", Members: starlark.StringDict{"grad": Module.Members["grad"]}})
	return
}

// Module is the Starlark module tensor, Theano's tensor namespace
// (also loadable as theano.tensor; load("theano", "tensor") binds it as
// a value). Its builtins build symbolic variables (TensorVariable); x, y,
// a and b may be variables, numbers (an int is an int constant and a
// float a floatX constant, each taking the dtype of the variable it
// meets), arrays or nested lists. Elementwise functions broadcast as
// numpy does.
//
// Variables:
//
//	scalar(name=None, dtype=None) - a 0-d input variable of floatX (or dtype).
//	vector, matrix, tensor3, tensor4 - 1- to 4-d floatX inputs, same arguments.
//	fscalar, fvector, fmatrix, ftensor3, ftensor4 - float32 inputs.
//	dscalar, dvector, dmatrix, dtensor3, dtensor4 - float64 inputs.
//	iscalar, ivector, imatrix, itensor3, itensor4 - int32 inputs.
//	lscalar, lvector, lmatrix, ltensor3, ltensor4 - int64 inputs.
//	shared(value, name=None) - a shared variable holding a copy of value
//	    (an array keeps its dtype; numbers and lists are floatX when they
//	    hold a float, int64 otherwise); read and write it with get_value()
//	    and set_value().
//	constant(value, name=None, dtype=None) - a constant variable.
//	as_tensor_variable(x, name=None, ndim=None) - x as a variable (a
//	    variable is returned as it is; ndim, when given, must match).
//	zeros_like(x, dtype=None), ones_like(x, dtype=None) - zeros or ones of
//	    x's shape and dtype (or dtype).
//	floatX - the run's floatX, "float32" unless FUEL_FLOATX or .fuelrc
//	    says "float64".
//
// Elementwise:
//
//	exp(x), log(x), log1p(x), sqrt(x), sqr(x) (x*x), tanh(x), inv(x) (1/x),
//	neg(x), sgn(x), abs(x) and abs_(x) - the usual functions; integer inputs
//	    of transcendental functions are computed in float64.
//	sigmoid(x), softplus(x) - as tensor.nnet's.
//	maximum(x, y), minimum(x, y), pow(x, y) - binary functions (Starlark
//	    has no **: write pow(x, 2) or sqr(x)).
//	eq(x, y), neq(x, y), lt(x, y), le(x, y), gt(x, y), ge(x, y) - comparisons,
//	    giving uint8 0/1 variables (Starlark's own < > == cannot give a
//	    variable: x == y is identity, x < y an error).
//	switch(cond, ift, iff) - ift where cond is non-zero, else iff.
//	cast(x, dtype) - x converted to dtype ("floatX" allowed).
//
// Reductions (axis: None for all axes, an int, or a tuple of ints):
//
//	sum(x, axis=None, keepdims=False, dtype=None) - also mean and prod.
//	max(x, axis=None, keepdims=False) - also min.
//	var(x, axis=None, ddof=0, keepdims=False, corrected=False) - the
//	    variance (the sum of squared deviations over n - ddof); also std.
//	argmax(x, axis=None, keepdims=False) - int64 indices (axis: None or an
//	    int; None flattens); also argmin.
//
// Shapes and products:
//
//	dot(a, b) - matrix product of 1-d and 2-d variables.
//	flatten(x, ndim=1) - keep ndim-1 leading axes, flatten the rest.
//	reshape(x, shape) - shape a tuple of ints, one of which may be -1.
//	dimshuffle(x, *pattern) - reorder axes; 'x' inserts a broadcastable axis
//	    (dimshuffle(b, 'x', 0) makes a row of a vector).
//	transpose(x, axes=None) - reverse the axes, or permute them as axes says.
//
// Differentiation and compilation:
//
//	grad(cost, wrt, consider_constant=None, known_grads=None,
//	     disconnected_inputs='raise') - the gradient of the scalar cost with
//	    respect to wrt: a variable for a variable, a list for a list.
//	    consider_constant lists variables no gradient flows through;
//	    known_grads is a dict {variable: its gradient}; disconnected_inputs
//	    is 'raise', 'warn' or 'ignore' for a wrt the cost does not depend on
//	    (its gradient is then zeros).
//	function(inputs, outputs, updates=None) - compile: inputs is a list of
//	    input variables, outputs a variable or a list of them, updates a
//	    dict {shared: new_value} or a list of (shared, new_value) pairs.
//	    The result is called with one array or list per input, in order,
//	    and returns an array (a list of arrays for a list of outputs).
//	    Theano's mode, name, profile and on_unused_input are accepted and
//	    ignored (an unused input is accepted); allow_input_downcast=True
//	    casts an array that would lose precision (float64 data for a
//	    float32 input) instead of refusing it.
//
// The tensor.nnet module (also an attribute: tensor.nnet.softmax):
//
//	sigmoid(x), softplus(x), relu(x, alpha=0) - activations (alpha: the
//	    slope for x < 0).
//	softmax(x), log_softmax(x) - over the last axis; also in tensor itself.
//	categorical_crossentropy(coding_dist, true_dist) - per-row -log p of
//	    the target: true_dist an integer vector of class indices (computed
//	    stably from the softmax's input when coding_dist is a softmax) or a
//	    one-hot float matrix.
//
// Indexing, methods and attributes of variables: see Variable.
var Module = func() *starlarkstruct.Module {
	m := &starlarkstruct.Module{
		Name: "tensor",
		Members: starlark.StringDict{
			"exp":         unaryBuiltin("exp", core.Exp),
			"log":         unaryBuiltin("log", core.Log),
			"log1p":       unaryBuiltin("log1p", core.Log1p),
			"sqrt":        unaryBuiltin("sqrt", core.Sqrt),
			"sqr":         unaryBuiltin("sqr", core.Sqr),
			"tanh":        unaryBuiltin("tanh", core.Tanh),
			"inv":         unaryBuiltin("inv", core.Inv),
			"neg":         unaryBuiltin("neg", core.Neg),
			"sgn":         unaryBuiltin("sgn", core.Sgn),
			"abs":         unaryBuiltin("abs", core.Abs),
			"abs_":        unaryBuiltin("abs_", core.Abs),
			"sigmoid":     unaryBuiltin("sigmoid", core.Sigmoid),
			"softplus":    unaryBuiltin("softplus", core.Softplus),
			"softmax":     unaryErrBuiltin("softmax", core.Softmax),
			"log_softmax": unaryErrBuiltin("log_softmax", core.LogSoftmax),
			"maximum":     binaryBuiltin("maximum", core.Maximum),
			"minimum":     binaryBuiltin("minimum", core.Minimum),
			"pow":         binaryBuiltin("pow", core.Pow),
			"eq":          binaryBuiltin("eq", core.EQ),
			"neq":         binaryBuiltin("neq", core.NEQ),
			"lt":          binaryBuiltin("lt", core.LT),
			"le":          binaryBuiltin("le", core.LE),
			"gt":          binaryBuiltin("gt", core.GT),
			"ge":          binaryBuiltin("ge", core.GE),
			"switch":      starlib.NewBuiltin("switch", tensorSwitch),
			"cast":        starlib.NewBuiltin("cast", tensorCast),

			"sum":    reduceFn("sum"),
			"mean":   reduceFn("mean"),
			"prod":   reduceFn("prod"),
			"max":    reduceFn("max"),
			"min":    reduceFn("min"),
			"std":    reduceFn("std"),
			"var":    reduceFn("var"),
			"argmax": argFn("argmax"),
			"argmin": argFn("argmin"),

			"dot":        starlib.NewBuiltin("dot", productOf(core.Dot)),
			"flatten":    starlib.NewBuiltin("flatten", tensorFlatten),
			"reshape":    starlib.NewBuiltin("reshape", tensorReshape),
			"dimshuffle": starlib.NewBuiltin("dimshuffle", tensorDimshuffle),
			"transpose":  starlib.NewBuiltin("transpose", tensorTranspose),

			"grad":               starlib.NewBuiltin("grad", tensorGrad),
			"function":           starlib.NewBuiltin("function", starlib.TheanoFunction),
			"shared":             starlib.NewBuiltin("shared", starlib.TheanoShared),
			"constant":           starlib.NewBuiltin("constant", tensorConstant),
			"as_tensor_variable": starlib.NewBuiltin("as_tensor_variable", tensorAsVariable),
			"zeros_like":         starlib.NewBuiltin("zeros_like", fillLike(0)),
			"ones_like":          starlib.NewBuiltin("ones_like", fillLike(1)),

			"floatX": &starlib.Dynamic{Name: "floatX", Get: func(thread *starlark.Thread) starlark.Value {
				return starlark.String(starlib.FloatX(thread).String())
			}},
		},
	}
	addInputConstructors(m.Members)
	return m
}()

// NnetModule is the Starlark module tensor.nnet (Theano's
// tensor.nnet); see Module for its builtins.
var NnetModule = &starlarkstruct.Module{
	Name: "tensor.nnet",
	Members: starlark.StringDict{
		"sigmoid":                  unaryBuiltin("sigmoid", core.Sigmoid),
		"softplus":                 unaryBuiltin("softplus", core.Softplus),
		"relu":                     starlib.NewBuiltin("relu", nnetRelu),
		"softmax":                  unaryErrBuiltin("softmax", core.Softmax),
		"log_softmax":              unaryErrBuiltin("log_softmax", core.LogSoftmax),
		"categorical_crossentropy": starlib.NewBuiltin("categorical_crossentropy", nnetCrossEntropy),
	},
}

// addInputConstructors adds scalar, vector, ..., ftensor4, ... (input
// variables of each rank and dtype) to the module's members.
func addInputConstructors(members starlark.StringDict) {
	for _, kind := range []struct {
		prefix string
		dtype  *nd.DType
	}{{"", nil}, {"f", ptr(nd.Float32)}, {"d", ptr(nd.Float64)}, {"i", ptr(nd.Int32)}, {"l", ptr(nd.Int64)}} {
		for ndim, suffix := range []string{"scalar", "vector", "matrix", "tensor3", "tensor4"} {
			name := kind.prefix + suffix
			members[name] = inputBuiltin(name, kind.dtype, ndim)
		}
	}
}

func ptr[T any](x T) *T { return &x }

// inputBuiltin makes a constructor of input variables: name(name=None,
// dtype=None).
func inputBuiltin(fname string, dtype *nd.DType, ndim int) *starlark.Builtin {
	return starlib.NewBuiltin(fname, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var name string
		var dt starlib.DTypeArg
		if err := starlark.UnpackArgs(fname, args, kwargs, "name??", &name, "dtype??", &dt); err != nil {
			return nil, err
		}
		d := starlib.FloatX(thread)
		if dtype != nil {
			d = *dtype
		}
		if dt.IsSet() {
			d = *dt.Get(thread)
		}
		return starlib.NewVariable(thread, core.NewInput(name, d, ndim)), nil
	})
}

// unaryBuiltin makes name(x) from a core function.
func unaryBuiltin(name string, f func(*core.Variable) *core.Variable) *starlark.Builtin {
	return unaryErrBuiltin(name, func(x *core.Variable) (*core.Variable, error) { return f(x), nil })
}

func unaryErrBuiltin(name string, f func(*core.Variable) (*core.Variable, error)) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x starlark.Value
		if err := starlark.UnpackArgs(name, args, kwargs, "x", &x); err != nil {
			return nil, err
		}
		v, err := starlib.AsVariable(thread, x)
		if err != nil {
			return nil, fmt.Errorf("%s: for parameter x: %v", name, err)
		}
		r, err := f(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return starlib.NewVariable(thread, r), nil
	})
}

// binaryBuiltin makes name(x, y) from a core function.
func binaryBuiltin(name string, f func(a, b *core.Variable) *core.Variable) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x, y starlark.Value
		if err := starlark.UnpackArgs(name, args, kwargs, "x", &x, "y", &y); err != nil {
			return nil, err
		}
		vs, err := starlib.Variables(thread, name, []string{"x", "y"}, x, y)
		if err != nil {
			return nil, err
		}
		return starlib.NewVariable(thread, f(vs[0], vs[1])), nil
	})
}

func tensorSwitch(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var c, x, y starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "cond", &c, "ift", &x, "iff", &y); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"cond", "ift", "iff"}, c, x, y)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, core.Switch(vs[0], vs[1], vs[2])), nil
}

func tensorCast(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var dt starlib.DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "dtype", &dt); err != nil {
		return nil, err
	}
	if !dt.IsSet() {
		return nil, fmt.Errorf("cast: dtype must not be None")
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, core.Cast(vs[0], *dt.Get(thread))), nil
}

// reduceFn makes name(x, axis=None, keepdims=False[, dtype=None]).
func reduceFn(name string) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		x, args, err := firstArg(thread, name, args, &kwargs)
		if err != nil {
			return nil, err
		}
		return starlib.ReduceBuiltin(thread, name, x, args, kwargs)
	})
}

func argFn(name string) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		x, args, err := firstArg(thread, name, args, &kwargs)
		if err != nil {
			return nil, err
		}
		return starlib.ArgBuiltin(thread, name, x, args, kwargs)
	})
}

// firstArg takes the variable argument x (positional or keyword) off the
// arguments of a function that forwards the rest to a method.
func firstArg(thread *starlark.Thread, fname string, args starlark.Tuple, kwargs *[]starlark.Tuple) (*core.Variable, starlark.Tuple, error) {
	var x starlark.Value
	if len(args) > 0 {
		x, args = args[0], args[1:]
	} else {
		for i, kv := range *kwargs {
			if kv[0] == starlark.String("x") {
				x = kv[1]
				*kwargs = append((*kwargs)[:i:i], (*kwargs)[i+1:]...)
				break
			}
		}
	}
	if x == nil {
		return nil, nil, fmt.Errorf("%s: missing argument for x", fname)
	}
	v, err := starlib.AsVariable(thread, x)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: for parameter x: %v", fname, err)
	}
	return v, args, nil
}

// productOf is the builtin of a product of two variables a and b (dot,
// batched_dot).
func productOf(product func(a, b *core.Variable) (*core.Variable, error)) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x, y starlark.Value
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &x, "b", &y); err != nil {
			return nil, err
		}
		vs, err := starlib.Variables(thread, b.Name(), []string{"a", "b"}, x, y)
		if err != nil {
			return nil, err
		}
		r, err := product(vs[0], vs[1])
		if err != nil {
			return nil, err
		}
		return starlib.NewVariable(thread, r), nil
	}
}

func tensorFlatten(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	ndim := 1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "ndim?", &ndim); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	r, err := core.Flatten(vs[0], ndim)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorReshape(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, s starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "shape", &s); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	shape, err := starlib.ShapeArgs(b.Name(), starlark.Tuple{s})
	if err != nil {
		return nil, err
	}
	r, err := core.Reshape(vs[0], shape)
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorDimshuffle(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("dimshuffle: unexpected keyword arguments")
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("dimshuffle: missing argument for x")
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, args[0])
	if err != nil {
		return nil, err
	}
	return starlib.Dimshuffle(thread, vs[0], args[1:])
}

func tensorTranspose(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, axes starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "axes?", &axes); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	if axes == starlark.None {
		return starlib.NewVariable(thread, core.Transpose(vs[0])), nil
	}
	return starlib.Dimshuffle(thread, vs[0], starlark.Tuple{axes})
}

func nnetRelu(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var alpha starlib.FloatArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "alpha?", &alpha); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	v := vs[0]
	if alpha == 0 {
		return starlib.NewVariable(thread, core.Relu(v)), nil
	}
	zero := core.Const(v.DType(), 0)
	a := core.Const(starlib.FloatX(thread), float64(alpha))
	return starlib.NewVariable(thread, core.Switch(core.GT(v, zero), v, core.Mul(a, v))), nil
}

func nnetCrossEntropy(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var p, y starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "coding_dist", &p, "true_dist", &y); err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"coding_dist", "true_dist"}, p, y)
	if err != nil {
		return nil, err
	}
	r, err := core.CategoricalCrossEntropy(vs[0], vs[1])
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, r), nil
}

func tensorGrad(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var costV, wrtV starlark.Value
	var constV starlark.Value = starlark.None
	var known *starlark.Dict
	disconnected := "raise"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "cost", &costV, "wrt", &wrtV,
		"consider_constant??", &constV, "known_grads??", &known, "disconnected_inputs?", &disconnected); err != nil {
		return nil, err
	}
	var cost *core.Variable
	if costV != starlark.None {
		c, ok := costV.(*starlib.Variable)
		if !ok {
			return nil, fmt.Errorf("grad: cost must be a variable, got %s", costV.Type())
		}
		cost = c.V
	} else if known == nil {
		return nil, fmt.Errorf("grad: cost is None and there are no known_grads")
	}
	wrt, single, err := starlib.VariableList(thread, wrtV)
	if err != nil {
		return nil, fmt.Errorf("grad: wrt: %v", err)
	}
	opts := core.GradOptions{}
	switch disconnected {
	case "raise":
	case "ignore", "warn":
		opts.AllowDisconnected = true
	default:
		return nil, fmt.Errorf("grad: disconnected_inputs must be 'raise', 'warn' or 'ignore', got %q", disconnected)
	}
	if constV != starlark.None {
		cs, _, err := starlib.VariableList(thread, constV)
		if err != nil {
			return nil, fmt.Errorf("grad: consider_constant: %v", err)
		}
		opts.ConsiderConstant = cs
	}
	if known != nil {
		opts.KnownGrads = map[*core.Variable]*core.Variable{}
		for _, kv := range known.Items() {
			k, ok := kv[0].(*starlib.Variable)
			if !ok {
				return nil, fmt.Errorf("grad: known_grads keys must be variables, got %s", kv[0].Type())
			}
			g, err := starlib.AsVariable(thread, kv[1])
			if err != nil {
				return nil, fmt.Errorf("grad: known gradient of %s: %v", k, err)
			}
			opts.KnownGrads[k.V] = g
		}
	}
	if disconnected == "warn" {
		roots := []*core.Variable{}
		if cost != nil {
			roots = append(roots, cost)
		}
		for k := range opts.KnownGrads {
			roots = append(roots, k)
		}
		in := map[*core.Variable]bool{}
		for _, v := range core.Ancestors(roots) {
			in[v] = true
		}
		for _, w := range wrt {
			if !in[w] {
				thread.Print(thread, fmt.Sprintf("WARNING: grad: the cost does not depend on %s; its gradient is zero", w))
			}
		}
	}
	gs, err := core.Grad(cost, wrt, opts)
	if err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(gs))
	for i, g := range gs {
		if cost != nil && cost.Name != "" && wrt[i].Name != "" && g.Name == "" {
			g.Name = fmt.Sprintf("(d%s/d%s)", cost.Name, wrt[i].Name)
		}
		out[i] = starlib.NewVariable(thread, g)
	}
	if single {
		return out[0], nil
	}
	return starlark.NewList(out), nil
}

func tensorConstant(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var val starlark.Value
	var name string
	var dt starlib.DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &val, "name??", &name, "dtype??", &dt); err != nil {
		return nil, err
	}
	var a *nd.Array
	var err error
	if d := dt.Get(thread); d != nil {
		a, err = starlib.ToArray(val, d)
	} else if arr, ok := val.(*starlib.Array); ok {
		a = arr.A
	} else {
		a, err = starlib.ToArrayFloat(val, starlib.FloatX(thread))
	}
	if err != nil {
		return nil, fmt.Errorf("constant: %v", err)
	}
	c := core.NewConstant(a)
	c.Name = name
	return starlib.NewVariable(thread, c), nil
}

func tensorAsVariable(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var name string
	ndim := -1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "name??", &name, "ndim??", &ndim); err != nil {
		return nil, err
	}
	if v, ok := x.(*starlib.Variable); ok {
		if ndim >= 0 && v.V.NDim() != ndim {
			return nil, fmt.Errorf("as_tensor_variable: %s is %d-d, want %d-d", v, v.V.NDim(), ndim)
		}
		return v, nil
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
	if err != nil {
		return nil, err
	}
	v := vs[0]
	if ndim >= 0 && v.NDim() != ndim {
		return nil, fmt.Errorf("as_tensor_variable: the value is %d-d, want %d-d", v.NDim(), ndim)
	}
	if name != "" {
		v.Name = name
	}
	return starlib.NewVariable(thread, v), nil
}

// fillLike makes zeros_like and ones_like: switch(x >= 0, c, c), which is
// c everywhere, NaN and inf included, with x's shape.
func fillLike(c float64) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x starlark.Value
		var dt starlib.DTypeArg
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "dtype??", &dt); err != nil {
			return nil, err
		}
		vs, err := starlib.Variables(thread, b.Name(), []string{"x"}, x)
		if err != nil {
			return nil, err
		}
		v := vs[0]
		d := v.DType()
		if dt.IsSet() {
			d = *dt.Get(thread)
		}
		k := core.Const(d, c)
		r := core.Switch(core.GE(v, core.Const(v.DType(), 0)), k, k)
		return starlib.NewVariable(thread, r), nil
	}
}
