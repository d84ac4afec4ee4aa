package vec

// CopyRows32 copies rows segments of width floats from src to dst, the
// segments srcStride floats apart in src and dstStride apart in dst
// (im2col's inner loop): dst[i*dstStride+j] = src[i*srcStride+j].
func CopyRows32(dst []float32, dstStride int, src []float32, srcStride, rows, width int) {
	if rows <= 0 || width <= 0 {
		return
	}
	dst, src = dst[:(rows-1)*dstStride+width], src[:(rows-1)*srcStride+width]
	if useAVX2 {
		copyRows32AVX2(&dst[0], dstStride, &src[0], srcStride, rows, width)
		return
	}
	for i := range rows {
		copy(dst[i*dstStride:i*dstStride+width], src[i*srcStride:])
	}
}

// AddRows32 adds rows segments of width floats of src into dst, the
// segments srcStride floats apart in src and dstStride apart in dst
// (col2im's inner loop): dst[i*dstStride+j] += src[i*srcStride+j].
func AddRows32(dst []float32, dstStride int, src []float32, srcStride, rows, width int) {
	if rows <= 0 || width <= 0 {
		return
	}
	dst, src = dst[:(rows-1)*dstStride+width], src[:(rows-1)*srcStride+width]
	if useAVX2 {
		addRows32AVX2(&dst[0], dstStride, &src[0], srcStride, rows, width)
		return
	}
	for i := range rows {
		d := dst[i*dstStride : i*dstStride+width]
		for j, v := range src[i*srcStride : i*srcStride+width] {
			d[j] += v
		}
	}
}
