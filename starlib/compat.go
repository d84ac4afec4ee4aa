package starlib

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// Unexported names of exported helpers, for the blocks.* and fuel.*
// files that have not yet moved to their own packages (they go with
// that move).

func elems(v starlark.Value) ([]starlark.Value, bool) { return Elems(v) }

func variables(thread *starlark.Thread, fname string, params []string, vals ...starlark.Value) ([]*core.Variable, error) {
	return Variables(thread, fname, params, vals...)
}

func toArrayFloat(v starlark.Value, floatX nd.DType) (*nd.Array, error) {
	return ToArrayFloat(v, floatX)
}

func numberValue(dt nd.DType, x float64) starlark.Value { return NumberValue(dt, x) }

var (
	tensorFunction = TheanoFunction
	tensorShared   = TheanoShared
)
