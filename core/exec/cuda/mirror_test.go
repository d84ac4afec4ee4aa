package cuda

import (
	"math"

	"github.com/blocks-go/blocks/nd"
)

// Go mirrors of kernels.cu's kernels: each loops over the kernel's thread
// index i and runs the kernel's per-element body, statement for
// statement, on the same geometry arrays (geometry.go) the op kernels
// upload. geometry_test.go drives them as the op kernels (kernels_*.go)
// launch the kernels (groups of images, the products between them) and
// compares the results with the CPU backend's ops: the index arithmetic of
// the kernels and of their launches, checked without a GPU.

const (
	gC = iota
	gH
	gW
	gKH
	gKW
	gSH
	gSW
	gPH
	gPW
	gOH
	gOW
	gFlip
)

func mIm2col(col, x []float32, m int64, geom []int64) {
	c, h, w, kh, kw := geom[gC], geom[gH], geom[gW], geom[gKH], geom[gKW]
	oh, ow := geom[gOH], geom[gOW]
	p := oh * ow
	ld := m * p
	total := c * kh * kw * ld
	for i := int64(0); i < total; i++ {
		r, rem := i/ld, i%ld
		img, q := rem/p, rem%p
		b, a, ci := r%kw, (r/kw)%kh, r/(kw*kh)
		rr, ss := a, b
		if geom[gFlip] != 0 {
			rr, ss = kh-1-a, kw-1-b
		}
		y, xx := (q/ow)*geom[gSH]+rr-geom[gPH], (q%ow)*geom[gSW]+ss-geom[gPW]
		if y >= 0 && y < h && xx >= 0 && xx < w {
			col[i] = x[((img*c+ci)*h+y)*w+xx]
		} else {
			col[i] = 0
		}
	}
}

func mCol2im(gx, col []float32, m int64, geom []int64) {
	c, h, w, kh, kw := geom[gC], geom[gH], geom[gW], geom[gKH], geom[gKW]
	sh, sw, oh, ow := geom[gSH], geom[gSW], geom[gOH], geom[gOW]
	p := oh * ow
	ld := m * p
	total := m * c * h * w
	for i := int64(0); i < total; i++ {
		xx, y, ci, img := i%w, (i/w)%h, (i/(w*h))%c, i/(w*h*c)
		var s float32
		for a := int64(0); a < kh; a++ {
			rr := a
			if geom[gFlip] != 0 {
				rr = kh - 1 - a
			}
			ty := y + geom[gPH] - rr
			if ty < 0 || ty%sh != 0 || ty/sh >= oh {
				continue
			}
			oy := ty / sh
			for b := int64(0); b < kw; b++ {
				ss := b
				if geom[gFlip] != 0 {
					ss = kw - 1 - b
				}
				tx := xx + geom[gPW] - ss
				if tx < 0 || tx%sw != 0 || tx/sw >= ow {
					continue
				}
				s += col[((ci*kh+a)*kw+b)*ld+img*p+oy*ow+tx/sw]
			}
		}
		gx[i] = s
	}
}

func mConvScatter(y, tmp, bias []float32, m, f, p int64) {
	ld := m * p
	for i := int64(0); i < m*f*p; i++ {
		q, fi, img := i%p, (i/p)%f, i/(p*f)
		v := tmp[fi*ld+img*p+q]
		if bias != nil {
			v += bias[fi]
		}
		y[i] = v
	}
}

func mConvGather(dst, gz []float32, m, f, p int64) {
	ld := m * p
	for i := int64(0); i < m*f*p; i++ {
		q, fi, img := i%p, (i/p)%f, i/(p*f)
		dst[fi*ld+img*p+q] = gz[i]
	}
}

// mGemm is a row-major product of contiguous operands as the op kernels
// calls it (sums in float64, rounded once).
func mGemm(tA, tB bool, m, n, k int, a, b, c []float32) {
	for r := range m {
		for col := range n {
			s := 0.0
			for q := range k {
				av := a[r*k+q]
				if tA {
					av = a[q*m+r]
				}
				bv := b[q*n+col]
				if tB {
					bv = b[col*k+q]
				}
				s += float64(av) * float64(bv)
			}
			c[r*n+col] = float32(s)
		}
	}
}

const (
	pH = iota
	pW
	pOH
	pOW
	pSz0
	pSz1
	pSt0
	pSt1
	pPad0
	pPad1
	pMode
)

func mPspan(i, n, size, step, pad int64) (lo, hi, inc int64) {
	a := i * step
	b := min(a+size, n+2*pad)
	return max(a, pad) - pad, min(b, n+pad) - pad, b - a
}

func mPcount(g []int64, rlo, rhi, rinc, clo, chi, cinc int64) int64 {
	if g[pMode] == 2 {
		return rinc * cinc
	}
	return max(0, rhi-rlo) * max(0, chi-clo)
}

func mPool2d(out, x []float32, planes int64, g []int64) {
	h, w, oh, ow := g[pH], g[pW], g[pOH], g[pOW]
	for i := int64(0); i < planes*oh*ow; i++ {
		pl, oy, ox := i/(oh*ow), (i/ow)%oh, i%ow
		rlo, rhi, rinc := mPspan(oy, h, g[pSz0], g[pSt0], g[pPad0])
		clo, chi, cinc := mPspan(ox, w, g[pSz1], g[pSt1], g[pPad1])
		xp := x[pl*h*w:]
		s := float32(0)
		if g[pMode] == 0 {
			s = float32(math.Inf(-1))
		}
		for r := rlo; r < rhi; r++ {
			for cc := clo; cc < chi; cc++ {
				e := xp[r*w+cc]
				if g[pMode] == 0 {
					if e > s {
						s = e
					}
				} else {
					s += e
				}
			}
		}
		if g[pMode] != 0 && g[pMode] != 1 {
			if n := mPcount(g, rlo, rhi, rinc, clo, chi, cinc); n > 0 {
				s /= float32(n)
			}
		}
		out[i] = s
	}
}

func mPool2dGrad(gx, x, y, gz []float32, planes int64, g []int64) {
	h, w, oh, ow := g[pH], g[pW], g[pOH], g[pOW]
	for i := int64(0); i < planes*h*w; i++ {
		pl, r, c := i/(h*w), (i/w)%h, i%w
		r0, c0 := r+g[pPad0]-g[pSz0]+1, c+g[pPad1]-g[pSz1]+1
		if r0 <= 0 {
			r0 = 0
		} else {
			r0 = (r0 + g[pSt0] - 1) / g[pSt0]
		}
		if c0 <= 0 {
			c0 = 0
		} else {
			c0 = (c0 + g[pSt1] - 1) / g[pSt1]
		}
		r1, c1 := min(oh-1, (r+g[pPad0])/g[pSt0]), min(ow-1, (c+g[pPad1])/g[pSt1])
		var s float32
		for oy := r0; oy <= r1; oy++ {
			rlo, rhi, rinc := mPspan(oy, h, g[pSz0], g[pSt0], g[pPad0])
			if r < rlo || r >= rhi {
				continue
			}
			for ox := c0; ox <= c1; ox++ {
				clo, chi, cinc := mPspan(ox, w, g[pSz1], g[pSt1], g[pPad1])
				if c < clo || c >= chi {
					continue
				}
				o := (pl*oh+oy)*ow + ox
				if g[pMode] == 0 {
					if x[i] == y[o] {
						s += gz[o]
					}
				} else {
					d := gz[o]
					if n := mPcount(g, rlo, rhi, rinc, clo, chi, cinc); g[pMode] != 1 && n > 0 {
						d /= float32(n)
					}
					s += d
				}
			}
		}
		gx[i] = s
	}
}

func mTake(out, w []float32, idx []int64, n, row int64) {
	for i := int64(0); i < n*row; i++ {
		out[i] = w[idx[i/row]*row+i%row]
	}
}

func mTakeGrad(gw, gz []float32, perm, start []int64, rows, row int64) {
	for i := int64(0); i < rows*row; i++ {
		j, c := i/row, i%row
		var s float32
		for q := start[j]; q < start[j+1]; q++ {
			s += gz[perm[q]*row+c]
		}
		gw[i] = s
	}
}

// mFusedRule is fused_rule for one element range; scalars as floats.
func mFusedRule(out, f0, f1, f2 []float32, a, b, c, d float32, n, rule int64, c0 float64) {
	for i := int64(0); i < n; i++ {
		g := f0[i]
		switch rule {
		case 0:
			out[i] = a*f1[i] + g
		case 1:
			ms := a*f1[i] + (1-a)*g*g
			dx := float32(math.Sqrt(float64(f2[i]+b))) / float32(math.Sqrt(float64(ms+b))) * g
			out[i] = dx
			out[n+i] = ms
			out[2*n+i] = a*f2[i] + (1-a)*dx*dx
		case 2:
			m := a*f1[i] + (1-a)*g*g
			out[n+i] = m
			out[i] = g / goMax(float32(math.Sqrt(float64(m))), float32(c0))
		case 3:
			q := g*g + f1[i]
			out[n+i] = q
			out[i] = a * g / (float32(math.Sqrt(float64(q))) + b)
		case 4:
			m := b*f1[i] + (1-b)*g
			v := c*f2[i] + (1-c)*g*g
			out[n+i] = m
			out[2*n+i] = v
			out[i] = a * m / (float32(math.Sqrt(float64(v))) + d)
		}
	}
}

func goMax(a, b float32) float32 {
	if a != a || b != b {
		return float32(math.NaN())
	}
	if a > b {
		return a
	}
	return b
}

func f32(a *nd.Array) []float32 { return a.Data.([]float32) }

// mStridedGather is ew_strided's copy (unop E_COPY of a[ia]) over shape
// with a's strides; mStridedScatter is strided_scatter.
func mStridedGather(out, a []float32, base int, shape, st []int64) {
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	for i := int64(0); i < n; i++ {
		r, ia := i, int64(0)
		for d := len(shape) - 1; d >= 0; d-- {
			c := r % shape[d]
			r /= shape[d]
			ia += c * st[d]
		}
		out[i] = a[int64(base)+ia]
	}
}

func mStridedScatter(dst, src []float32, base int, n int64, shape, st []int64) {
	for i := int64(0); i < n; i++ {
		r, off := i, int64(0)
		for d := len(shape) - 1; d >= 0; d-- {
			off += (r % shape[d]) * st[d]
			r /= shape[d]
		}
		dst[int64(base)+off] = src[i]
	}
}

func mMaxout(y, x []float32, k, n int64) {
	for i := int64(0); i < n; i++ {
		m := x[i*k]
		for p := i*k + 1; p < (i+1)*k; p++ {
			if x[p] > m {
				m = x[p]
			}
		}
		y[i] = m
	}
}

func mMaxoutGrad(gx, x, y, gz []float32, k, n int64) {
	for p := int64(0); p < n*k; p++ {
		i := p / k
		if x[p] == y[i] {
			gx[p] = gz[i]
		} else {
			gx[p] = 0
		}
	}
}

func mArgReduce(out []int64, x []float32, outer, n, inner int64, isMax bool) {
	for o := int64(0); o < outer*inner; o++ {
		a, c, bi := o/inner, o%inner, int64(0)
		best := 0.0
		for i := int64(0); i < n; i++ {
			v := float64(x[(a*n+i)*inner+c])
			if i == 0 || (isMax && v > best) || (!isMax && v < best) {
				best, bi = v, i
			}
		}
		out[o] = bi
	}
}
