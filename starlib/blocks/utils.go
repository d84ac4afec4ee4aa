package blocks

import (
	"fmt"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/algorithms"
)

// Modules blocks.utils, blocks.theano_expressions and the theano
// module's function, shared and config: what Blocks scripts (and Blocks'
// own tests) import from them.
//
// blocks.utils:
//
//	shared_floatx(value, name=None)           a floatX shared variable holding value
//	shared_floatx_zeros(shape, name=None)     a floatX shared variable of zeros
//	shared_floatx_nans(shape, name=None)      a floatX shared variable of NaNs
//	pack(arg)                                 arg as a list (a tuple or list as is, anything else wrapped)
//	unpack(arg, singleton=False)              a one-element list's element; with singleton, refuses longer ones
//	check_theano_variable(variable, n_dim, dtype_prefix)  raises unless variable has n_dim dimensions
//	                                          and a dtype starting with dtype_prefix (None passes)
//	find_bricks(top_bricks, predicate)        every brick of the hierarchies below top_bricks
//	                                          (each once) for which predicate(brick) is true
//
// blocks.theano_expressions:
//
//	l2_norm(tensors, squared=False)           the L2 norm of all the tensors' entries together
//	hessian_times_vector(gradient, parameter, vector, r_op=False)
//	                                          the Hessian-vector product grad(sum(gradient*vector), parameter)
//
// theano:
//
//	function(inputs, outputs, updates=None)   as tensor.function
//	shared(value, name=None)                  as tensor.shared
//
// (theano.config is package tensor's, with Theano's other modules.)
func utilsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.utils", Members: starlark.StringDict{
		"shared_floatx":         starlib.NewBuiltin("shared_floatx", sharedFloatX),
		"shared_floatx_zeros":   starlib.NewBuiltin("shared_floatx_zeros", sharedFloatXFill(0)),
		"shared_floatx_nans":    starlib.NewBuiltin("shared_floatx_nans", sharedFloatXFill(math.NaN())),
		"pack":                  starlib.NewBuiltin("pack", utilsPack),
		"unpack":                starlib.NewBuiltin("unpack", utilsUnpack),
		"check_theano_variable": starlib.NewBuiltin("check_theano_variable", checkTheanoVariable),
		"find_bricks":           starlib.NewBuiltin("find_bricks", findBricks),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.theano_expressions", Members: starlark.StringDict{
		"l2_norm":              starlib.NewBuiltin("l2_norm", l2NormBuiltin),
		"hessian_times_vector": starlib.NewBuiltin("hessian_times_vector", hessianTimesVector),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "theano", Members: starlark.StringDict{
		"function": starlib.NewBuiltin("function", starlib.TheanoFunction),
		"shared":   starlib.NewBuiltin("shared", starlib.TheanoShared),
	}})
	return
}

func sharedFloatX(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var val starlark.Value
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &val, "name??", &name); err != nil {
		return nil, err
	}
	fx := starlib.FloatX(thread)
	a, err := starlib.ToArray(val, &fx)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlib.NewVariable(thread, core.NewShared(a, name)), nil
}

func sharedFloatXFill(x float64) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var shapeV starlark.Value
		var name string
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shapeV, "name??", &name); err != nil {
			return nil, err
		}
		shape, err := starlib.AsInts(shapeV)
		if err != nil {
			return nil, fmt.Errorf("%s: shape: %v", b.Name(), err)
		}
		a := nd.New(starlib.FloatX(thread), shape...)
		if x != 0 {
			for i, n := 0, a.Size(); i < n; i++ {
				a.SetFlat(i, x)
			}
		}
		return starlib.NewVariable(thread, core.NewShared(a, name)), nil
	}
}

func utilsPack(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "arg", &x); err != nil {
		return nil, err
	}
	switch x := x.(type) {
	case starlark.Tuple:
		return starlark.NewList(append([]starlark.Value(nil), x...)), nil
	case *starlark.List:
		return x, nil
	}
	return starlark.NewList([]starlark.Value{x}), nil
}

func utilsUnpack(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	singleton := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "arg", &x, "singleton?", &singleton); err != nil {
		return nil, err
	}
	var items []starlark.Value
	switch x := x.(type) {
	case starlark.Tuple:
		items = x
	case *starlark.List:
		for i := 0; i < x.Len(); i++ {
			items = append(items, x.Index(i))
		}
	default:
		return x, nil
	}
	if len(items) == 1 {
		return items[0], nil
	}
	if singleton {
		return nil, fmt.Errorf("unpack: expected a singleton, got %d elements", len(items))
	}
	return starlark.NewList(items), nil
}

func checkTheanoVariable(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var ndim int
	var prefix string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "variable", &x, "n_dim", &ndim, "dtype_prefix", &prefix); err != nil {
		return nil, err
	}
	if x == starlark.None {
		return starlark.None, nil
	}
	v, err := starlib.AsVariable(thread, x)
	if err != nil {
		return nil, fmt.Errorf("check_theano_variable: %v", err)
	}
	if v.NDim() != ndim {
		return nil, fmt.Errorf("ValueError: Wrong number of dimensions:\n\texpected %d, got %d", ndim, v.NDim())
	}
	if dt := v.DType().String(); len(dt) < len(prefix) || dt[:len(prefix)] != prefix {
		return nil, fmt.Errorf("ValueError: Wrong dtype prefix:\n\texpected starting with %s, got %s", prefix, dt)
	}
	return starlark.None, nil
}

// flatVariables reads l2_norm's tensors: variables, numbers or (nested)
// lists, each one tensor.
func l2NormBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var ts starlark.Value
	squared := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "tensors", &ts, "squared?", &squared); err != nil {
		return nil, err
	}
	items, ok := starlib.Elems(ts)
	if !ok {
		return nil, fmt.Errorf("l2_norm: tensors must be a list, got %s", ts.Type())
	}
	vars := make([]*core.Variable, len(items))
	for i, it := range items {
		v, err := starlib.AsVariable(thread, it)
		if err != nil {
			return nil, fmt.Errorf("l2_norm: tensors[%d]: %v", i, err)
		}
		if !v.DType().IsFloat() {
			v = core.Cast(v, starlib.FloatX(thread))
		}
		vars[i] = v
	}
	n := algorithms.L2Norm(vars)
	if squared {
		n = core.Sqr(n)
	}
	return starlib.NewVariable(thread, n), nil
}

func hessianTimesVector(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var g, p, v *starlib.Variable
	rop := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "gradient", &g, "parameter", &p, "vector", &v, "r_op?", &rop); err != nil {
		return nil, err
	}
	// The R-operator and the gradient of the dot product are the same
	// product; the IR has one way to compute it.
	gs, err := core.Grad(core.SumAll(core.Mul(g.V, v.V)), []*core.Variable{p.V}, core.GradOptions{})
	if err != nil {
		return nil, fmt.Errorf("hessian_times_vector: %v", err)
	}
	return starlib.NewVariable(thread, gs[0]), nil
}

func findBricks(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var tops starlark.Value
	var pred starlark.Callable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "top_bricks", &tops, "brick_predicate", &pred); err != nil {
		return nil, err
	}
	items, ok := starlib.Elems(tops)
	if !ok {
		return nil, fmt.Errorf("find_bricks: top_bricks must be a list of bricks, got %s", tops.Type())
	}
	var queue []bricks.Brick
	for i, it := range items {
		br, ok := it.(*Brick)
		if !ok {
			return nil, fmt.Errorf("find_bricks: top_bricks[%d] is %s, want a brick", i, it.Type())
		}
		queue = append(queue, br.B)
	}
	seen := map[bricks.Brick]bool{}
	var found []starlark.Value
	for len(queue) > 0 {
		br := queue[0]
		queue = queue[1:]
		if seen[br] {
			continue
		}
		seen[br] = true
		ok, err := starlark.Call(thread, pred, starlark.Tuple{&Brick{br}}, nil)
		if err != nil {
			return nil, err
		}
		if ok.Truth() {
			found = append(found, &Brick{br})
		}
		queue = append(queue, br.BaseBrick().Children...)
	}
	return starlark.NewList(found), nil
}

// CompareSameType: two values of one brick are equal.
func (b *Brick) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	switch op {
	case syntax.EQL:
		return b.B == y.(*Brick).B, nil
	case syntax.NEQ:
		return b.B != y.(*Brick).B, nil
	}
	return false, fmt.Errorf("bricks are not ordered")
}
