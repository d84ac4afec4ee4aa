package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// patchCases are windows over n planes of h×w pixels: valid 5×5 windows
// (LeNet's layers: rows of 24 and 8 pixels, 2 and 16 images), widths
// around the block of 8, flipped taps, a row step of 2, a window of one
// tap, planes with a gap between them.
func patchCases() []struct {
	h, w int
	p    Patches
} {
	valid := func(n, h, w, kh, kw, sh int, flip bool) struct {
		h, w int
		p    Patches
	} {
		p := Patches{N: n, ImageStride: h*w + n%3, KH: kh, KW: kw, OH: (h-kh)/sh + 1, OW: w - kw + 1, TapRow: w, TapCol: 1, RowStride: sh * w}
		if flip {
			p.Base, p.TapRow, p.TapCol = (kh-1)*w+kw-1, -w, -1
		}
		return struct {
			h, w int
			p    Patches
		}{h, w, p}
	}
	return []struct {
		h, w int
		p    Patches
	}{
		valid(2, 28, 28, 5, 5, 1, false), valid(16, 12, 12, 5, 5, 1, true),
		valid(1, 9, 9, 3, 3, 1, false), valid(3, 7, 16, 2, 4, 1, true),
		valid(4, 11, 13, 3, 2, 2, false), valid(1, 6, 17, 1, 1, 1, false),
		valid(5, 10, 10, 3, 1, 3, true), valid(1, 4, 4, 4, 4, 1, false),
	}
}

// TestPatches: Patches32 against index arithmetic, with the AVX2 path
// and the portable one; nothing written between the taps' rows;
// AddPatches32 gives the bits of adding one tap's rows after the other
// (AddRows32, col2im's loop before it), and a tap's sum is the adjoint's
// (⟨Patches(x), c⟩ = ⟨x, AddPatches(c)⟩ in exact small integers).
func TestPatches(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, avx := range []bool{useAVX2, false} {
		saved := useAVX2
		useAVX2 = avx
		for _, c := range patchCases() {
			name := fmt.Sprintf("avx %v %dx%d %+v", avx, c.h, c.w, c.p)
			p := c.p
			size := (p.N-1)*p.ImageStride + c.h*c.w
			x := randomSlice(r, size)
			npix := p.N * p.OH * p.OW
			ld := npix + r.IntN(3)
			taps := p.KH * p.KW
			col := make([]float32, taps*ld)
			for i := range col {
				col[i] = 42
			}
			Patches32(col, ld, x, p)
			for a := range p.KH {
				for b := range p.KW {
					tp := a*p.KW + b
					for n := range p.N {
						for i := range p.OH {
							for j := range p.OW {
								want := x[n*p.ImageStride+p.Base+a*p.TapRow+b*p.TapCol+i*p.RowStride+j]
								if g := col[tp*ld+(n*p.OH+i)*p.OW+j]; math.Float32bits(g) != math.Float32bits(want) {
									t.Fatalf("%s: tap (%d,%d) image %d [%d,%d] = %v, want %v", name, a, b, n, i, j, g, want)
								}
							}
						}
					}
					for e := npix; e < ld; e++ {
						if col[tp*ld+e] != 42 {
							t.Fatalf("%s: wrote past tap %d's row", name, tp)
						}
					}
				}
			}

			g := randomSlice(r, len(col))
			got := randomSlice(r, size)
			want := append([]float32(nil), got...)
			AddPatches32(got, g, ld, p)
			for n := range p.N {
				for a := range p.KH {
					for b := range p.KW {
						off := n*p.ImageStride + p.Base + a*p.TapRow + b*p.TapCol
						AddRows32(want[off:], p.RowStride, g[(a*p.KW+b)*ld+n*p.OH*p.OW:], p.OW, p.OH, p.OW)
					}
				}
			}
			sameBits(t, "AddPatches32 "+name, len(want), got, want)

			// The adjoint, in small integers (every sum exact).
			for i := range x {
				x[i] = float32(r.IntN(7) - 3)
			}
			for i := range g {
				g[i] = float32(r.IntN(7) - 3)
			}
			Patches32(col, ld, x, p)
			gx := make([]float32, len(x))
			AddPatches32(gx, g, ld, p)
			var lhs, rhs float32
			for tp := range taps {
				for e := range npix {
					lhs += col[tp*ld+e] * g[tp*ld+e]
				}
			}
			for i := range x {
				rhs += x[i] * gx[i]
			}
			if lhs != rhs {
				t.Fatalf("%s: <Patches(x), g> = %v, <x, AddPatches(g)> = %v", name, lhs, rhs)
			}
		}
		useAVX2 = saved
	}
}

// TestCopyRowsBias: each row copied with its bias added, the bits of
// v + b, widths around the block of 8, with the AVX2 path and the
// portable one; nothing written between rows.
func TestCopyRowsBias(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, avx := range []bool{useAVX2, false} {
		saved := useAVX2
		useAVX2 = avx
		for _, width := range []int{1, 5, 8, 9, 24, 64, 67} {
			for _, rows := range []int{1, 3, 20} {
				ss, ds := width+r.IntN(5), width+r.IntN(5)
				src, bias := randomSlice(r, (rows-1)*ss+width), randomSlice(r, rows)
				dst := make([]float32, (rows-1)*ds+width+1)
				for i := range dst {
					dst[i] = 42
				}
				CopyRowsBias32(dst, ds, src, ss, rows, width, bias)
				want := append([]float32(nil), dst...)
				for i := range rows {
					for j := range width {
						want[i*ds+j] = src[i*ss+j] + bias[i]
					}
				}
				sameBits(t, fmt.Sprintf("avx %v CopyRowsBias32 rows %d", avx, rows), width, dst, want)
			}
		}
		useAVX2 = saved
	}
}
