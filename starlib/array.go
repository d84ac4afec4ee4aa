package starlib

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// Array is the Starlark value of a concrete n-dimensional array (type
// name "ndarray"), numpy's ndarray as far as scripts need it: batches,
// parameter values, function outputs, toy data.
//
// Arrays are immutable from Starlark (there is no item assignment), so
// an Array may share its data with the array it was made from; Go code
// that hands an array to FromArray must not change it afterwards.
//
//	a.shape, a.dtype, a.ndim, a.size, a.T
//	a[i], a[i, j], a[":", 0], a[1:3]   rows, elements (as numbers), slices
//	len(a), for row in a, x in a
//	a + b, a - b, a * b, a / b, -a     elementwise with numbers, arrays and
//	                                   lists, broadcasting as numpy
//	a == b                             same shape and values (numpy.array_equal)
//	a.tolist(), a.item(), a.transpose(*axes)
//	a.sum(axis=None, keepdims=False), mean, max, min, prod, std(axis=None,
//	keepdims=False, ddof=0), argmax(axis=None), argmin: numpy's results;
//	a reduction over every axis gives a Starlark int or float
//	a.astype(dtype), a.reshape(shape), a.flatten(), a.copy()
type Array struct {
	A *nd.Array
}

var (
	_ starlark.Value      = (*Array)(nil)
	_ starlark.HasAttrs   = (*Array)(nil)
	_ starlark.Mapping    = (*Array)(nil)
	_ starlark.Sliceable  = (*Array)(nil)
	_ starlark.Iterable   = (*Array)(nil)
	_ starlark.HasBinary  = (*Array)(nil)
	_ starlark.HasUnary   = (*Array)(nil)
	_ starlark.Comparable = (*Array)(nil)
	_ starlark.Container  = (*Array)(nil)
	_ starlark.Sequence   = (*Array)(nil)
)

// FromArray wraps a for Starlark, without copying it. An object array (a
// batch of a variable-length source) becomes a list of arrays, one per
// example. A script may keep what it is given, so a is kept (nd.Keep): the
// main loop will not give its buffer back for reuse.
func FromArray(a *nd.Array) starlark.Value {
	a.Keep()
	if objs, ok := a.Data.([]*nd.Array); ok {
		l := make([]starlark.Value, len(objs))
		for i, e := range objs {
			l[i] = starlark.None
			if e != nil {
				l[i] = FromArray(e)
			}
		}
		return starlark.NewList(l)
	}
	return &Array{A: a}
}

// String is numpy's printing of the array.
func (a *Array) String() string { return a.A.String() }

// Type is "ndarray".
func (a *Array) Type() string { return "ndarray" }

// Freeze does nothing: arrays are immutable from Starlark.
func (a *Array) Freeze() {}

// Truth is the element's truth for a one-element array, else whether the
// array is non-empty (numpy refuses the latter as ambiguous).
func (a *Array) Truth() starlark.Bool {
	if a.A.Size() == 1 {
		return a.A.Flat(0) != 0
	}
	return a.A.Size() > 0
}

// Hash refuses: arrays are unhashable, as in numpy.
func (a *Array) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: ndarray") }

// Len is the length of the first axis (-1, "no len", for a 0-d array).
func (a *Array) Len() int {
	if a.A.NDim() == 0 {
		return -1
	}
	return a.A.Shape[0]
}

// Index returns row i (an element as a numpy scalar for a 1-d array, as
// numpy gives it).
func (a *Array) Index(i int) starlark.Value {
	if a.A.NDim() == 1 {
		return ElementValue(a.A.DType(), a.A.Flat(i))
	}
	r := a.A.Slice(i, i+1)
	r.Shape = r.Shape[1:]
	return &Array{A: r}
}

// Slice cuts the first axis.
func (a *Array) Slice(start, end, step int) starlark.Value {
	if a.A.NDim() == 0 {
		return a
	}
	if step == 1 {
		return &Array{A: a.A.Slice(start, end)}
	}
	var idx []int
	if step > 0 {
		for i := start; i < end; i += step {
			idx = append(idx, i)
		}
	} else {
		for i := start; i > end; i += step {
			idx = append(idx, i)
		}
	}
	return &Array{A: a.A.Take(idx)}
}

// Get implements a[key] for ints, slices and tuples of them.
func (a *Array) Get(key starlark.Value) (v starlark.Value, found bool, err error) {
	defer RecoverInternal("ndarray index", &err)
	if k, ok := key.(starlark.Int); ok && a.A.NDim() > 0 {
		var i int
		if err := starlark.AsInt(IndexValue(k), &i); err != nil {
			return nil, false, err
		}
		n := a.A.Shape[0]
		if i < -n || i >= n {
			return nil, false, fmt.Errorf("index %d is out of bounds for axis 0 with size %d", i, n)
		}
		if i < 0 {
			i += n
		}
		return a.Index(i), true, nil
	}
	key, newaxes := splitNewaxis(key, a.A.NDim())
	idx, err := parseIndex(key, a.A.NDim())
	if err != nil {
		return nil, false, err
	}
	allInts := len(idx) == a.A.NDim() && newaxes == nil
	for _, ix := range idx {
		allInts = allInts && !ix.Slice
	}
	if allInts {
		ints := make([]int, len(idx))
		for i, ix := range idx {
			ints[i] = ix.I
		}
		off, err := a.A.Index(ints...)
		if err != nil {
			return nil, false, fmt.Errorf("index %s: %v", key, err)
		}
		return ElementValue(a.A.DType(), a.A.Flat(off)), true, nil
	}
	r, err := ComputeArray(nil, func() (*core.Variable, error) {
		s, err := core.Subtensor(core.NewConstant(a.A), idx)
		if err != nil {
			return nil, err
		}
		return insertNewaxes(s, newaxes)
	})
	if err != nil {
		return nil, false, err
	}
	return &Array{A: r}, true, nil
}

// Has reports whether some element equals y (numpy's `y in a`).
func (a *Array) Has(y starlark.Value) (bool, error) {
	f, ok := starlark.AsFloat(y)
	if !ok {
		if b, isBool := y.(starlark.Bool); isBool {
			f, ok = 0, true
			if b {
				f = 1
			}
		}
	}
	if !ok {
		return false, fmt.Errorf("'in <ndarray>' requires a number, not %s", y.Type())
	}
	for i, n := 0, a.A.Size(); i < n; i++ {
		if a.A.Flat(i) == f {
			return true, nil
		}
	}
	return false, nil
}

// Iterate yields the rows (the elements of a 1-d array).
func (a *Array) Iterate() starlark.Iterator { return &arrayIterator{a: a} }

type arrayIterator struct {
	a *Array
	i int
}

func (it *arrayIterator) Next(p *starlark.Value) bool {
	if it.i >= it.a.Len() {
		return false
	}
	*p = it.a.Index(it.i)
	it.i++
	return true
}

func (it *arrayIterator) Done() {}

// CompareSameType compares arrays by shape and values (dtypes may differ).
func (a *Array) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	b := y.(*Array)
	switch op {
	case syntax.EQL:
		return ArraysEqual(a.A, b.A), nil
	case syntax.NEQ:
		return !ArraysEqual(a.A, b.A), nil
	}
	return false, fmt.Errorf("ndarray %s ndarray is not supported (compare elements with numpy.allclose or a.tolist())", op)
}

// ArraysEqual reports whether a and b have the same shape and values.
func ArraysEqual(a, b *nd.Array) bool {
	if !nd.SameShape(a.Shape, b.Shape) {
		return false
	}
	for i, n := 0, a.Size(); i < n; i++ {
		if a.Flat(i) != b.Flat(i) {
			return false
		}
	}
	return true
}

// Binary implements + - * / with numbers, arrays and lists (numpy's
// broadcasting and type promotion). Variables handle the mixed case.
func (a *Array) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (v starlark.Value, err error) {
	defer RecoverInternal("ndarray "+op.String(), &err)
	f := binaryOp(op)
	if f == nil {
		return nil, nil
	}
	if _, cmp := compareNames[op]; cmp { // numpy's comparisons give bool arrays
		g := f
		f = func(a, b *core.Variable) *core.Variable { return core.Cast(g(a, b), nd.Bool) }
	}
	var other *core.Variable
	switch y := y.(type) {
	case *Array:
		other = core.NewConstant(y.A)
	case starlark.Int, starlark.Bool:
		other, err = ToVariable(y, nd.Float64)
	case starlark.Float:
		other = core.Const(nd.Float64, float64(y))
	case starlark.Tuple, *starlark.List:
		var b *nd.Array
		b, err = ToArray(y, nil)
		if err == nil {
			other = core.NewConstant(b)
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	x := core.NewConstant(a.A)
	r, err := ComputeArray(nil, func() (*core.Variable, error) {
		if side == starlark.Left {
			return f(x, other), nil
		}
		return f(other, x), nil
	})
	if err != nil {
		return nil, err
	}
	return &Array{A: r}, nil
}

// binaryOps are the arithmetic operators both Arrays and Variables have.
var binaryOps = map[syntax.Token]func(a, b *core.Variable) *core.Variable{
	syntax.PERCENT: modVariable,
	syntax.PLUS:    core.Add,
	syntax.MINUS:   core.Sub,
	syntax.STAR:    core.Mul,
	syntax.SLASH:   core.Div,
}

// binaryOp is the function of a binary operator of arrays and variables:
// the arithmetic of binaryOps, and the ordered comparisons (which reach
// Binary only from elementwiseCompare: operators.go).
func binaryOp(op syntax.Token) func(a, b *core.Variable) *core.Variable {
	switch op {
	case syntax.LT:
		return core.LT
	case syntax.LE:
		return core.LE
	case syntax.GT:
		return core.GT
	case syntax.GE:
		return core.GE
	}
	return binaryOps[op]
}

// Unary implements -a and +a.
func (a *Array) Unary(op syntax.Token) (starlark.Value, error) {
	switch op {
	case syntax.PLUS:
		return a, nil
	case syntax.MINUS:
		r, err := ComputeArray(nil, func() (*core.Variable, error) { return core.Neg(core.NewConstant(a.A)), nil })
		if err != nil {
			return nil, err
		}
		return &Array{A: r}, nil
	}
	return nil, nil
}

// ComputeArray evaluates a graph of constants on the CPU: the array
// operations reuse the symbolic layer's kernels, so arrays and variables
// compute alike. Arrays are numpy's, host arrays, whatever the run's
// device.
//
// thread, when not nil, gives the run's memory budget (an operator
// method, which has no thread, is bounded by the machine's memory).
func ComputeArray(thread *starlark.Thread, build func() (*core.Variable, error)) (*nd.Array, error) {
	out, err := build()
	if err != nil {
		return nil, err
	}
	f, err := core.Compile(nil, []*core.Variable{out}, nil)
	if err != nil {
		return nil, err
	}
	if thread != nil {
		f.SetMemoryLimit(memoryLimit(thread))
	}
	res, err := f.Call(nil)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

var arrayMethods = map[string]BuiltinFunc{
	"tolist":    arrayToList,
	"item":      arrayItem,
	"sum":       arrayReduce,
	"mean":      arrayReduce,
	"max":       arrayReduce,
	"min":       arrayReduce,
	"prod":      arrayReduce,
	"std":       arrayReduce,
	"var":       arrayReduce,
	"all":       arrayAllAny,
	"any":       arrayAllAny,
	"argmax":    arrayArg,
	"argmin":    arrayArg,
	"astype":    arrayAstype,
	"dot":       arrayDot,
	"reshape":   arrayReshape,
	"flatten":   arrayFlatten,
	"copy":      arrayCopy,
	"transpose": arrayTranspose,
}

// Attr returns the array's attributes and methods.
func (a *Array) Attr(name string) (starlark.Value, error) {
	switch name {
	case "shape":
		t := make(starlark.Tuple, len(a.A.Shape))
		for i, d := range a.A.Shape {
			t[i] = starlark.MakeInt(d)
		}
		return t, nil
	case "dtype":
		return starlark.String(a.A.DType().String()), nil
	case "ndim":
		return starlark.MakeInt(a.A.NDim()), nil
	case "size":
		return starlark.MakeInt(a.A.Size()), nil
	case "T":
		r, err := ComputeArray(nil, func() (*core.Variable, error) { return core.Transpose(core.NewConstant(a.A)), nil })
		if err != nil {
			return nil, err
		}
		return &Array{A: r}, nil
	}
	if m, ok := arrayMethods[name]; ok {
		return NewBuiltin(name, m).BindReceiver(a), nil
	}
	return nil, nil
}

// AttrNames lists the attributes and methods.
func (a *Array) AttrNames() []string {
	names := []string{"shape", "dtype", "ndim", "size", "T"}
	for n := range arrayMethods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func arrayToList(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	a := b.Receiver().(*Array).A
	return ToList(a, 0, 0), nil
}

// ToList converts axis ax of a at flat offset off to nested lists.
func ToList(a *nd.Array, ax, off int) starlark.Value {
	if a.NDim() == 0 {
		return NumberValue(a.DType(), a.Flat(0))
	}
	n := a.Shape[ax]
	stride := nd.Prod(a.Shape[ax+1:])
	items := make([]starlark.Value, n)
	for i := range items {
		if ax == a.NDim()-1 {
			items[i] = NumberValue(a.DType(), a.Flat(off+i))
		} else {
			items[i] = ToList(a, ax+1, off+i*stride)
		}
	}
	return starlark.NewList(items)
}

func arrayItem(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	a := b.Receiver().(*Array).A
	if a.Size() != 1 {
		return nil, fmt.Errorf("item: can only convert an array of size 1 to a number, got shape %v", a.Shape)
	}
	return NumberValue(a.DType(), a.Flat(0)), nil
}

func arrayReduce(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var axes Axes
	var keepdims bool
	var dt DTypeArg
	ddof := 0
	pairs := []any{"axis?", &axes, "dtype?", &dt, "keepdims?", &keepdims}
	if b.Name() == "std" || b.Name() == "var" {
		pairs = append(pairs, "ddof?", &ddof)
	}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, err
	}
	a, err := ReduceDType(thread, b.Name(), b.Receiver().(*Array).A, dt)
	if err != nil {
		return nil, err
	}
	return ReduceArray(b.Name(), a, axes.Axes, keepdims, ddof)
}

// ReduceDType is a reduction's input in its dtype= argument (numpy
// accumulates and answers in that dtype).
func ReduceDType(thread *starlark.Thread, name string, a *nd.Array, dt DTypeArg) (*nd.Array, error) {
	if !dt.IsSet() || *dt.Get(thread) == a.DType() {
		return a, nil
	}
	want := *dt.Get(thread)
	r, err := ComputeArray(nil, func() (*core.Variable, error) { return core.Cast(core.NewConstant(a), want), nil })
	if err != nil {
		return nil, fmt.Errorf("%s: dtype: %v", name, err)
	}
	return r, nil
}

// arrayAllAny is a.all() and a.any() (over every element, or along axis).
func arrayAllAny(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var axes Axes
	var keepdims bool
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "axis?", &axes, "keepdims?", &keepdims); err != nil {
		return nil, err
	}
	return AllAny(b.Name(), b.Receiver().(*Array).A, axes.Axes, keepdims)
}

// AllAny is numpy's all or any: a bool, or a bool array along axes.
func AllAny(name string, a *nd.Array, axes []int, keepdims bool) (starlark.Value, error) {
	r, err := ComputeArray(nil, func() (*core.Variable, error) {
		x := core.Cast(core.NewConstant(a), nd.Float64)
		nz := core.Cast(core.NEQ(x, core.Const(nd.Float64, 0)), nd.Float64)
		if name == "all" {
			return core.Min(nz, axes, keepdims)
		}
		return core.Max(nz, axes, keepdims)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if r.NDim() == 0 {
		return starlark.Bool(r.Flat(0) != 0), nil
	}
	out := nd.New(nd.Bool, r.Shape...)
	for i, n := 0, r.Size(); i < n; i++ {
		out.SetFlat(i, r.Flat(i))
	}
	return FromArray(out), nil
}

// ReduceArray is numpy's a.sum/mean/max/min/prod/std: a Starlark number
// for a reduction over every axis without keepdims, else an array.
func ReduceArray(name string, a *nd.Array, axes []int, keepdims bool, ddof int) (starlark.Value, error) {
	r, err := ComputeArray(nil, func() (*core.Variable, error) {
		x := core.NewConstant(a)
		switch name {
		case "sum":
			return core.Sum(x, axes, keepdims, nil)
		case "mean":
			return core.Mean(x, axes, keepdims, nil)
		case "max":
			return core.Max(x, axes, keepdims)
		case "min":
			return core.Min(x, axes, keepdims)
		case "prod":
			return core.Prod(x, axes, keepdims)
		case "std":
			return stdVar(x, a.Shape, axes, keepdims, ddof)
		case "var":
			v, err := stdVar(x, a.Shape, axes, keepdims, ddof)
			if err != nil {
				return nil, err
			}
			return core.Sqr(v), nil
		}
		return nil, fmt.Errorf("unknown reduction %s", name)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if r.NDim() == 0 {
		return NumberValue(r.DType(), r.Flat(0)), nil
	}
	return &Array{A: r}, nil
}

// stdVar is the standard deviation of x, of the given shape, over axes
// with ddof degrees of freedom removed, as numpy.std.
func stdVar(x *core.Variable, shape, axes []int, keepdims bool, ddof int) (*core.Variable, error) {
	m, err := core.Mean(x, axes, true, nil)
	if err != nil {
		return nil, err
	}
	s, err := core.Sum(core.Sqr(core.Sub(x, m)), axes, keepdims, nil)
	if err != nil {
		return nil, err
	}
	n := nd.Prod(shape)
	if axes != nil {
		n = 1
		for _, ax := range axes {
			if ax < 0 {
				ax += len(shape)
			}
			n *= shape[ax]
		}
	}
	return core.Sqrt(core.Div(s, core.Const(s.DType(), float64(n-ddof)))), nil
}

func arrayArg(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var axis Axis
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "axis?", &axis); err != nil {
		return nil, err
	}
	return ArgArray(b.Name(), b.Receiver().(*Array).A, axis.Axis)
}

// ArgArray is numpy's argmax or argmin (name) of a, along axis or over
// the flattened array when axis is nil.
func ArgArray(name string, a *nd.Array, axis *int) (starlark.Value, error) {
	r, err := ComputeArray(nil, func() (*core.Variable, error) {
		if name == "argmax" {
			return core.Argmax(core.NewConstant(a), axis, false)
		}
		return core.Argmin(core.NewConstant(a), axis, false)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if r.NDim() == 0 {
		return NumberValue(r.DType(), r.Flat(0)), nil
	}
	return &Array{A: r}, nil
}

func arrayAstype(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var dt DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dtype", &dt); err != nil {
		return nil, err
	}
	if !dt.IsSet() {
		return nil, fmt.Errorf("astype: dtype must not be None")
	}
	return &Array{A: b.Receiver().(*Array).A.Astype(*dt.Get(thread))}, nil
}

// arrayDot is ndarray.dot(b): numpy.dot(a, b), the matrix product of
// 1-d and 2-d arrays (a number for two vectors).
func arrayDot(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var y starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &y); err != nil {
		return nil, err
	}
	c, err := ToArray(y, nil)
	if err != nil {
		return nil, fmt.Errorf("dot: %v", err)
	}
	a := b.Receiver().(*Array).A
	r, err := ComputeArray(thread, func() (*core.Variable, error) {
		return core.Dot(core.NewConstant(a), core.NewConstant(c))
	})
	if err != nil {
		return nil, err
	}
	if r.NDim() == 0 {
		return NumberValue(r.DType(), r.Flat(0)), nil
	}
	return FromArray(r), nil
}

func arrayReshape(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("reshape: unexpected keyword arguments")
	}
	shape, err := ShapeArgs(b.Name(), args)
	if err != nil {
		return nil, err
	}
	a := b.Receiver().(*Array).A
	r, err := a.Reshape(shape...)
	if err != nil {
		return nil, fmt.Errorf("reshape: cannot reshape an array of shape %v into shape %v", a.Shape, shape)
	}
	return &Array{A: r}, nil
}

// arrayTranspose is a.transpose(*axes): a.transpose(), a.transpose(2, 0, 1)
// or a.transpose((2, 0, 1)), as numpy.
func arrayTranspose(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("transpose: unexpected keyword arguments")
	}
	var axes starlark.Value = starlark.None
	switch {
	case len(args) == 1:
		axes = args[0]
	case len(args) > 1:
		axes = args
	}
	r, err := TransposeArray(b.Receiver().(*Array).A, axes)
	if err != nil {
		return nil, err
	}
	return &Array{A: r}, nil
}

// TransposeArray is numpy.transpose(a, axes): axes None reverses the
// axes, else it is a permutation of them (negative ones count from the end).
func TransposeArray(a *nd.Array, axes starlark.Value) (*nd.Array, error) {
	var perm []int
	if axes == starlark.None {
		for i := a.NDim() - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	} else {
		p, err := AsInts(axes)
		if err != nil || len(p) != a.NDim() {
			return nil, fmt.Errorf("transpose: axes must be a permutation of the %d axes, got %s", a.NDim(), axes)
		}
		perm = p
	}
	seen := map[int]bool{}
	for i, p := range perm {
		if p < 0 {
			p += a.NDim()
			perm[i] = p
		}
		if p < 0 || p >= a.NDim() || seen[p] {
			return nil, fmt.Errorf("transpose: axes %s is not a permutation of the %d axes", axes, a.NDim())
		}
		seen[p] = true
	}
	r, err := ComputeArray(nil, func() (*core.Variable, error) { return core.Dimshuffle(core.NewConstant(a), perm) })
	if err != nil {
		return nil, fmt.Errorf("transpose: %w", err)
	}
	return r, nil
}

func arrayFlatten(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	a := b.Receiver().(*Array).A.Copy()
	a.Shape = []int{a.Size()}
	return &Array{A: a}, nil
}

func arrayCopy(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return &Array{A: b.Receiver().(*Array).A.Copy()}, nil
}

// ToArray converts a Starlark value to an array: an ndarray (converted to
// dtype when one is given and differs, else shared), a number or bool (a
// 0-d array), or nested lists and tuples of numbers, bools and arrays,
// whose shape is inferred (ragged nesting is an error). Without a dtype,
// numbers give float64 when any is a float, int64 when any is an int,
// bool otherwise, as numpy.array does. Converting to an integer dtype
// refuses a float with a fraction and a value out of the dtype's range.
func ToArray(v starlark.Value, dtype *nd.DType) (*nd.Array, error) {
	return toArray(v, dtype, nd.Float64)
}

// ToArrayFloat is ToArray with floats defaulting to floatX (lists written
// in a script next to floatX variables).
func ToArrayFloat(v starlark.Value, floatX nd.DType) (*nd.Array, error) {
	return toArray(v, nil, floatX)
}

type leaf struct {
	f    float64
	i    int64
	kind int // 0 bool, 1 int, 2 float
}

func toArray(v starlark.Value, dtype *nd.DType, defFloat nd.DType) (*nd.Array, error) {
	if s, ok := v.(*Scalar); ok {
		v = &Array{A: s.A}
	}
	if a, ok := v.(*Array); ok {
		if dtype != nil && *dtype != a.A.DType() {
			return castArray(a.A, *dtype)
		}
		return a.A, nil
	}
	shape, err := inferShape(v)
	if err != nil {
		return nil, err
	}
	var leaves []leaf
	kind := -1 // the widest loose number: -1 none, 0 bool, 1 int, 2 float
	arrayDT := -1
	if err := collectLeaves(v, shape, 0, &leaves, &kind, &arrayDT); err != nil {
		return nil, err
	}
	var dt nd.DType
	switch kind {
	case -1:
		dt = defFloat // an empty list, as numpy
	case 0:
		dt = nd.Bool
	case 1:
		dt = nd.Int64
	case 2:
		dt = defFloat
	}
	switch {
	case dtype != nil:
		dt = *dtype
	case arrayDT >= 0 && kind < 0:
		dt = nd.DType(arrayDT)
	case arrayDT >= 0:
		dt = PromoteDT(nd.DType(arrayDT), dt)
	}
	out := nd.New(dt, shape...)
	for i, l := range leaves {
		if err := setLeaf(out, i, l); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// castArray converts a to dt, refusing a float to integer conversion that
// would lose fractions.
func castArray(a *nd.Array, dt nd.DType) (*nd.Array, error) {
	if a.DType().IsFloat() && !dt.IsFloat() {
		for i, n := 0, a.Size(); i < n; i++ {
			if err := checkIntValue(a.Flat(i), dt); err != nil {
				return nil, err
			}
		}
	}
	return a.Astype(dt), nil
}

func checkIntValue(f float64, dt nd.DType) error {
	if f != math.Trunc(f) {
		return fmt.Errorf("cannot convert %v to %s without losing its fraction", f, dt)
	}
	lo, hi := intRange(dt)
	if f < lo || f > hi {
		return fmt.Errorf("%v is out of range for %s", f, dt)
	}
	return nil
}

func intRange(dt nd.DType) (float64, float64) {
	switch dt {
	case nd.Uint8:
		return 0, math.MaxUint8
	case nd.Int8:
		return math.MinInt8, math.MaxInt8
	case nd.Int16:
		return math.MinInt16, math.MaxInt16
	case nd.Uint16:
		return 0, math.MaxUint16
	case nd.Int32:
		return math.MinInt32, math.MaxInt32
	case nd.Bool:
		return 0, 1
	}
	return math.MinInt64, math.MaxInt64
}

func setLeaf(out *nd.Array, i int, l leaf) error {
	dt := out.DType()
	switch {
	case dt.IsFloat():
		if l.kind == 1 {
			out.SetFlat(i, float64(l.i))
		} else {
			out.SetFlat(i, l.f)
		}
	case l.kind == 1:
		lo, hi := intRange(dt)
		if float64(l.i) < lo || float64(l.i) > hi {
			return fmt.Errorf("%d is out of range for %s", l.i, dt)
		}
		if d, ok := out.Data.([]int64); ok {
			d[i] = l.i
		} else {
			out.SetFlat(i, float64(l.i))
		}
	default:
		if err := checkIntValue(l.f, dt); err != nil {
			return err
		}
		out.SetFlat(i, l.f)
	}
	return nil
}

// Elems returns the items of a tuple or a list; ok is false for any
// other value.
func Elems(v starlark.Value) ([]starlark.Value, bool) {
	switch v := v.(type) {
	case starlark.Tuple:
		return v, true
	case *starlark.List:
		out := make([]starlark.Value, v.Len())
		for i := range out {
			out[i] = v.Index(i)
		}
		return out, true
	}
	return nil, false
}

// inferShape follows the first element of each nesting level.
func inferShape(v starlark.Value) ([]int, error) {
	var n Nesting
	return inferShapeIn(v, &n)
}

func inferShapeIn(v starlark.Value, n *Nesting) ([]int, error) {
	switch x := v.(type) {
	case *Array:
		return slices.Clone(x.A.Shape), nil
	case starlark.Int, starlark.Float, starlark.Bool, *Scalar:
		return []int{}, nil
	}
	items, ok := Elems(v)
	if !ok {
		return nil, fmt.Errorf("cannot convert %s to an array (want numbers, or lists, tuples or arrays of them)", v.Type())
	}
	if len(items) == 0 {
		return []int{0}, nil
	}
	if err := n.Enter(v); err != nil {
		return nil, err
	}
	inner, err := inferShapeIn(items[0], n)
	n.Leave()
	if err != nil {
		return nil, err
	}
	return append([]int{len(items)}, inner...), nil
}

func collectLeaves(v starlark.Value, shape []int, depth int, leaves *[]leaf, kind, arrayDT *int) error {
	if s, ok := v.(*Scalar); ok {
		v = &Array{A: s.A}
	}
	switch x := v.(type) {
	case *Array:
		if !nd.SameShape(x.A.Shape, shape[depth:]) {
			return raggedError(shape, depth, x.A.Shape)
		}
		dt := x.A.DType()
		if *arrayDT < 0 {
			*arrayDT = int(dt)
		} else {
			*arrayDT = int(PromoteDT(nd.DType(*arrayDT), dt))
		}
		for i, n := 0, x.A.Size(); i < n; i++ {
			f := x.A.Flat(i)
			switch {
			case dt.IsFloat():
				*leaves = append(*leaves, leaf{f: f, kind: 2})
			default:
				*leaves = append(*leaves, leaf{i: int64(f), f: f, kind: 1})
			}
		}
		return nil
	case starlark.Bool:
		if depth != len(shape) {
			return raggedError(shape, depth, nil)
		}
		f := 0.0
		if x {
			f = 1
		}
		*leaves = append(*leaves, leaf{f: f, i: int64(f)})
		*kind = max(*kind, 0)
		return nil
	case starlark.Int:
		if depth != len(shape) {
			return raggedError(shape, depth, nil)
		}
		i, ok := x.Int64()
		if !ok {
			return fmt.Errorf("integer %v is too large for an array", x)
		}
		*leaves = append(*leaves, leaf{i: i, f: float64(i), kind: 1})
		*kind = max(*kind, 1)
		return nil
	case starlark.Float:
		if depth != len(shape) {
			return raggedError(shape, depth, nil)
		}
		*leaves = append(*leaves, leaf{f: float64(x), kind: 2})
		*kind = 2
		return nil
	}
	items, ok := Elems(v)
	if !ok {
		return fmt.Errorf("cannot convert %s to an array element (want a number)", v.Type())
	}
	if depth >= len(shape) || len(items) != shape[depth] {
		return raggedError(shape, depth, []int{len(items)})
	}
	for _, it := range items {
		if err := collectLeaves(it, shape, depth+1, leaves, kind, arrayDT); err != nil {
			return err
		}
	}
	return nil
}

func raggedError(shape []int, depth int, got []int) error {
	want := "a number"
	if depth < len(shape) {
		want = fmt.Sprintf("a sequence of shape %v", shape[depth:])
	}
	what := "a number"
	if got != nil {
		what = fmt.Sprintf("a sequence of shape %v", got)
	}
	return fmt.Errorf("ragged nested sequence: at depth %d want %s (from the first elements), got %s", depth, want, what)
}

// PromoteDT is numpy's promotion of two array dtypes, as core computes
// it.
func PromoteDT(a, b nd.DType) nd.DType {
	return core.Add(core.NewInput("a", a, 0), core.NewInput("b", b, 0)).DType()
}
