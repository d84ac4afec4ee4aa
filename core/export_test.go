package core

// What core's external tests (package core_test, which link the CPU
// backend: core itself imports no backend) reach of core's internals.

import (
	"github.com/blocks-go/blocks/nd"
)

// Conv2dGradWeights is the filters' gradient op applied to x and gz, the
// filters wl standing for their shape.
func Conv2dGradWeights(x, gz, wl *Variable, opts Conv2dOptions) *Variable {
	p, err := opts.params()
	if err != nil {
		panic(err)
	}
	return apply(Conv2DGradWeightsOp{convParams: p}, x, gz, wl)
}

// UncheckedSoftmax is softmax of x built without its type check, with
// the node's dtype dt.
func UncheckedSoftmax(x *Variable, dt nd.DType) *Variable {
	return newVar(KindOp, SoftmaxOp{}, []*Variable{x}, dt, x.ndim)
}

// ScanStepPlans is how many shape signatures the step function of the
// loop v's op runs has been planned for.
func ScanStepPlans(v *Variable) int {
	return v.op.(*ScanOp).info.step.exec.(interface{ Plans() int }).Plans()
}
