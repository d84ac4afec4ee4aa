package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// FusedKernel computes several elementwise results in one pass over its
// inputs. out holds Parts arrays, each shaped like the first input; in
// holds the inputs in the order given to Fused: arrays shaped like the
// first input (same dtype) and 0-d scalars (any float dtype). Run must
// handle []float32 and []float64 data.
type FusedKernel interface {
	// Name names the kernel in graph printouts and errors.
	Name() string
	// Parts is the number of results.
	Parts() int
	// Run computes the results.
	Run(out, in []*nd.Array)
}

// FusedOp runs a FusedKernel; its output stacks the kernel's results
// along a new first axis, and fusedPartOp views one of them.
type FusedOp struct{ k FusedKernel }

func (o FusedOp) String() string { return "fused_" + o.k.Name() }

func (o FusedOp) Type(in []*Variable) (nd.DType, int, error) {
	if len(in) == 0 {
		return 0, 0, fmt.Errorf("%s: no inputs", o)
	}
	first := in[0]
	if !first.dtype.IsFloat() {
		return 0, 0, fmt.Errorf("%s: the first input %s is %s, want a float", o, first, first.dtype)
	}
	for _, v := range in[1:] {
		switch {
		case v.ndim == 0 && v.dtype.IsFloat():
		case v.ndim == first.ndim && v.dtype == first.dtype:
		default:
			return 0, 0, fmt.Errorf("%s: input %s (%s) is neither a float scalar nor a %d-d %s like %s",
				o, v, v.TypeString(), first.ndim, first.dtype, first)
		}
	}
	return first.dtype, first.ndim + 1, nil
}

func (o FusedOp) Shape(in [][]int) ([]int, error) {
	first := in[0]
	for _, s := range in[1:] {
		if len(s) == 0 && len(first) != 0 {
			continue
		}
		if !nd.SameShape(s, first) {
			return nil, fmt.Errorf("%s: input of shape %s does not match the first input's %s", o, nd.ShapeString(s), nd.ShapeString(first))
		}
	}
	return append([]int{o.k.Parts()}, first...), nil
}

// Kernel is the fused kernel the op runs.
func (o FusedOp) Kernel() FusedKernel { return o.k }

func (o FusedOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// FusedPartOp is a view of one result of a fusedOp.
type FusedPartOp struct{ part int }

func (o FusedPartOp) String() string { return fmt.Sprintf("fused_part_%d", o.part) }
func (o FusedPartOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim - 1, nil
}
func (o FusedPartOp) Shape(in [][]int) ([]int, error)   { return in[0][1:], nil }
func (o FusedPartOp) IsView(in [][]int, out []int) bool { return true }

// Part is the result the op views.
func (o FusedPartOp) Part() int { return o.part }

func (o FusedPartOp) Grad(in []*Variable, out, gz *Variable) []*Variable { return []*Variable{nil} }

// Fused applies a fused elementwise kernel to inputs and returns its
// k.Parts() results, each shaped like inputs[0]. The kernel runs once per
// call of the compiled function, one pass over the data; the results are
// views into one buffer, so an update from a result is a plain copy.
// Fused results are not differentiable (they are meant for step rules and
// other update expressions).
func Fused(k FusedKernel, inputs ...*Variable) ([]*Variable, error) {
	if k.Parts() < 1 {
		return nil, fmt.Errorf("fused kernel %s has no results", k.Name())
	}
	all, err := tryApply(FusedOp{k}, inputs...)
	if err != nil {
		return nil, err
	}
	out := make([]*Variable, k.Parts())
	for p := range out {
		out[p] = apply(FusedPartOp{p}, all)
	}
	return out, nil
}
