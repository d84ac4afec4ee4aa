package vec

// The convolution's lowering kernels, in conv_amd64.s.

//go:noescape
func patches32AVX2(col *float32, ld int, x *float32, n, imageStride, kh, kw, oh, ow, tapRow, tapCol, rowStride int)

//go:noescape
func addPatches32AVX2(x, col *float32, ld, n, imageStride, kh, kw, oh, ow, tapRow, tapCol, rowStride int)

//go:noescape
func copyRowsBias32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int, bias *float32)
