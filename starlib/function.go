package starlib

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu" // the CPU backend, which core.Compile runs on
	"github.com/blocks-go/blocks/nd"
)

// Function is a compiled function (tensor.function): called with one
// value per input, in order (arrays, or lists and numbers converted to the
// input's dtype), it returns its output as an array, or a list of arrays
// when it was compiled with a list of outputs, and applies its updates.
type Function struct {
	F      *core.Function
	single bool // outputs was one variable, not a list
	// downcast is Theano's allow_input_downcast: an array of a dtype that
	// cannot feed an input without loss (float64 into float32) is cast.
	downcast bool
}

var _ starlark.Callable = (*Function)(nil)

func (f *Function) String() string {
	var ins []string
	for _, in := range f.F.Inputs() {
		ins = append(ins, in.String())
	}
	return fmt.Sprintf("<function (%s)>", strings.Join(ins, ", "))
}
func (f *Function) Type() string          { return "Function" }
func (f *Function) Freeze()               {}
func (f *Function) Truth() starlark.Bool  { return true }
func (f *Function) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: Function") }
func (f *Function) Name() string          { return "function" }

// CallInternal runs the function.
func (f *Function) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (r starlark.Value, err error) {
	defer RecoverInternal("function", &err)
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("function: unexpected keyword arguments (give the inputs by position)")
	}
	ins := f.F.Inputs()
	if len(args) != len(ins) {
		return nil, fmt.Errorf("function: got %d arguments, want %d (%s)", len(args), len(ins), varList(ins))
	}
	vals := make([]*nd.Array, len(args))
	for i, a := range args {
		if arr, ok := a.(*Array); ok && f.downcast && !core.CanFeed(arr.A.DType(), ins[i].DType()) {
			a = &Array{A: arr.A.Astype(ins[i].DType())}
		}
		if vals[i], err = InputArray(ins[i], a); err != nil {
			return nil, fmt.Errorf("function: argument %d: %v", i+1, err)
		}
	}
	outs, err := f.F.Call(vals)
	if err != nil {
		return nil, fmt.Errorf("function: %v", err)
	}
	if f.single {
		return FromArray(outs[0]), nil
	}
	res := make([]starlark.Value, len(outs))
	for i, o := range outs {
		res[i] = FromArray(o)
	}
	return starlark.NewList(res), nil
}

func varList(vs []*core.Variable) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}

// VariableList reads a variable or a list or tuple of them; single
// reports whether it was one variable. Non-variables are converted as
// ToVariable does.
func VariableList(thread *starlark.Thread, v starlark.Value) (vars []*core.Variable, single bool, err error) {
	if _, ok := v.(*Variable); ok {
		x, _ := AsVariable(thread, v)
		return []*core.Variable{x}, true, nil
	}
	items, ok := Elems(v)
	if !ok {
		return nil, false, fmt.Errorf("got %s, want a variable or a list of variables", v.Type())
	}
	for i, it := range items {
		x, err := AsVariable(thread, it)
		if err != nil {
			return nil, false, fmt.Errorf("item %d: %v", i, err)
		}
		vars = append(vars, x)
	}
	return vars, false, nil
}

// Updates reads Theano's updates: a dict {shared: new_value} or a list of
// (shared, new_value) pairs; None gives none.
func Updates(thread *starlark.Thread, v starlark.Value) ([]core.Update, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	var pairs []starlark.Tuple
	if d, ok := v.(*starlark.Dict); ok {
		pairs = d.Items()
	} else {
		items, ok := Elems(v)
		if !ok {
			return nil, fmt.Errorf("updates: got %s, want a dict or a list of (shared variable, value) pairs", v.Type())
		}
		for i, it := range items {
			p, ok := Elems(it)
			if !ok || len(p) != 2 {
				return nil, fmt.Errorf("updates: item %d is not a (shared variable, value) pair", i)
			}
			pairs = append(pairs, starlark.Tuple(p))
		}
	}
	var ups []core.Update
	for _, p := range pairs {
		s, ok := p[0].(*Variable)
		if !ok || !s.V.IsShared() {
			return nil, fmt.Errorf("updates: %s is not a shared variable", p[0])
		}
		val, err := AsVariable(thread, p[1])
		if err != nil {
			return nil, fmt.Errorf("updates: new value of %s: %v", s, err)
		}
		ups = append(ups, core.Update{Shared: s.V, Value: val})
	}
	return ups, nil
}
