package starlib

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// BuiltinFunc is the Go signature of a Starlark builtin.
type BuiltinFunc = func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)

// NewBuiltin is starlark.NewBuiltin with a recover: a Go panic inside fn
// becomes the error "internal error in NAME: ...", which the interpreter
// reports with the script's backtrace instead of crashing the program.
// (Module members are wrapped by the loader anyway; use NewBuiltin for
// the methods of your value types.)
//
// A builtin that refuses a numpy scalar argument where it unpacks a number
// (go.starlark.net's "got numpy.int64, want int") is called once more
// with its numpy scalar arguments replaced by their numbers, as Python
// takes a numpy scalar wherever it takes an int (__index__) or a float
// (scalar.go).
func NewBuiltin(name string, fn BuiltinFunc) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
		defer RecoverInternal(b.Name(), &err)
		v, err = fn(thread, b, args, kwargs)
		if err != nil && refusedScalar(err) {
			if nargs, nkwargs, ok := scalarNumberArgs(args, kwargs); ok {
				return fn(thread, b, nargs, nkwargs)
			}
		}
		return v, err
	})
}

// refusedScalar reports whether err is an argument's unpacking refusing a
// numpy scalar (not an error of script code the builtin called).
func refusedScalar(err error) bool {
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "got numpy.") && (strings.Contains(msg, "want int") || strings.Contains(msg, "want float") || strings.Contains(msg, "want a number"))
}

// scalarNumberArgs are args and kwargs with every numpy scalar replaced by
// its number; ok is false when there is none.
func scalarNumberArgs(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Tuple, []starlark.Tuple, bool) {
	found := false
	number := func(v starlark.Value) starlark.Value {
		if s, ok := v.(*Scalar); ok {
			found = true
			return s.Number()
		}
		return v
	}
	nargs := make(starlark.Tuple, len(args))
	for i, a := range args {
		nargs[i] = number(a)
	}
	nkwargs := make([]starlark.Tuple, len(kwargs))
	for i, kv := range kwargs {
		nkwargs[i] = starlark.Tuple{kv[0], number(kv[1])}
	}
	return nargs, nkwargs, found
}

// RecoverInternal turns a panic into *errp. Use as
// `defer recoverInternal(name, &err)`.
func RecoverInternal(name string, errp *error) {
	r := recover()
	if r == nil {
		return
	}
	// An allocation the memory budget refused (nd.New's panic) is the
	// script's error, not a bug.
	switch e := r.(type) {
	case *nd.SizeError:
		*errp = e
		return
	case *nd.BudgetError:
		*errp = e
		return
	}
	if re, ok := r.(runtime.Error); ok {
		*errp = fmt.Errorf("internal error in %s: %v (please report this bug)", name, re)
		return
	}
	*errp = fmt.Errorf("internal error in %s: %v", name, r)
}

// FloatArg is the float64 of a Starlark int or float (an Unpacker).
type FloatArg float64

// Unpack implements starlark.Unpacker.
func (f *FloatArg) Unpack(v starlark.Value) error {
	if s, ok := v.(*Scalar); ok {
		v = s.Number()
	}
	x, ok := starlark.AsFloat(v)
	if !ok {
		return fmt.Errorf("got %s, want a number", v.Type())
	}
	*f = FloatArg(x)
	return nil
}

// Axes unpacks an axis argument: None (every axis, Axes nil), an int or a
// tuple or list of ints.
type Axes struct {
	Axes []int
}

// Unpack implements starlark.Unpacker.
func (a *Axes) Unpack(v starlark.Value) error {
	v = IndexValue(v)
	if v == starlark.None {
		a.Axes = nil
		return nil
	}
	if _, ok := v.(starlark.Int); ok {
		var i int
		if err := starlark.AsInt(IndexValue(v), &i); err != nil {
			return err
		}
		a.Axes = []int{i}
		return nil
	}
	ints, err := AsInts(v)
	if err != nil {
		return fmt.Errorf("got %s, want None, an int or a tuple of ints", v.Type())
	}
	if ints == nil {
		ints = []int{}
	}
	a.Axes = ints
	return nil
}

// Axis unpacks None (Axis nil) or a single int.
type Axis struct {
	Axis *int
}

// Unpack implements starlark.Unpacker.
func (a *Axis) Unpack(v starlark.Value) error {
	if v == starlark.None {
		a.Axis = nil
		return nil
	}
	var i int
	if err := starlark.AsInt(IndexValue(v), &i); err != nil {
		return fmt.Errorf("got %s, want None or an int", v.Type())
	}
	a.Axis = &i
	return nil
}

// DTypeArg unpacks a dtype argument: None (not given), or a numpy dtype
// name such as "float32", "int64", "uint8", or "floatX", which stands for
// the run's floatX (resolve it with Get).
type DTypeArg struct {
	// Name is the name as given ("" for None); FloatX is true for "floatX".
	Name   string
	FloatX bool
	dt     nd.DType
}

// Unpack implements starlark.Unpacker.
func (d *DTypeArg) Unpack(v starlark.Value) error {
	if v == starlark.None {
		*d = DTypeArg{}
		return nil
	}
	s, ok := starlark.AsString(v)
	if !ok {
		return fmt.Errorf("got %s, want a dtype name such as \"float32\" or \"floatX\"", v.Type())
	}
	if s == "floatX" {
		*d = DTypeArg{Name: s, FloatX: true}
		return nil
	}
	dt, err := nd.ParseDType(s)
	if err != nil {
		return fmt.Errorf("unknown dtype %q (want floatX, float32, float64, int64, int32, uint8 or bool)", s)
	}
	*d = DTypeArg{Name: s, dt: dt}
	return nil
}

// IsSet reports whether a dtype was given.
func (d DTypeArg) IsSet() bool { return d.Name != "" }

// Get returns the dtype, with floatX resolved for the thread, or nil when
// none was given.
func (d DTypeArg) Get(thread *starlark.Thread) *nd.DType {
	if !d.IsSet() {
		return nil
	}
	dt := d.dt
	if d.FloatX {
		dt = FloatX(thread)
	}
	return &dt
}

// ParseDType reads a dtype name, "floatX" included, for the thread.
func ParseDType(thread *starlark.Thread, s string) (nd.DType, error) {
	var d DTypeArg
	if err := d.Unpack(starlark.String(s)); err != nil {
		return 0, err
	}
	return *d.Get(thread), nil
}

// AsInts reads a tuple or list of ints (a shape, a list of axes).
func AsInts(v starlark.Value) ([]int, error) {
	var items []starlark.Value
	switch v := v.(type) {
	case starlark.Tuple:
		items = v
	case *starlark.List:
		for i := 0; i < v.Len(); i++ {
			items = append(items, v.Index(i))
		}
	default:
		return nil, fmt.Errorf("got %s, want a tuple or list of ints", v.Type())
	}
	out := make([]int, len(items))
	for i, x := range items {
		if err := starlark.AsInt(IndexValue(x), &out[i]); err != nil {
			return nil, fmt.Errorf("item %d: got %s, want int", i, x.Type())
		}
	}
	return out, nil
}

// ShapeArgs reads a shape given either as one tuple or list argument or as
// several int arguments (x.reshape((2, 3)) and x.reshape(2, 3)).
func ShapeArgs(fname string, args starlark.Tuple) ([]int, error) {
	if len(args) == 1 {
		if _, ok := IndexValue(args[0]).(starlark.Int); !ok {
			s, err := AsInts(args[0])
			if err != nil {
				return nil, fmt.Errorf("%s: shape: %v", fname, err)
			}
			return s, nil
		}
	}
	s, err := AsInts(args)
	if err != nil {
		return nil, fmt.Errorf("%s: shape: %v", fname, err)
	}
	return s, nil
}

// ToVariable converts a Starlark value to a symbolic variable: a
// TensorVariable is itself; an int (or bool) is an int64 constant and a
// float a floatX constant, both of which take the dtype of the variable
// they meet (Theano's autocasting); an ndarray is a constant of its
// dtype; a (nested) list or tuple is a constant array, floatX when it
// holds a float, int64 otherwise, or, when it holds a variable, its
// elements stacked (Theano's as_tensor_variable).
func ToVariable(v starlark.Value, floatX nd.DType) (*core.Variable, error) {
	switch v := v.(type) {
	case *Variable:
		return v.V, nil
	case starlark.Bool:
		if v {
			return core.Const(nd.Int64, 1), nil
		}
		return core.Const(nd.Int64, 0), nil
	case starlark.Int:
		f, ok := starlark.AsFloat(v)
		if !ok || math.Abs(f) > 1<<63 {
			return nil, fmt.Errorf("integer %v is too large for int64", v)
		}
		return core.Const(nd.Int64, f), nil
	case starlark.Float:
		return core.Const(floatX, float64(v)), nil
	case *Array:
		return core.NewConstant(v.A), nil
	case *Scalar:
		return core.NewConstant(v.A), nil
	case starlark.Tuple, *starlark.List:
		if holdsVariable(v) {
			return stackElements(v.(starlark.Indexable), floatX)
		}
		a, err := ToArrayFloat(v, floatX)
		if err != nil {
			return nil, err
		}
		return core.NewConstant(a), nil
	}
	return nil, fmt.Errorf("got %s, want a tensor variable, a number, an array or a list", v.Type())
}

// holdsVariable reports whether a (nested) list or tuple holds a symbolic
// variable.
func holdsVariable(v starlark.Value) bool {
	switch v := v.(type) {
	case *Variable:
		return true
	case starlark.Tuple, *starlark.List:
		xs := v.(starlark.Indexable)
		for i := 0; i < xs.Len(); i++ {
			if holdsVariable(xs.Index(i)) {
				return true
			}
		}
	}
	return false
}

// stackElements is Theano's as_tensor_variable of a list holding
// variables: its elements, each converted, stacked on a new first axis
// (tensor.sum([a.size, b.size]) sums two scalars).
func stackElements(xs starlark.Indexable, floatX nd.DType) (*core.Variable, error) {
	vs := make([]*core.Variable, xs.Len())
	for i := range vs {
		v, err := ToVariable(xs.Index(i), floatX)
		if err != nil {
			return nil, fmt.Errorf("element %d: %v", i, err)
		}
		vs[i] = v
	}
	return core.Stack(vs, 0)
}

// AsVariable is ToVariable with the thread's floatX.
func AsVariable(thread *starlark.Thread, v starlark.Value) (*core.Variable, error) {
	return ToVariable(v, FloatX(thread))
}

// NewVariable wraps a symbolic variable for Starlark and records in its
// Trace where the calling script made it (see SetTrace). Builtins return
// their results through it.
func NewVariable(thread *starlark.Thread, v *core.Variable) *Variable {
	SetTrace(thread, v)
	return &Variable{V: v}
}

// SetTrace records in v.Trace the script position ("file.star:12:5") of
// the innermost Starlark call on the thread's stack, the line that made
// v. A variable that already has a trace keeps it.
func SetTrace(thread *starlark.Thread, v *core.Variable) {
	if thread == nil || v.Trace != "" {
		return
	}
	for d := 0; d < thread.CallStackDepth(); d++ {
		fr := thread.CallFrame(d)
		if fn := fr.Pos.Filename(); fn != "" && fn != "<builtin>" {
			v.Trace = fr.Pos.String()
			return
		}
	}
}

// NumberValue converts a float64 element of an array of dtype dt to a
// Starlark number: int for integer dtypes, bool for bool, float otherwise.
func NumberValue(dt nd.DType, x float64) starlark.Value {
	switch {
	case dt == nd.Bool:
		return starlark.Bool(x != 0)
	case dt.IsFloat():
		return starlark.Float(x)
	}
	return starlark.MakeInt64(int64(x))
}

// JoinNames quotes and joins names for messages.
func JoinNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// ShapeArg unpacks a shape: an int or a tuple or list of ints.
type ShapeArg struct{ Shape []int }

// Unpack implements starlark.Unpacker.
func (s *ShapeArg) Unpack(v starlark.Value) error {
	v = IndexValue(v)
	if _, ok := v.(starlark.Int); ok {
		var n int
		if err := starlark.AsInt(IndexValue(v), &n); err != nil {
			return err
		}
		s.Shape = []int{n}
	} else {
		sh, err := AsInts(v)
		if err != nil {
			return fmt.Errorf("got %s, want an int or a tuple of ints", v.Type())
		}
		s.Shape = sh
	}
	for _, d := range s.Shape {
		if d < 0 {
			return fmt.Errorf("negative dimensions are not allowed: %v", s.Shape)
		}
	}
	if _, ok := nd.ProdChecked(s.Shape); !ok {
		return &nd.SizeError{Shape: s.Shape}
	}
	return nil
}
