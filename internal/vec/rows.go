package vec

// CopyRows32 gathers rows segments of width floats, stride apart in src,
// into dst, one after the other (im2col's inner loop): dst[i*width+j] =
// src[i*stride+j].
func CopyRows32(dst, src []float32, rows, width, stride int) {
	if rows <= 0 || width <= 0 {
		return
	}
	dst, src = dst[:rows*width], src[:(rows-1)*stride+width]
	if useAVX2 {
		copyRows32AVX2(&dst[0], &src[0], rows, width, stride)
		return
	}
	for i := range rows {
		copy(dst[i*width:(i+1)*width], src[i*stride:])
	}
}

// AddRows32 scatters src, rows segments of width floats one after the
// other, into dst's rows stride apart, adding (col2im's inner loop):
// dst[i*stride+j] += src[i*width+j].
func AddRows32(dst, src []float32, rows, width, stride int) {
	if rows <= 0 || width <= 0 {
		return
	}
	dst, src = dst[:(rows-1)*stride+width], src[:rows*width]
	if useAVX2 {
		addRows32AVX2(&dst[0], &src[0], rows, width, stride)
		return
	}
	for i := range rows {
		d := dst[i*stride : i*stride+width]
		for j, v := range src[i*width : (i+1)*width] {
			d[j] += v
		}
	}
}
