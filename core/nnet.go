package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// SoftmaxOp is the softmax over the last axis; log is log-softmax,
// computed stably (max subtracted, log-sum-exp).
type SoftmaxOp struct{ log bool }

func (o SoftmaxOp) String() string {
	if o.log {
		return "LogSoftmax"
	}
	return "Softmax"
}
func (o SoftmaxOp) Type(in []*Variable) (nd.DType, int, error) {
	if in[0].ndim < 1 || !in[0].dtype.IsFloat() {
		return 0, 0, fmt.Errorf("%s needs a float variable with at least one axis, got %s", o, in[0].TypeString())
	}
	return in[0].dtype, in[0].ndim, nil
}
func (o SoftmaxOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// Log says whether the op is log-softmax.
func (o SoftmaxOp) Log() bool { return o.log }

func (o SoftmaxOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(SoftmaxGradOp{o.log}, out, gz)}
}

// softmaxGradOp: for softmax s, gx = s·(g − Σg·s); for log-softmax l,
// gx = g − exp(l)·Σg (sums over the last axis).
type SoftmaxGradOp struct{ log bool }

func (o SoftmaxGradOp) String() string {
	if o.log {
		return "LogSoftmaxGrad"
	}
	return "SoftmaxGrad"
}
func (o SoftmaxGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (o SoftmaxGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// Log says whether the op is log-softmax's gradient.
func (o SoftmaxGradOp) Log() bool { return o.log }

func (o SoftmaxGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	// Second derivatives of the softmax are not needed by Blocks' rules.
	return []*Variable{nil, nil}
}

// Softmax is the softmax over the last axis.
func Softmax(x *Variable) (*Variable, error) { return tryApply(SoftmaxOp{}, x) }

// LogSoftmax is the numerically stable log of the softmax.
func LogSoftmax(x *Variable) (*Variable, error) { return tryApply(SoftmaxOp{log: true}, x) }

// PickOp picks x[i, y[i]] from a matrix x for an integer vector y.
type PickOp struct{}

func (PickOp) String() string { return "Pick" }
func (PickOp) Type(in []*Variable) (nd.DType, int, error) {
	x, y := in[0], in[1]
	if x.ndim != 2 || y.ndim != 1 || y.dtype.IsFloat() {
		return 0, 0, fmt.Errorf("pick needs a matrix and an integer vector, got %s and %s", x.TypeString(), y.TypeString())
	}
	return x.dtype, 1, nil
}
func (PickOp) Shape(in [][]int) ([]int, error) {
	if in[0][0] != in[1][0] {
		return nil, fmt.Errorf("%d rows of predictions for %d targets", in[0][0], in[1][0])
	}
	return []int{in[0][0]}, nil
}
func (PickOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{apply(PickGradOp{}, in[0], in[1], gz), nil}
}

// PickGradOp scatters gz into zeros shaped like x at (i, y[i]).
type PickGradOp struct{}

func (PickGradOp) String() string { return "PickGrad" }
func (PickGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, 2, nil
}
func (PickGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (PickGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, nil, apply(PickOp{}, gz, in[1])}
}

// Pick returns x[arange(n), y]: for each row of x the entry y names.
func Pick(x, y *Variable) (*Variable, error) { return tryApply(PickOp{}, x, y) }

// CategoricalCrossEntropy is Theano's categorical_crossentropy(p, y) for
// integer targets y: −log p[i, y[i]] per row. When p is a softmax (seen
// through copies), it is computed from the log-softmax of the softmax's
// input, as Theano's optimizer does, so that it stays finite.
func CategoricalCrossEntropy(p, y *Variable) (*Variable, error) {
	if y.dtype.IsFloat() {
		if y.ndim != p.ndim {
			return nil, fmt.Errorf("categorical_crossentropy: one-hot targets must be %d-d like the predictions, got %s", p.ndim, y.TypeString())
		}
		// Σ_j −y_j log p_j per row.
		s, err := Sum(Mul(y, Log(p)), []int{-1}, false, nil)
		if err != nil {
			return nil, err
		}
		return Neg(s), nil
	}
	base := p
	for base.kind == KindOp {
		if _, ok := base.op.(CopyOp); !ok {
			break
		}
		base = base.inputs[0]
	}
	var logp *Variable
	if op, ok := base.op.(SoftmaxOp); ok && !op.log {
		logp = apply(SoftmaxOp{log: true}, base.inputs[0])
	} else {
		logp = Log(p)
	}
	picked, err := Pick(logp, y)
	if err != nil {
		return nil, fmt.Errorf("categorical_crossentropy: %v", err)
	}
	return Neg(picked), nil
}

// Check refuses targets outside the predictions' columns.
func (PickOp) Check(in []*nd.Array) error {
	x, y := in[0], in[1]
	k := x.Shape[1]
	for i := 0; i < y.Size(); i++ {
		if j := int(y.Flat(i)); j < 0 || j >= k {
			return fmt.Errorf("target %d of row %d is outside the %d classes [0, %d)", j, i, k, k)
		}
	}
	return nil
}
