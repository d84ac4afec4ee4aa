package vec

import "math"

// FMA32 is a·b + c rounded once to float32 (IEEE 754's fusedMultiplyAdd,
// as the FMA instructions compute it). a·b is exact in float64; the sum is
// rounded to float64 with its error kept (TwoSum), and rounding that to
// float32 is right unless it lies exactly halfway between two float32s,
// where the error's sign decides.
func FMA32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	r := float32(s)
	if float64(r) == s || s != s || math.IsInf(s, 0) {
		return r
	}
	bb := s - p
	e := (p - (s - bb)) + (float64(c) - bb)
	if e == 0 {
		return r
	}
	// rf: r as a number (±2^128 for a rounding to infinity); o: the
	// float32 on s's other side.
	rf := float64(r)
	if math.IsInf(rf, 0) {
		rf = math.Copysign(0x1p128, rf)
	}
	var o float32
	if rf < s {
		o = math.Nextafter32(r, float32(math.Inf(1)))
	} else {
		o = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	if s != (rf+float64(o))/2 {
		return r
	}
	if (e > 0) == (float64(o) > rf) {
		return o
	}
	return r
}

// PanelsSize32 is the length of PackPanels32's result for a k×n matrix:
// ⌈n/16⌉ panels of k×16.
func PanelsSize32(k, n int) int { return (n + 15) / 16 * 16 * k }

// PackPanels32 copies b (k×n, rows ldb apart) into dst as Gemm32's
// operand: panels of 16 columns, each k rows of 16 contiguous floats (the
// last one padded with zeros), so that the kernels read b in order, once
// per product instead of with a stride of a whole row per multiply-add.
func PackPanels32(dst, b []float32, k, n, ldb int) {
	dst = dst[:PanelsSize32(k, n)]
	for j := 0; j < n; j += 16 {
		w := min(16, n-j)
		panel := dst[j*k : (j+16)*k]
		for p := range k {
			row := panel[p*16 : p*16+16]
			copy(row, b[p*ldb+j:p*ldb+j+w])
			clear(row[w:])
		}
	}
}

// PackPanelsT32 is PackPanels32 of the transpose of w (n×k, rows ldw
// apart): b[p][j] = w[j·ldw+p].
func PackPanelsT32(dst, w []float32, k, n, ldw int) {
	dst = dst[:PanelsSize32(k, n)]
	for j := 0; j < n; j += 16 {
		wd := min(16, n-j)
		panel := dst[j*k : (j+16)*k]
		for jj := range 16 {
			if jj >= wd {
				for p := range k {
					panel[p*16+jj] = 0
				}
				continue
			}
			col := w[(j+jj)*ldw : (j+jj)*ldw+k]
			for p, v := range col {
				panel[p*16+jj] = v
			}
		}
	}
}

// Gemm32 sets c = a·b: c is m×n (rows ldc apart), a m×k (rows lda apart),
// b k×n given as PackPanels32's panels, all row-major. Every element is a
// sequence of fused multiply-adds over k in order, from zero (as
// OpenBLAS's float32 kernels compute a product whose k fits one of their
// blocks). For the small products of a recurrent step (a few rows times a
// weight matrix packed once for the whole sequence), where OpenBLAS copies
// the weights into its panels on every call, which costs as much as the
// arithmetic. With AVX2 and FMA, blocks of 4 rows × 16 columns run 8
// lanes at a time (gemm_amd64.s); the rest, and every block elsewhere, in
// Go with FMA32: the same bits.
func Gemm32(m, n, k int, a []float32, lda int, bp []float32, c []float32, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	// bounds, once: every access below is inside these
	_ = a[(m-1)*lda+k-1]
	_ = bp[PanelsSize32(k, n)-1]
	_ = c[(m-1)*ldc+n-1]
	j := 0
	if useFMA {
		for ; j+16 <= n; j += 16 {
			panel := &bp[j*k]
			i := 0
			for ; i+4 <= m; i += 4 {
				gemm4x16AVX2(k, &a[i*lda], lda, panel, 16, &c[i*ldc+j], ldc)
			}
			for ; i < m; i++ {
				gemm1x16AVX2(k, &a[i*lda], panel, 16, &c[i*ldc+j])
			}
		}
	}
	for ; j < n; j += 16 {
		panel := bp[j*k : (j+16)*k]
		for i := range m {
			ar := a[i*lda : i*lda+k]
			for jj := range min(16, n-j) {
				var s float32
				for p, av := range ar {
					s = FMA32(av, panel[p*16+jj], s)
				}
				c[i*ldc+j+jj] = s
			}
		}
	}
}

// Gemm32Fast says whether Gemm32 runs its vector kernels here (on whole
// panels); without them it is a slow scalar loop.
func Gemm32Fast() bool { return useFMA }
