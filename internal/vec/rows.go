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

// CopyTaps32 is CopyRows32 for each offset offs[t] of src: rows segments
// of width floats, srcStride apart from src[offs[t]] on, copied to
// consecutive segments from dst[t·ld] on (an im2col of a convolution
// without padding: one block of output rows per filter entry). It panics,
// as slicing does, when a block falls outside dst or src.
func CopyTaps32(dst []float32, ld int, src []float32, offs []int, srcStride, rows, width int) {
	if len(offs) == 0 || rows <= 0 || width <= 0 {
		return
	}
	_ = dst[(len(offs)-1)*ld+rows*width-1]
	for _, o := range offs {
		_, _ = src[o], src[o+(rows-1)*srcStride+width-1]
	}
	if useAVX2 {
		copyTaps32AVX2(&dst[0], ld, &src[0], &offs[0], len(offs), srcStride, rows, width)
		return
	}
	for t, o := range offs {
		for i := range rows {
			copy(dst[t*ld+i*width:t*ld+(i+1)*width], src[o+i*srcStride:])
		}
	}
}

// AddTaps32 is CopyTaps32's adjoint: for each offset offs[t] in order, the
// consecutive segments of width floats from src[t·ld] on are added into
// rows segments dstStride apart from dst[offs[t]] on (a col2im of a
// convolution without padding), each as AddRows32 adds. It panics, as
// slicing does, when a block falls outside dst or src.
func AddTaps32(dst []float32, dstStride int, src []float32, ld int, offs []int, rows, width int) {
	if len(offs) == 0 || rows <= 0 || width <= 0 {
		return
	}
	_ = src[(len(offs)-1)*ld+rows*width-1]
	for _, o := range offs {
		_, _ = dst[o], dst[o+(rows-1)*dstStride+width-1]
	}
	if useAVX2 {
		addTaps32AVX2(&dst[0], dstStride, &src[0], ld, &offs[0], len(offs), rows, width)
		return
	}
	for t, o := range offs {
		for i := range rows {
			d := dst[o+i*dstStride : o+i*dstStride+width]
			for j, v := range src[t*ld+i*width : t*ld+(i+1)*width] {
				d[j] += v
			}
		}
	}
}
