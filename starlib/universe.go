package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/core"
)

// numericBuiltins are Starlark's float, int, abs and range extended as
// Python's are for numpy values: float(a) and int(a) of an array of one
// element (a 0-d result of eval, a reduction) give its value, abs(x) of a
// symbolic variable or an array is its elementwise absolute value, and
// range takes integer numpy scalars (Python's __index__). On anything
// else they are Starlark's own.
func numericBuiltins() starlark.StringDict {
	wrap := func(name string, f func(thread *starlark.Thread, x starlark.Value) (starlark.Value, bool, error)) *starlark.Builtin {
		orig := starlark.Universe[name].(*starlark.Builtin)
		return NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) == 1 && len(kwargs) == 0 {
				if v, ok, err := f(thread, args[0]); ok || err != nil {
					return v, err
				}
			}
			return orig.CallInternal(thread, args, kwargs)
		})
	}
	scalar := func(name string, x starlark.Value) (float64, bool, error) {
		if s, ok := x.(*Scalar); ok {
			return s.value(), true, nil
		}
		a, ok := x.(*Array)
		if !ok {
			return 0, false, nil
		}
		if a.A.Size() != 1 {
			return 0, true, fmt.Errorf("%s: only an array of one element converts to a number, got shape %v", name, a.A.Shape)
		}
		return a.A.Flat(0), true, nil
	}
	rangeB := starlark.Universe["range"].(*starlark.Builtin)
	return starlark.StringDict{
		"range": NewBuiltin("range", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return rangeB.CallInternal(thread, IndexArgs(args), kwargs)
		}),
		"float": wrap("float", func(thread *starlark.Thread, x starlark.Value) (starlark.Value, bool, error) {
			f, ok, err := scalar("float", x)
			return starlark.Float(f), ok, err
		}),
		"int": wrap("int", func(thread *starlark.Thread, x starlark.Value) (starlark.Value, bool, error) {
			f, ok, err := scalar("int", x)
			if !ok || err != nil {
				return nil, ok, err
			}
			return starlark.MakeInt64(int64(f)), true, nil
		}),
		"abs": wrap("abs", func(thread *starlark.Thread, x starlark.Value) (starlark.Value, bool, error) {
			switch x := x.(type) {
			case *Variable:
				return NewVariable(thread, core.Abs(x.V)), true, nil
			case *Scalar:
				if x.value() < 0 {
					r, err := x.Unary(syntax.MINUS)
					return r, true, err
				}
				return x, true, nil
			case *Array:
				a, err := ComputeArray(thread, func() (*core.Variable, error) { return core.Abs(core.NewConstant(x.A)), nil })
				if err != nil {
					return nil, true, err
				}
				return FromArray(a), true, nil
			}
			return nil, false, nil
		}),
	}
}
