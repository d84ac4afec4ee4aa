package parallel

import (
	"fmt"
	"math/bits"
)

// Split is where the canonical tree cuts the node [lo, hi) of two or more
// microbatches: at lo plus the largest power of two below hi-lo, so the
// left child is a complete binary tree.
func Split(lo, hi int) int {
	n := hi - lo
	return lo + 1<<(bits.Len(uint(n-1))-1)
}

// IsNode reports whether [lo, hi) is a node of the canonical tree over
// [0, k).
func IsNode(lo, hi, k int) bool {
	a, b := 0, k
	for {
		if a == lo && b == hi {
			return true
		}
		if b-a < 2 || lo < a || hi > b {
			return false
		}
		m := Split(a, b)
		switch {
		case hi <= m:
			b = m
		case lo >= m:
			a = m
		default:
			return false
		}
	}
}

// Plan is how a step's K microbatches are shared among the N processes of
// a job: process Rank computes the microbatches [Lo, Hi).
type Plan struct {
	K, N, Rank int
	Lo, Hi     int
}

// NewPlan checks that k microbatches can be shared by n processes with
// the same canonical tree (k a multiple of n, each process's block a
// subtree) and returns rank's share.
func NewPlan(k, n, rank int) (Plan, error) {
	if n < 1 || rank < 0 || rank >= n {
		return Plan{}, fmt.Errorf("parallel: process %d of %d", rank, n)
	}
	if k < 1 {
		return Plan{}, fmt.Errorf("parallel: the number of microbatches must be at least 1, got %d", k)
	}
	if k%n != 0 {
		return Plan{}, fmt.Errorf("parallel: %d microbatches cannot be shared equally by %d processes (use a multiple of %d, e.g. --microbatches %d)", k, n, n, n*((k+n-1)/n))
	}
	b := k / n
	for r := range n {
		if !IsNode(r*b, (r+1)*b, k) {
			return Plan{}, fmt.Errorf("parallel: with %d microbatches on %d processes, the block [%d, %d) of process %d is not a subtree of the canonical summation tree, "+
				"so the sum would depend on the number of processes; use a number of microbatches that is the number of processes times a power of two (e.g. %d)",
				k, n, r*b, (r+1)*b, r, n*pow2AtLeast(b))
		}
	}
	return Plan{K: k, N: n, Rank: rank, Lo: rank * b, Hi: (rank + 1) * b}, nil
}

func pow2AtLeast(b int) int {
	p := 1
	for p < b {
		p *= 2
	}
	return p
}

// Sizes cuts a batch of n examples into k microbatches: the first n%k
// have one example more than the others. Offsets are the first example of
// each (and n at the end).
func Sizes(n, k int) (sizes, offsets []int) {
	sizes = make([]int, k)
	offsets = make([]int, k+1)
	for i := range k {
		sizes[i] = n / k
		if i < n%k {
			sizes[i]++
		}
		offsets[i+1] = offsets[i] + sizes[i]
	}
	return sizes, offsets
}

// Float is the element type of the reduced vectors.
type Float interface{ ~float32 | ~float64 }

// TreeSum sums parts, the values of the microbatches [lo, lo+len(parts)),
// which must be a node of the canonical tree, along that tree, in place:
// the result is left in parts[0] (the other parts are clobbered).
func TreeSum[T Float](parts [][]T) {
	treeSum(parts, 0, len(parts))
}

func treeSum[T Float](parts [][]T, lo, hi int) {
	if hi-lo < 2 {
		return
	}
	m := Split(lo, hi)
	treeSum(parts, lo, m)
	treeSum(parts, m, hi)
	a, b := parts[lo], parts[m]
	b = b[:len(a)]
	for i := range a {
		a[i] += b[i]
	}
}

// blockSum sums the block sums of n processes (chunks[r] is process r's,
// each block b microbatches wide) along the upper levels of the canonical
// tree over [0, n*b), in place into chunks[0].
func blockSum[T Float](chunks [][]T, lo, hi, b int) {
	if hi-lo == b {
		return
	}
	m := Split(lo, hi)
	blockSum(chunks, lo, m, b)
	blockSum(chunks, m, hi, b)
	x, y := chunks[lo/b], chunks[m/b]
	y = y[:len(x)]
	for i := range x {
		x[i] += y[i]
	}
}
