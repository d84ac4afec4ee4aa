package vec

// Float32 kernels of the executor's fused steps. Each takes equal-length
// slices (out may be one of the inputs) and computes, element by element,
// exactly what its portable loop computes.

// BiasRelu32 sets out[i] = x[i]+b[i] if that sum is > 0, else +0 (NaN
// gives 0).
func BiasRelu32(out, x, b []float32) {
	x, b = x[:len(out)], b[:len(out)]
	done := 0
	if useAVX2 && len(out) >= 8 {
		done = len(out) &^ 7
		biasRelu32AVX2(&out[0], &x[0], &b[0], done)
	}
	biasRelu32Go(out[done:], x[done:], b[done:])
}

func biasRelu32Go(out, x, b []float32) {
	x, b = x[:len(out)], b[:len(out)]
	for i := range out {
		v := x[i] + b[i]
		if !(v > 0) {
			v = 0
		}
		out[i] = v
	}
}

// ReluGrad32 sets out[i] = g[i] where y[i] > 0, else +0: the ReLU's
// backward from its output y.
func ReluGrad32(out, y, g []float32) {
	y, g = y[:len(out)], g[:len(out)]
	done := 0
	if useAVX2 && len(out) >= 8 {
		done = len(out) &^ 7
		reluGrad32AVX2(&out[0], &y[0], &g[0], done)
	}
	reluGrad32Go(out[done:], y[done:], g[done:])
}

func reluGrad32Go(out, y, g []float32) {
	y, g = y[:len(out)], g[:len(out)]
	for i := range out {
		v := g[i]
		if !(y[i] > 0) {
			v = 0
		}
		out[i] = v
	}
}

// ScaledSub32 sets out[i] = a[i] - s*g[i], the product rounded to float32
// before the subtraction (no fused multiply-add): a gradient step.
func ScaledSub32(out, a, g []float32, s float32) {
	a, g = a[:len(out)], g[:len(out)]
	done := 0
	if useAVX2 && len(out) >= 8 {
		done = len(out) &^ 7
		scaledSub32AVX2(&out[0], &a[0], &g[0], done, s)
	}
	scaledSub32Go(out[done:], a[done:], g[done:], s)
}

func scaledSub32Go(out, a, g []float32, s float32) {
	a, g = a[:len(out)], g[:len(out)]
	for i := range out {
		p := s * g[i]
		out[i] = a[i] - p
	}
}

// Add32 sets acc[i] += x[i].
func Add32(acc, x []float32) {
	x = x[:len(acc)]
	done := 0
	if useAVX2 && len(acc) >= 8 {
		done = len(acc) &^ 7
		add32AVX2(&acc[0], &x[0], done)
	}
	for i := done; i < len(acc); i++ {
		acc[i] += x[i]
	}
}

// AddTo32 sets out[i] = a[i] + b[i] (out may be a or b).
func AddTo32(out, a, b []float32) {
	a, b = a[:len(out)], b[:len(out)]
	done := 0
	if useAVX2 && len(out) >= 8 {
		done = len(out) &^ 7
		addTo32AVX2(&out[0], &a[0], &b[0], done)
	}
	for i := done; i < len(out); i++ {
		out[i] = a[i] + b[i]
	}
}

// AddScalar32 sets out[i] = x[i] + s (out may be x): a convolution's
// bias added to one filter's output.
func AddScalar32(out, x []float32, s float32) {
	x = x[:len(out)]
	done := 0
	if useAVX2 && len(out) >= 8 {
		done = len(out) &^ 7
		addScalar32AVX2(&out[0], &x[0], done, s)
	}
	for i := done; i < len(out); i++ {
		out[i] = x[i] + s
	}
}

// Relu32 sets out[i] = x[i] if x[i] > 0, else +0 (NaN gives 0).
func Relu32(out, x []float32) {
	x = x[:len(out)]
	done := 0
	if useAVX2 && len(out) >= 8 {
		done = len(out) &^ 7
		relu32AVX2(&out[0], &x[0], done)
	}
	for i := done; i < len(out); i++ {
		v := x[i]
		if !(v > 0) {
			v = 0
		}
		out[i] = v
	}
}

// Sum32 is the float32 sum of x in a fixed order that vectorizes: 32
// running sums (element i into sum i mod 32) over the longest prefix of a
// multiple of 32 elements, folded pairwise (s[l]+s[l+8], then those of
// the two halves, then lanes k+4, k+2, k+1), then the rest added one by
// one. The same on every machine, bit for bit.
func Sum32(x []float32) float32 {
	n := len(x) &^ 31
	var s float32
	if n > 0 {
		if useAVX2 {
			s = sum32AVX2(&x[0], n)
		} else {
			s = sum32Go(x[:n])
		}
	}
	for _, v := range x[n:] {
		s += v
	}
	return s
}

// sum32Go is the AVX2 kernel's order in portable Go (len(x) a multiple of
// 32).
func sum32Go(x []float32) float32 {
	var acc [4][8]float32
	for b := 0; b < len(x); b += 32 {
		for a := range acc {
			for l := range acc[a] {
				acc[a][l] += x[b+8*a+l]
			}
		}
	}
	var t [8]float32
	for l := range t {
		t[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l])
	}
	var h [4]float32
	for k := range h {
		h[k] = t[k] + t[k+4]
	}
	h0, h1 := h[0]+h[2], h[1]+h[3]
	return h0 + h1
}
