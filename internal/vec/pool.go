package vec

import "math"

// MaxPool2x2Rows32 is one output row of a 2×2 max pooling with stride 2:
// y[j] is the maximum of x0[2j], x0[2j+1], x1[2j] and x1[2j+1], taken from
// -Inf in that order with m = e if e > m (so NaN inputs are skipped and
// the first of equal values, by sign of zero, is kept). x0 and x1 are the
// two input rows, at least 2*len(y) long.
func MaxPool2x2Rows32(y, x0, x1 []float32) {
	x0, x1 = x0[:2*len(y)], x1[:2*len(y)]
	done := 0
	if useAVX2 && len(y) >= 4 {
		done = len(y) &^ 3
		maxPool2x2Rows32AVX2(&y[0], &x0[0], &x1[0], done)
	}
	maxPool2x2Rows32Go(y[done:], x0[2*done:], x1[2*done:])
}

func maxPool2x2Rows32Go(y, x0, x1 []float32) {
	x0, x1 = x0[:2*len(y)], x1[:2*len(y)]
	for j := range y {
		m := float32(math.Inf(-1))
		for _, e := range [4]float32{x0[2*j], x0[2*j+1], x1[2*j], x1[2*j+1]} {
			if e > m {
				m = e
			}
		}
		y[j] = m
	}
}

// MaxPool2x2GradRows32 is MaxPool2x2Rows32's gradient for one output row:
// each input of output j gets 0 + gz[j] where it equals y[j] (every tied
// maximum gets it, as Theano's MaxPoolGrad), else +0. g0 and g1 are the
// gradient rows for x0 and x1; only their first 2*len(y) entries are set.
func MaxPool2x2GradRows32(g0, g1, x0, x1, y, gz []float32) {
	n := 2 * len(y)
	g0, g1, x0, x1, gz = g0[:n], g1[:n], x0[:n], x1[:n], gz[:len(y)]
	done := 0
	if useAVX2 && len(y) >= 4 {
		done = len(y) &^ 3
		maxPool2x2GradRows32AVX2(&g0[0], &g1[0], &x0[0], &x1[0], &y[0], &gz[0], done)
	}
	maxPool2x2GradRows32Go(g0[2*done:], g1[2*done:], x0[2*done:], x1[2*done:], y[done:], gz[done:])
}

func maxPool2x2GradRows32Go(g0, g1, x0, x1, y, gz []float32) {
	for j, m := range y {
		d := 0 + gz[j]
		for _, p := range [2]struct{ g, x []float32 }{{g0, x0}, {g1, x1}} {
			for k := 2 * j; k < 2*j+2; k++ {
				p.g[k] = 0
				if p.x[k] == m {
					p.g[k] = d
				}
			}
		}
	}
}
