package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// CompareSameType compares slices by value, as Python does (Subset's
// tests compare the slices a Subset gives).
func (s *SliceValue) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	o := y.(*SliceValue)
	switch op {
	case syntax.EQL, syntax.NEQ:
		eq, err := starlark.EqualDepth(starlark.Tuple{s.Start, s.Stop, s.Step}, starlark.Tuple{o.Start, o.Stop, o.Step}, depth)
		if err != nil {
			return false, err
		}
		return eq == (op == syntax.EQL), nil
	}
	return false, fmt.Errorf("slice %s slice is not supported", op)
}
