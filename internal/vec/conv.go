package vec

// Patches is the geometry of a window sliding over the planes of N
// images, ImageStride floats apart, for Patches32 and AddPatches32 (a
// convolution's im2col and col2im on a plane without padding, one pixel
// apart along a row): tap (a, b), a < KH, b < KW, meets OH rows of OW
// consecutive pixels, RowStride apart, from offset n·ImageStride + Base +
// a·TapRow + b·TapCol of image n (TapRow and TapCol are negative for
// flipped filters).
type Patches struct {
	N, KH, KW, OH, OW                            int
	ImageStride, Base, TapRow, TapCol, RowStride int
}

// span is the range [lo, hi] of offsets the window's taps meet.
func (p Patches) span() (lo, hi int) {
	lo, hi = p.Base, p.Base+(p.N-1)*p.ImageStride+(p.OH-1)*p.RowStride+p.OW-1
	for _, d := range []int{(p.KH - 1) * p.TapRow, (p.KW - 1) * p.TapCol} {
		if d < 0 {
			lo += d
		} else {
			hi += d
		}
	}
	return lo, hi
}

// empty says whether the window has no image, tap or pixel.
func (p Patches) empty() bool { return p.N <= 0 || p.KH <= 0 || p.KW <= 0 || p.OH <= 0 || p.OW <= 0 }

// Patches32 writes the window's taps over the images x into col, one row
// of N·OH·OW pixels per tap (the images' patches side by side), ld apart:
// col[t·ld + (n·OH + i)·OW + j] = x[n·ImageStride + Base + a·TapRow +
// b·TapCol + i·RowStride + j] for tap t = a·KW + b. Each tap's row is
// written in order, so that a group's column matrix (LeNet's second
// layer: 2 MB, rows 4 KB apart) is filled row by row, not one image's
// 256-byte piece of every row after the other; and a plane's every tap
// takes one call (the convolution called the row copy once per tap and
// image, which cost more than the copy at 8 pixels a row).
func Patches32(col []float32, ld int, x []float32, p Patches) {
	if p.empty() {
		return
	}
	lo, hi := p.span()
	_, _ = x[lo], x[hi]
	_ = col[(p.KH*p.KW-1)*ld+p.N*p.OH*p.OW-1]
	if useAVX2 {
		patches32AVX2(&col[0], ld, &x[p.Base], p.N, p.ImageStride, p.KH, p.KW, p.OH, p.OW, p.TapRow, p.TapCol, p.RowStride)
		return
	}
	for a := range p.KH {
		for b := range p.KW {
			row := col[(a*p.KW+b)*ld:]
			for n := range p.N {
				off := n*p.ImageStride + p.Base + a*p.TapRow + b*p.TapCol
				for i := range p.OH {
					copy(row[(n*p.OH+i)*p.OW:(n*p.OH+i+1)*p.OW], x[off+i*p.RowStride:])
				}
			}
		}
	}
}

// AddPatches32 is Patches32's adjoint: it adds each tap's row of col back
// into the pixels of x it was read from, x[n·ImageStride + Base +
// a·TapRow + b·TapCol + i·RowStride + j] += col[t·ld + (n·OH + i)·OW + j],
// taps in order (so each pixel receives its terms in tap order, as adding
// one image's taps one after the other does). The images must not
// overlap, and RowStride must be at least OW.
func AddPatches32(x, col []float32, ld int, p Patches) {
	if p.empty() {
		return
	}
	lo, hi := p.span()
	_, _ = x[lo], x[hi]
	_ = col[(p.KH*p.KW-1)*ld+p.N*p.OH*p.OW-1]
	if useAVX2 {
		addPatches32AVX2(&x[p.Base], &col[0], ld, p.N, p.ImageStride, p.KH, p.KW, p.OH, p.OW, p.TapRow, p.TapCol, p.RowStride)
		return
	}
	for a := range p.KH {
		for b := range p.KW {
			row := col[(a*p.KW+b)*ld:]
			for n := range p.N {
				off := n*p.ImageStride + p.Base + a*p.TapRow + b*p.TapCol
				for i := range p.OH {
					d := x[off+i*p.RowStride : off+i*p.RowStride+p.OW]
					for j, v := range row[(n*p.OH+i)*p.OW : (n*p.OH+i+1)*p.OW] {
						d[j] += v
					}
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
