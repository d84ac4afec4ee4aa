package kernels

import "github.com/blocks-go/blocks/internal/vec"

// Split elementwise kernels: the ops' generic elementwise loops and
// column sums, split across the workers for large float tensors with the
// fixed partition of pool.go. Each element is computed by the same code
// either way, so results do not depend on the split. The loops themselves
// are the caller's (an op's kernel), passed as functions with an opaque
// code op saying which elementwise function they compute; the running
// split's job is a package variable guarded by the split lock, so that a
// split allocates nothing.

// BinLoop computes n elements of a binary elementwise function (op, the
// caller's code) into out from element o on: a and b start at element o,
// with strides sa and sb (0: broadcast, 1).
type BinLoop[T Float] func(op int, out any, o int, a []T, sa int, b []T, sb int, n int)

// UnaryLoop computes a unary elementwise function (op, the caller's code)
// of x into out.
type UnaryLoop[T Float] func(op int, out, x []T)

// binJob is a binary loop over n elements (strides 0 or 1).
type binJob[T Float] struct {
	loop  BinLoop[T]
	op    int
	out   any
	a     []T
	sa    int
	b     []T
	sb, n int
}

func (j *binJob[T]) RunPart(i, parts int) {
	lo, hi := PartRange(j.n, 1024, i, parts)
	if lo < hi {
		j.loop(j.op, j.out, lo, j.a[lo*j.sa:], j.sa, j.b[lo*j.sb:], j.sb, hi-lo)
	}
}

// unJob is a unary float loop.
type unJob[T Float] struct {
	loop   UnaryLoop[T]
	op     int
	out, x []T
}

func (j *unJob[T]) RunPart(i, parts int) {
	lo, hi := PartRange(len(j.out), 1024, i, parts)
	if lo < hi {
		j.loop(j.op, j.out[lo:hi], j.x[lo:hi])
	}
}

// The jobs of the running split (guarded by the split lock).
var (
	binJob32 binJob[float32]
	binJob64 binJob[float64]
	unJob32  unJob[float32]
	unJob64  unJob[float64]
)

// BinSplit runs loop over [0, n) in parts when n is large enough to split
// and no other split runs; false (nothing done) otherwise, and the caller
// runs the loop itself.
func BinSplit[T Float](loop BinLoop[T], op int, out any, a []T, sa int, b []T, sb int, n int) bool {
	parts := ElemParts(n)
	if parts == 1 || !LockParts(parts) {
		return false
	}
	switch a := any(a).(type) {
	case []float32:
		binJob32 = binJob[float32]{loop: any(loop).(BinLoop[float32]), op: op, out: out, a: a, sa: sa, b: any(b).([]float32), sb: sb, n: n}
		RunLocked(&binJob32, parts)
		binJob32 = binJob[float32]{}
	case []float64:
		binJob64 = binJob[float64]{loop: any(loop).(BinLoop[float64]), op: op, out: out, a: a, sa: sa, b: any(b).([]float64), sb: sb, n: n}
		RunLocked(&binJob64, parts)
		binJob64 = binJob[float64]{}
	}
	UnlockParts()
	return true
}

// UnarySplit runs loop over out and x, in parts when large (serially
// while another split runs).
func UnarySplit[T Float](loop UnaryLoop[T], op int, out, x []T) {
	parts := ElemParts(len(out))
	if !LockParts(parts) {
		loop(op, out, x)
		return
	}
	defer UnlockParts()
	switch o := any(out).(type) {
	case []float32:
		unJob32 = unJob[float32]{any(loop).(UnaryLoop[float32]), op, o, any(x).([]float32)}
		RunLocked(&unJob32, parts)
		unJob32 = unJob[float32]{}
	case []float64:
		unJob64 = unJob[float64]{any(loop).(UnaryLoop[float64]), op, o, any(x).([]float64)}
		RunLocked(&unJob64, parts)
		unJob64 = unJob[float64]{}
	}
}

// colSumJob sums the rows of an (m, n) matrix into n columns (a bias's
// gradient), split by column ranges: each column is summed over the rows
// in order.
type colSumJob[T Float] struct {
	out, g []T
	m, n   int
}

func (j *colSumJob[T]) RunPart(i, parts int) {
	lo, hi := PartRange(j.n, 16, i, parts)
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

// ColSumSplit sums g (m, n) over its rows into out (n), each column over
// the rows in order, in parallel parts when large (serially while another
// split runs, same order); false (nothing done) when rows are too short
// for it (n < 32).
func ColSumSplit[T Float](out, g []T, m, n int) bool {
	if n < 32 {
		return false
	}
	parts := ElemParts(m * n)
	if !LockParts(parts) {
		j := colSumJob[T]{out, g, m, n}
		j.RunPart(0, 1)
		return true
	}
	defer UnlockParts()
	switch o := any(out).(type) {
	case []float32:
		colSum32 = colSumJob[float32]{o, any(g).([]float32), m, n}
		RunLocked(&colSum32, parts)
		colSum32 = colSumJob[float32]{}
	case []float64:
		colSum64 = colSumJob[float64]{o, any(g).([]float64), m, n}
		RunLocked(&colSum64, parts)
		colSum64 = colSumJob[float64]{}
	}
	return true
}
