package blocks

import (
	"fmt"
	"reflect"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// splitName takes TrainingExtension's name= out of an extension's
// keywords (Blocks passes it through **kwargs to every extension); None
// keeps the class name.
func splitName(class string, kwargs []starlark.Tuple) (string, []starlark.Tuple, error) {
	var name string
	var rest []starlark.Tuple
	for _, kv := range kwargs {
		if string(kv[0].(starlark.String)) != "name" {
			rest = append(rest, kv)
			continue
		}
		switch v := kv[1].(type) {
		case starlark.String:
			name = string(v)
		case starlark.NoneType:
		default:
			return "", nil, fmt.Errorf("%s: name must be a string or None, got %s", class, v.Type())
		}
	}
	return name, rest, nil
}

// CompareSameType compares extensions by identity, as Python compares
// objects: main_loop.extensions gives back the extensions the script made.
func (e *Extension) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	o := y.(*Extension)
	same := e == o
	if !same && reflect.TypeOf(e.E) == reflect.TypeOf(o.E) && reflect.TypeOf(e.E).Comparable() {
		same = e.E == o.E
	}
	switch op {
	case syntax.EQL:
		return same, nil
	case syntax.NEQ:
		return !same, nil
	}
	return false, fmt.Errorf("%s %s %s not supported", e.Type(), op, o.Type())
}
