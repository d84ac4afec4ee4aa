//go:build !amd64

package vec

var useAVX2 = false

func scaleShiftUint8ToFloat32(dst []float32, src []uint8, scale, shift float64) int { return 0 }

func biasRelu32AVX2(out, x, b *float32, n int)                {}
func reluGrad32AVX2(out, y, grad *float32, n int)             {}
func scaledSub32AVX2(out, a, grad *float32, n int, s float32) {}
func add32AVX2(acc, x *float32, n int)                        {}

func maxPool2x2Rows32AVX2(y, x0, x1 *float32, n int)                 {}
func maxPool2x2GradRows32AVX2(g0, g1, x0, x1, y, gz *float32, n int) {}

func relu32AVX2(out, x *float32, n int)   {}
func sum32AVX2(x *float32, n int) float32 { return 0 }

func copyRows32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int) {}
func addRows32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int)  {}

func sigmoid32AVX2(dst, src *float32, n int) {}
func tanh32AVX2(dst, src *float32, n int)    {}

var useFMA = false

func gemm4x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {}
func gemm1x16AVX2(k int, a *float32, b *float32, ldb int, c *float32)                   {}

func mul32AVX2(out, a, b *float32, n int)    {}
func mulAdd32AVX2(acc, a, b *float32, n int) {}

func gruGradN32AVX2(dan, dg, dhp, dh, u, n, hp *float32, cnt int) {}
func gruGradR32AVX2(dg, dhp, dr, hp, r *float32, cnt int)         {}

func lstmGrad32AVX2(p *[lgStreams]*float32, cnt int) {}

func exp32AVX2(dst, src *float32, n int) {}

func addTo32AVX2(out, a, b *float32, n int) {}

func gruStep32AVX2(h, n, u, hp *float32, cnt int) {}

func scaleUint8ToFloat32FMA(dst *float32, src *uint8, n int, r, d, h float32) {}
