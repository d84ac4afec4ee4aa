package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// Pooling modes, Theano's names.
const (
	PoolMax        = "max"
	PoolSum        = "sum"
	PoolAverageInc = "average_inc_pad"
	PoolAverageExc = "average_exc_pad"
)

// PoolOptions are Theano's pool_2d arguments.
type PoolOptions struct {
	// Size is the pooling window (ws), Step its stride (default Size).
	Size, Step [2]int
	// Pad pads the image with (rows, cols) on each side; it needs
	// IgnoreBorder and must be smaller than the window.
	Pad [2]int
	// IgnoreBorder drops a partial window at the bottom and right edges.
	IgnoreBorder bool
	// Mode is PoolMax, PoolSum, PoolAverageInc or PoolAverageExc.
	Mode string
}

// Pool2DOp is Theano's pool_2d.
type Pool2DOp struct {
	o PoolOptions
}

// Options are the pooling's options, its defaults filled in.
func (op Pool2DOp) Options() PoolOptions { return op.o }

func (op Pool2DOp) String() string {
	return fmt.Sprintf("Pool{ws=(%d, %d), stride=(%d, %d), pad=(%d, %d), ignore_border=%v, mode=%s}",
		op.o.Size[0], op.o.Size[1], op.o.Step[0], op.o.Step[1], op.o.Pad[0], op.o.Pad[1], op.o.IgnoreBorder, op.o.Mode)
}

func (op Pool2DOp) Type(in []*Variable) (nd.DType, int, error) {
	x := in[0]
	if x.ndim < 2 || !x.dtype.IsFloat() {
		return 0, 0, fmt.Errorf("pool_2d needs a float variable with at least 2 dimensions, got %s (%s)", x, x.TypeString())
	}
	return x.dtype, x.ndim, nil
}

// PoolOutputSize is the pooled length of an axis of length n (Theano's
// Pool.out_shape).
func PoolOutputSize(n, ws, st, pad int, ignoreBorder bool) int {
	r := n + 2*pad
	if ignoreBorder {
		return max(0, (r-ws)/st+1)
	}
	if st >= ws {
		return (r-1)/st + 1
	}
	return max(0, (r-1-ws+st)/st) + 1
}

func (op Pool2DOp) outShape(s []int) []int {
	d := len(s)
	out := append([]int(nil), s...)
	out[d-2] = PoolOutputSize(s[d-2], op.o.Size[0], op.o.Step[0], op.o.Pad[0], op.o.IgnoreBorder)
	out[d-1] = PoolOutputSize(s[d-1], op.o.Size[1], op.o.Step[1], op.o.Pad[1], op.o.IgnoreBorder)
	return out
}

func (op Pool2DOp) Shape(in [][]int) ([]int, error) { return op.outShape(in[0]), nil }

func newPoolOp(o PoolOptions) Pool2DOp { return Pool2DOp{o: o} }

func (op Pool2DOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if op.o.Mode == PoolMax {
		return []*Variable{apply(PoolGradOp{newPoolOp(op.o)}, in[0], out, gz)}
	}
	return []*Variable{apply(PoolGradOp{newPoolOp(op.o)}, in[0], gz)}
}

// PoolGradOp is the gradient of a pooling: inputs x, the pooled output and
// gz for max pooling (Theano's MaxPoolGrad: every entry equal to its
// window's maximum gets gz), x and gz for sum and average pooling.
type PoolGradOp struct{ Pool2DOp }

func (op PoolGradOp) String() string { return "PoolGrad" + op.Pool2DOp.String()[4:] }
func (op PoolGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (op PoolGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }

// Grad: second derivatives of pooling are not needed by Blocks' rules
// except through sum and average pooling, which are linear in gz.
func (op PoolGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if op.o.Mode == PoolMax {
		return []*Variable{nil, nil, nil}
	}
	return []*Variable{nil, apply(newPoolOp(op.o), gz)}
}

// Pool2d is Theano's pool_2d over the last two axes of x.
func Pool2d(x *Variable, o PoolOptions) (*Variable, error) {
	if o.Step == [2]int{} {
		o.Step = o.Size
	}
	if o.Mode == "" {
		o.Mode = PoolMax
	}
	switch o.Mode {
	case PoolMax, PoolSum, PoolAverageInc, PoolAverageExc:
	default:
		return nil, fmt.Errorf("pool_2d: unknown mode %q (want max, sum, average_inc_pad or average_exc_pad)", o.Mode)
	}
	for a := 0; a < 2; a++ {
		if o.Size[a] < 1 || o.Step[a] < 1 || o.Pad[a] < 0 {
			return nil, fmt.Errorf("pool_2d: pooling size %v and step %v must be positive, padding %v non-negative", o.Size, o.Step, o.Pad)
		}
		if o.Pad[a] >= o.Size[a] {
			return nil, fmt.Errorf("pool_2d: padding %v must be smaller than the pooling size %v", o.Pad, o.Size)
		}
	}
	if o.Pad != [2]int{} && !o.IgnoreBorder {
		return nil, fmt.Errorf("pool_2d: padding (%d, %d) works only with ignore_border=True (as in Theano)", o.Pad[0], o.Pad[1])
	}
	return tryApply(newPoolOp(o), x)
}
