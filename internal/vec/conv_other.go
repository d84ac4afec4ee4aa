//go:build !amd64

package vec

func patches32AVX2(col *float32, ld int, x *float32, n, imageStride, kh, kw, oh, ow, tapRow, tapCol, rowStride int) {
}

func addPatches32AVX2(x, col *float32, ld, n, imageStride, kh, kw, oh, ow, tapRow, tapCol, rowStride int) {
}

func copyRowsBias32AVX2(dst *float32, dstStride int, src *float32, srcStride, rows, width int, bias *float32) {
}
