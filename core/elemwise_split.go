package core

// Splitting the generic elementwise kernels (elemwise.go) across the
// workers for large float tensors, with the fixed partition of
// core/exec/cpu/kernels/pool.go: each element is computed by the same code either way, so
// results do not depend on the split.

import (
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/internal/vec"
)

// binJob is a binary kernel over n elements (strides 0 or 1).
type binJob[T float] struct {
	k     elemKind
	out   any
	a     []T
	sa    int
	b     []T
	sb, n int
}

func (j *binJob[T]) RunPart(i, parts int) {
	lo, hi := kernels.PartRange(j.n, 1024, i, parts)
	if lo < hi {
		binLoop(j.k, j.out, lo, j.a[lo*j.sa:], j.sa, j.b[lo*j.sb:], j.sb, hi-lo)
	}
}

// unJob is a unary float kernel.
type unJob[T float] struct {
	k      elemKind
	out, x []T
}

func (j *unJob[T]) RunPart(i, parts int) {
	lo, hi := kernels.PartRange(len(j.out), 1024, i, parts)
	if lo < hi {
		unaryFloat(j.k, j.out[lo:hi], j.x[lo:hi])
	}
}

// The jobs of the running split (guarded by the split lock).
var (
	binJob32 binJob[float32]
	binJob64 binJob[float64]
	unJob32  unJob[float32]
	unJob64  unJob[float64]
)

// binSplit runs binLoop over [0, n) split when large; false when T is not
// a float type (the caller runs it serially).
func binSplit[T any](k elemKind, out any, a []T, sa int, b []T, sb int, n int) bool {
	parts := kernels.ElemParts(n)
	if parts == 1 {
		return false
	}
	switch a := any(a).(type) {
	case []float32:
		if !kernels.LockParts(parts) {
			return false
		}
		binJob32 = binJob[float32]{k: k, out: out, a: a, sa: sa, b: any(b).([]float32), sb: sb, n: n}
		kernels.RunLocked(&binJob32, parts)
		binJob32 = binJob[float32]{}
	case []float64:
		if !kernels.LockParts(parts) {
			return false
		}
		binJob64 = binJob[float64]{k: k, out: out, a: a, sa: sa, b: any(b).([]float64), sb: sb, n: n}
		kernels.RunLocked(&binJob64, parts)
		binJob64 = binJob[float64]{}
	default:
		return false
	}
	kernels.UnlockParts()
	return true
}

// unarySplit is unaryFloat split when large.
func unarySplit[T float](k elemKind, out, x []T) {
	parts := kernels.ElemParts(len(out))
	if !kernels.LockParts(parts) {
		unaryFloat(k, out, x)
		return
	}
	defer kernels.UnlockParts()
	switch o := any(out).(type) {
	case []float32:
		unJob32 = unJob[float32]{k, o, any(x).([]float32)}
		kernels.RunLocked(&unJob32, parts)
		unJob32 = unJob[float32]{}
	case []float64:
		unJob64 = unJob[float64]{k, o, any(x).([]float64)}
		kernels.RunLocked(&unJob64, parts)
		unJob64 = unJob[float64]{}
	}
}

// colSumJob sums the rows of an (m, n) matrix into n columns (a bias's
// gradient), split by column ranges: each column is summed over the rows
// in order, as sumToKernel does.
type colSumJob[T float] struct {
	out, g []T
	m, n   int
}

func (j *colSumJob[T]) RunPart(i, parts int) {
	lo, hi := kernels.PartRange(j.n, 16, i, parts)
	if lo >= hi {
		return
	}
	d := j.out[lo:hi]
	clear(d)
	d32, is32 := any(d).([]float32)
	for r := range j.m {
		row := j.g[r*j.n+lo : r*j.n+hi]
		if is32 {
			vec.Add32(d32, any(row).([]float32))
			continue
		}
		for c, v := range row {
			d[c] += v
		}
	}
}

var (
	colSum32 colSumJob[float32]
	colSum64 colSumJob[float64]
)

// colSumSplit sums g (m, n) over its rows into out (n), in parallel parts
// when large (serially while another split runs, same order); false
// (nothing done) when rows are too short for it (n < 32).
func colSumSplit[T float](out, g []T, m, n int) bool {
	if n < 32 {
		return false
	}
	parts := kernels.ElemParts(m * n)
	if !kernels.LockParts(parts) {
		j := colSumJob[T]{out, g, m, n}
		j.RunPart(0, 1)
		return true
	}
	defer kernels.UnlockParts()
	switch o := any(out).(type) {
	case []float32:
		colSum32 = colSumJob[float32]{o, any(g).([]float32), m, n}
		kernels.RunLocked(&colSum32, parts)
		colSum32 = colSumJob[float32]{}
	case []float64:
		colSum64 = colSumJob[float64]{o, any(g).([]float64), m, n}
		kernels.RunLocked(&colSum64, parts)
		colSum64 = colSumJob[float64]{}
	}
	return true
}
