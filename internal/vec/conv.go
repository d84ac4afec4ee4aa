package vec

// Patches is the geometry of a window sliding over one image plane, for
// Patches32 and AddPatches32 (a convolution's im2col and col2im on a
// plane without padding, one pixel apart along a row): tap (a, b), a <
// KH, b < KW, meets OH rows of OW consecutive pixels, RowStride apart,
// from offset Base + a·TapRow + b·TapCol of the plane (TapRow and TapCol
// are negative for flipped filters).
type Patches struct {
	KH, KW, OH, OW                  int
	Base, TapRow, TapCol, RowStride int
}

// span is the range [lo, hi] of plane offsets the window's taps meet.
func (p Patches) span() (lo, hi int) {
	lo, hi = p.Base, p.Base+(p.OH-1)*p.RowStride+p.OW-1
	for _, d := range []int{(p.KH - 1) * p.TapRow, (p.KW - 1) * p.TapCol} {
		if d < 0 {
			lo += d
		} else {
			hi += d
		}
	}
	return lo, hi
}

// empty says whether the window has no tap or no pixel.
func (p Patches) empty() bool { return p.KH <= 0 || p.KW <= 0 || p.OH <= 0 || p.OW <= 0 }

// Patches32 writes the window's taps over the plane x into col, one row of
// OH·OW pixels per tap, ld apart: col[t·ld + i·OW + j] =
// x[Base + a·TapRow + b·TapCol + i·RowStride + j] for tap t = a·KW + b.
// The copies of one plane's every tap in one call (the convolution called
// the row copy once per tap, which cost more than the copy on LeNet's
// second layer, 8 pixels a row).
func Patches32(col []float32, ld int, x []float32, p Patches) {
	if p.empty() {
		return
	}
	lo, hi := p.span()
	_, _ = x[lo], x[hi]
	_ = col[(p.KH*p.KW-1)*ld+p.OH*p.OW-1]
	if useAVX2 {
		patches32AVX2(&col[0], ld, &x[p.Base], p.KH, p.KW, p.OH, p.OW, p.TapRow, p.TapCol, p.RowStride)
		return
	}
	for a := range p.KH {
		for b := range p.KW {
			off, row := p.Base+a*p.TapRow+b*p.TapCol, col[(a*p.KW+b)*ld:]
			for i := range p.OH {
				copy(row[i*p.OW:(i+1)*p.OW], x[off+i*p.RowStride:])
			}
		}
	}
}

// AddPatches32 is Patches32's adjoint: it adds each tap's row of col back
// into the pixels of x it was read from, x[Base + a·TapRow + b·TapCol +
// i·RowStride + j] += col[t·ld + i·OW + j], taps in order (so each pixel
// receives its terms in tap order, as one tap at a time adds them).
// RowStride must be at least OW.
func AddPatches32(x, col []float32, ld int, p Patches) {
	if p.empty() {
		return
	}
	lo, hi := p.span()
	_, _ = x[lo], x[hi]
	_ = col[(p.KH*p.KW-1)*ld+p.OH*p.OW-1]
	if useAVX2 {
		addPatches32AVX2(&x[p.Base], &col[0], ld, p.KH, p.KW, p.OH, p.OW, p.TapRow, p.TapCol, p.RowStride)
		return
	}
	for a := range p.KH {
		for b := range p.KW {
			off, row := p.Base+a*p.TapRow+b*p.TapCol, col[(a*p.KW+b)*ld:]
			for i := range p.OH {
				d := x[off+i*p.RowStride : off+i*p.RowStride+p.OW]
				for j, v := range row[i*p.OW : (i+1)*p.OW] {
					d[j] += v
				}
			}
		}
	}
}

// CopyRowsBias32 is CopyRows32 adding bias[i] to row i:
// dst[i*dstStride+j] = src[i*srcStride+j] + bias[i] (a convolution's
// output rows and their filters' biases).
func CopyRowsBias32(dst []float32, dstStride int, src []float32, srcStride, rows, width int, bias []float32) {
	if rows <= 0 || width <= 0 {
		return
	}
	dst, src, bias = dst[:(rows-1)*dstStride+width], src[:(rows-1)*srcStride+width], bias[:rows]
	if useAVX2 {
		copyRowsBias32AVX2(&dst[0], dstStride, &src[0], srcStride, rows, width, &bias[0])
		return
	}
	for i, b := range bias {
		d := dst[i*dstStride : i*dstStride+width]
		for j, v := range src[i*srcStride : i*srcStride+width] {
			d[j] = v + b
		}
	}
}
