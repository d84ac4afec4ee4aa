package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// compareIdentity answers == and != for values compared by identity.
func compareIdentity(op syntax.Token, same bool) (bool, error) {
	switch op {
	case syntax.EQL:
		return same, nil
	case syntax.NEQ:
		return !same, nil
	}
	return false, fmt.Errorf("%s not supported", op)
}

// variableList converts Go variables to a Starlark list.
func variableList(thread *starlark.Thread, vs []*core.Variable) *starlark.List {
	out := make([]starlark.Value, len(vs))
	for i, v := range vs {
		out[i] = starlib.NewVariable(thread, v)
	}
	return starlark.NewList(out)
}

// variablesOf reads a Variable or an iterable of Variables.
func variablesOf(thread *starlark.Thread, what string, v starlark.Value) ([]*core.Variable, error) {
	if x, ok := v.(*starlib.Variable); ok {
		return []*core.Variable{x.V}, nil
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s: got %s, want a variable or a list of variables", what, v.Type())
	}
	var out []*core.Variable
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for i := 0; iter.Next(&x); i++ {
		xv, ok := x.(*starlib.Variable)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: got %s, want a variable", what, i, x.Type())
		}
		out = append(out, xv.V)
	}
	return out, nil
}
