package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// CompareSameType: two values of one generator are equal (a child brick
// shares its parent's rng).
func (r *RandomState) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	switch op {
	case syntax.EQL:
		return r.R == y.(*RandomState).R, nil
	case syntax.NEQ:
		return r.R != y.(*RandomState).R, nil
	}
	return false, fmt.Errorf("RandomState values are not ordered")
}
