package vec

// Mul32 sets out[i] = a[i]·b[i].
func Mul32(out, a, b []float32) {
	a, b = a[:len(out)], b[:len(out)]
	done := 0
	if useAVX2 && len(out) >= 8 {
		done = len(out) &^ 7
		mul32AVX2(&out[0], &a[0], &b[0], done)
	}
	for i := done; i < len(out); i++ {
		out[i] = a[i] * b[i]
	}
}

// MulAdd32 sets acc[i] += a[i]·b[i], the product rounded before the
// addition (no fused multiply-add), as the Go expression computes it.
func MulAdd32(acc, a, b []float32) {
	a, b = a[:len(acc)], b[:len(acc)]
	done := 0
	if useAVX2 && len(acc) >= 8 {
		done = len(acc) &^ 7
		mulAdd32AVX2(&acc[0], &a[0], &b[0], done)
	}
	for i := done; i < len(acc); i++ {
		acc[i] += a[i] * b[i]
	}
}
