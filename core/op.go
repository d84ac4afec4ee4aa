package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// Op is an operation of the symbolic graph. Ops are values without state
// besides their parameters; an executor calls Shape once per input-shape
// signature and the op's kernel once per call.
//
// An op's kernels are its backends': the CPU backend (core/exec/cpu)
// registers a kernel per op type of this package, and runs the op's own
// Run (Runner) for an op defined outside it; other backends run their own
// kernels for the ops Spec describes. An op may also have the optional
// methods an executor looks for (lowered.go): IsView (ViewOp: the output
// shares its first input's data for these shapes, and the plan allocates
// nothing for it) and Check (Checker: validate input values first).
type Op interface {
	fmt.Stringer
	// Type is the output's dtype and number of dimensions for these inputs.
	Type(in []*Variable) (nd.DType, int, error)
	// Shape is the output shape for these input shapes.
	Shape(in [][]int) ([]int, error)
	// Grad returns one gradient per input (nil where there is none) given
	// the op's output and the gradient gz of the cost with respect to it.
	Grad(in []*Variable, out, gz *Variable) []*Variable
}

// The optional methods an executor looks for, checked here.
var (
	_ ViewOp  = CopyOp{}
	_ Checker = PickOp{}
)

// apply makes the variable op(inputs...). It panics when the op refuses the
// inputs: exported constructors check their arguments first, and internal
// callers (gradients) only build well-typed graphs.
func apply(op Op, inputs ...*Variable) *Variable {
	dt, ndim, err := op.Type(inputs)
	if err != nil {
		panic(fmt.Sprintf("core: %v", err))
	}
	return newVar(KindOp, op, inputs, dt, ndim)
}

// tryApply is apply for user-facing constructors: a refused input is an
// error.
func tryApply(op Op, inputs ...*Variable) (*Variable, error) {
	dt, ndim, err := op.Type(inputs)
	if err != nil {
		return nil, err
	}
	return newVar(KindOp, op, inputs, dt, ndim), nil
}

// CopyOp is Theano's tensor copy: the identity, run as a view.
type CopyOp struct{}

func (CopyOp) String() string { return "copy" }
func (CopyOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (CopyOp) Shape(in [][]int) ([]int, error)                    { return in[0], nil }
func (CopyOp) IsView(in [][]int, out []int) bool                  { return true }
func (CopyOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{gz} }
