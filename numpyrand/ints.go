package numpyrand

// genMask returns the smallest mask of the form 2**k-1 that is >= max.
func genMask(max uint64) uint64 {
	mask := max
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	mask |= mask >> 32
	return mask
}

// Randint returns an integer in [low, high) exactly as
// RandomState.randint(low, high) does with its default dtype (C long, i.e.
// int64 on 64-bit Linux and macOS). It panics if low >= high (numpy raises
// ValueError).
//
// numpy computes rng = high - low - 1 and then (random_bounded_uint64_fill
// with masked rejection sampling):
//   - rng == 0: returns low without consuming any draw;
//   - rng < 2**32-1: draws 32-bit values masked to the smallest 2**k-1 >= rng
//     until one is <= rng;
//   - rng == 2**32-1: one raw 32-bit draw;
//   - rng > 2**32-1: the same rejection loop with 64-bit values made of two
//     32-bit draws, the first being the high word (a raw 64-bit value when
//     rng == 2**64-1).
func (r *RandomState) Randint(low, high int64) int64 {
	if low >= high {
		panic("numpyrand: randint: low >= high")
	}
	rng := uint64(high) - uint64(low) - 1 // wraps correctly for any int64 pair
	return int64(uint64(low) + r.bounded(rng))
}

// bounded returns a value in [0, rng] as numpy's random_bounded_uint64_fill
// (masked variant) does for one element.
func (r *RandomState) bounded(rng uint64) uint64 {
	switch {
	case rng == 0:
		return 0
	case rng < 0xFFFFFFFF:
		mask := uint32(genMask(rng))
		for {
			if v := r.Uint32() & mask; uint64(v) <= rng {
				return uint64(v)
			}
		}
	case rng == 0xFFFFFFFF:
		return uint64(r.Uint32())
	case rng == 0xFFFFFFFFFFFFFFFF:
		return r.uint64()
	default:
		mask := genMask(rng)
		for {
			if v := r.uint64() & mask; v <= rng {
				return v
			}
		}
	}
}

// interval is numpy's random_interval: a value in [0, max] by masked
// rejection, with 32-bit draws when max fits in 32 bits and 64-bit draws
// otherwise. It is what the legacy shuffle uses.
func (r *RandomState) interval(max uint64) uint64 {
	if max == 0 {
		return 0
	}
	mask := genMask(max)
	if max <= 0xFFFFFFFF {
		for {
			if v := uint64(r.Uint32()) & mask; v <= max {
				return v
			}
		}
	}
	for {
		if v := r.uint64() & mask; v <= max {
			return v
		}
	}
}

// Permutation returns RandomState.permutation(n): a shuffled [0, 1, ..., n-1].
// n <= 0 gives an empty slice without consuming draws.
func (r *RandomState) Permutation(n int) []int {
	if n <= 0 {
		return []int{}
	}
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	r.ShuffleInts(p)
	return p
}

// ShuffleInts shuffles x in place as RandomState.shuffle does for a 1-D
// array: for i from len(x)-1 down to 1, swap x[i] with x[random_interval(i)].
func (r *RandomState) ShuffleInts(x []int) {
	for i := len(x) - 1; i > 0; i-- {
		j := r.interval(uint64(i))
		x[i], x[j] = x[j], x[i]
	}
}

// Shuffle makes the same draws as RandomState.shuffle applied to a sequence
// whose first axis has n elements, calling swap(i, j) for each step of the
// Fisher–Yates loop (i from n-1 down to 1, j in [0, i]; j may equal i).
// Use it to shuffle rows of a matrix or several parallel slices.
func (r *RandomState) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		j := int(r.interval(uint64(i)))
		swap(i, j)
	}
}
