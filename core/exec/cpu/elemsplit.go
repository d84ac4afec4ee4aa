package cpu

// Splitting the generic elementwise kernels (elemwise.go) and the column
// sums of sum_to (elemwise.go) across the workers for large float tensors:
// the split, its partition and its jobs are the CPU backend's
// (core/exec/cpu/kernels/elemsplit.go), the loops elemwise.go's. Each
// element is computed by the same code either way, so results do not
// depend on the split.

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
)

// binSplit runs binLoop over [0, n) split when large; false when T is not
// a float type or the loop is not split (the caller runs it serially).
func binSplit[T any](k core.ElemKind, out any, a []T, sa int, b []T, sb int, n int) bool {
	switch a := any(a).(type) {
	case []float32:
		return kernels.BinSplit(binLoopOp[float32], int(k), out, a, sa, any(b).([]float32), sb, n)
	case []float64:
		return kernels.BinSplit(binLoopOp[float64], int(k), out, a, sa, any(b).([]float64), sb, n)
	}
	return false
}

// unarySplit is unaryFloat split when large.
func unarySplit[T float](k core.ElemKind, out, x []T) {
	switch o := any(out).(type) {
	case []float32:
		kernels.UnarySplit(unaryFloatOp[float32], int(k), o, any(x).([]float32))
	case []float64:
		kernels.UnarySplit(unaryFloatOp[float64], int(k), o, any(x).([]float64))
	}
}

// binLoopOp and unaryFloatOp are binLoop and unaryFloat as the split's
// loops (kernels.BinLoop, kernels.UnaryLoop), op an core.core.ElemKind.
func binLoopOp[T float](op int, out any, o int, a []T, sa int, b []T, sb int, n int) {
	binLoop(core.ElemKind(op), out, o, a, sa, b, sb, n)
}

func unaryFloatOp[T float](op int, out, x []T) { unaryFloat(core.ElemKind(op), out, x) }
