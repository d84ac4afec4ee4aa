package kernels

import (
	"fmt"
	"math"
	"testing"
)

// TestConvGroupLowering: a group's columns written a channel at a time
// across the images (im2colGroup's unpadded float32 path, vec.Patches32)
// are im2col's image by image, bit for bit, and col2imGroup's sums
// (vec.AddPatches32) are col2im's, bit for bit: LeNet's two layers, with
// and without flipped filters, a row step of 2, a 1×1 window, a group of
// one image, and a padded layer (im2col's own path on both sides).
func TestConvGroupLowering(t *testing.T) {
	geom := func(n, c, h, w, kh, kw, sh, ph int, flip bool) ConvGeom {
		return ConvGeom{N: n, C: c, H: h, W: w, F: 3, KH: kh, KW: kw, SH: sh, SW: 1, PH: ph, PW: ph,
			OH: (h+2*ph-kh)/sh + 1, OW: w + 2*ph - kw + 1, Flip: flip}
	}
	for _, g := range []ConvGeom{
		geom(5, 1, 28, 28, 5, 5, 1, 0, true), geom(16, 20, 12, 12, 5, 5, 1, 0, true),
		geom(16, 20, 12, 12, 5, 5, 1, 0, false), geom(3, 2, 11, 9, 3, 2, 2, 0, false),
		geom(4, 3, 6, 6, 1, 1, 1, 0, true), geom(1, 2, 7, 7, 3, 3, 1, 0, false),
		geom(3, 2, 7, 7, 3, 3, 1, 1, true),
	} {
		t.Run(fmt.Sprintf("%+v", g), func(t *testing.T) {
			if !g.unpadded() && g.PH == 0 {
				t.Fatal("an unpadded geometry takes the generic path")
			}
			k, p, chw := g.K(), g.P(), g.C*g.H*g.W
			n0, mm := 0, g.N
			if g.N > 2 {
				n0, mm = 1, g.N-1 // a group that does not start at image 0
			}
			ld := mm*p + 3
			x := make([]float32, g.N*chw)
			for i := range x {
				x[i] = float32(math.Sin(float64(i)*0.37)) * 3
			}
			got, want := make([]float32, k*ld), make([]float32, k*ld)
			im2colGroup(g, got, ld, x, n0, mm)
			for i := range mm {
				im2col(g, want[i*p:], ld, x[(n0+i)*chw:(n0+i+1)*chw])
			}
			for r := range k {
				for e := range mm * p {
					if a, b := got[r*ld+e], want[r*ld+e]; math.Float32bits(a) != math.Float32bits(b) {
						t.Fatalf("columns [%d,%d] = %v, want %v", r, e, a, b)
					}
				}
			}

			col := make([]float32, k*ld)
			for i := range col {
				col[i] = float32(math.Cos(float64(i)*0.11)) / 7
			}
			gx, wx := make([]float32, len(x)), make([]float32, len(x))
			for i := range gx {
				gx[i], wx[i] = 5, 5 // the images outside the group keep theirs
			}
			col2imGroup(g, gx, col, ld, n0, mm)
			for i := range mm {
				img := wx[(n0+i)*chw : (n0+i+1)*chw]
				clear(img)
				col2im(g, img, col[i*p:], ld)
			}
			for i := range wx {
				if math.Float32bits(gx[i]) != math.Float32bits(wx[i]) {
					t.Fatalf("image gradient [%d] = %v, want %v", i, gx[i], wx[i])
				}
			}
		})
	}
}
