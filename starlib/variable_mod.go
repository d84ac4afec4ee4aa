package starlib

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// modVariable is Python's (and Theano's) x % y: the remainder with the
// sign of y, x - y*floor(x/y). floor is the truncation toward zero, less
// one where that rounded up (a negative quotient with a fraction).
func modVariable(x, y *core.Variable) *core.Variable {
	dt := x.DType()
	if y.DType().IsFloat() && !dt.IsFloat() {
		dt = y.DType()
	}
	if !dt.IsFloat() {
		dt = nd.Float64
	}
	q := core.Div(core.Cast(x, dt), core.Cast(y, dt))
	r := core.Sub(core.Cast(x, dt), core.Mul(core.Cast(y, dt), core.Floor(q)))
	if !x.DType().IsFloat() && !y.DType().IsFloat() {
		return core.Cast(r, x.DType())
	}
	return r
}
