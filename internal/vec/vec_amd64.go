package vec

import "golang.org/x/sys/cpu"

// useAVX2 turns the AVX2 kernels on; tests turn it off to compare.
var useAVX2 = cpu.X86.HasAVX2

// scaleShiftUint8ToFloat32 converts the longest prefix of src that the
// AVX2 kernel takes (a multiple of 16) and returns its length.
func scaleShiftUint8ToFloat32(dst []float32, src []uint8, scale, shift float64) int {
	n := len(src) &^ 15
	if !useAVX2 || n == 0 {
		return 0
	}
	scaleShiftUint8ToFloat32AVX2(&dst[0], &src[0], n, scale, shift)
	return n
}

//go:noescape
func scaleShiftUint8ToFloat32AVX2(dst *float32, src *uint8, n int, scale, shift float64)

// The kernels below are in vec_amd64.s; each says there which counts it
// takes (a positive multiple of its block), and its exported wrapper
// passes only those, finishing the rest in Go.

//go:noescape
func biasRelu32AVX2(out, x, b *float32, n int)

//go:noescape
func reluGrad32AVX2(out, y, grad *float32, n int)

//go:noescape
func scaledSub32AVX2(out, a, grad *float32, n int, s float32)

//go:noescape
func add32AVX2(acc, x *float32, n int)

//go:noescape
func maxPool2x2Rows32AVX2(y, x0, x1 *float32, n int)

//go:noescape
func maxPool2x2GradRows32AVX2(g0, g1, x0, x1, y, gz *float32, n int)

//go:noescape
func relu32AVX2(out, x *float32, n int)

//go:noescape
func sum32AVX2(x *float32, n int) float32

//go:noescape
func copyRows32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int)

//go:noescape
func addRows32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int)

//go:noescape
func sigmoid32AVX2(dst, src *float32, n int)

//go:noescape
func tanh32AVX2(dst, src *float32, n int)

// useFMA turns the fused multiply-add kernels (gemm_amd64.s) on.
var useFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func gemm4x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

//go:noescape
func gemm1x16AVX2(k int, a *float32, b *float32, ldb int, c *float32)

//go:noescape
func mul32AVX2(out, a, b *float32, n int)

//go:noescape
func mulAdd32AVX2(acc, a, b *float32, n int)

//go:noescape
func gruGradN32AVX2(dan, dg, dhp, dh, u, n, hp *float32, cnt int)

//go:noescape
func gruGradR32AVX2(dg, dhp, dr, hp, r *float32, cnt int)

//go:noescape
func lstmGrad32AVX2(p *[lgStreams]*float32, cnt int)

//go:noescape
func exp32AVX2(dst, src *float32, n int)

//go:noescape
func addTo32AVX2(out, a, b *float32, n int)

//go:noescape
func gruStep32AVX2(h, n, u, hp *float32, cnt int)

// scaleUint8ToFloat32FMA is ByteScaler's fast kernel over n bytes (a
// positive multiple of 16): q = x·r, q += (x − q·d)·r, q + h, in float32.
//
//go:noescape
func scaleUint8ToFloat32FMA(dst *float32, src *uint8, n int, r, d, h float32)
