package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// convGeoms are geometries for the im2col tests: padding on either side,
// flipped filters, row steps, filters wider than the padded image, and
// LeNet's two convolutions.
func convGeoms() []ConvGeom {
	var gs []ConvGeom
	add := func(c, h, w, kh, kw, sh, ph, pw int, flip bool) {
		oh := (h+2*ph-kh)/sh + 1
		ow := w + 2*pw - kw + 1
		if oh <= 0 || ow <= 0 {
			return
		}
		gs = append(gs, ConvGeom{N: 1, C: c, H: h, W: w, F: 1, KH: kh, KW: kw, SH: sh, SW: 1, PH: ph, PW: pw, OH: oh, OW: ow, Flip: flip})
	}
	add(1, 28, 28, 5, 5, 1, 0, 0, false) // LeNet conv_0
	add(20, 12, 12, 5, 5, 1, 0, 0, true) // LeNet conv_1
	for _, flip := range []bool{false, true} {
		for _, sh := range []int{1, 2, 3} {
			for _, pad := range [][2]int{{0, 0}, {1, 2}, {2, 1}, {4, 4}} {
				add(3, 7, 6, 3, 4, sh, pad[0], pad[1], flip)
				add(2, 5, 9, 5, 2, sh, pad[0], pad[1], flip)
				add(1, 3, 3, 1, 7, sh, pad[0], pad[1]+3, flip)
			}
		}
	}
	return gs
}

// TestIm2colFloat32: the float32 im2col (taps from a table) writes what
// the generic loop writes for float64 (exact: a copy), padding zeros
// included, over a buffer of stale values; its adjoint col2im32 adds the
// columns into the image as a naive loop in the same order does, bit for
// bit.
func TestIm2colFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, g := range convGeoms() {
		k, p := g.K(), g.P()
		ld := p + 3 // a column block wider than one image's, as a group's
		x32 := make([]float32, g.C*g.H*g.W)
		x64 := make([]float64, len(x32))
		for i := range x32 {
			x32[i] = float32(r.NormFloat64())
			x64[i] = float64(x32[i])
		}
		col32, col64 := make([]float32, k*ld), make([]float64, k*ld)
		for i := range col32 {
			col32[i], col64[i] = 42, 42
		}
		im2col(g, col32, ld, x32)
		im2col(g, col64, ld, x64)
		for i := range col32 {
			if float64(col32[i]) != col64[i] {
				t.Fatalf("%+v: col[%d] = %v, want %v", g, i, col32[i], col64[i])
			}
		}
		// col2im: a naive loop over (channel, filter entry, output pixel).
		for i := range col32 {
			col32[i] = float32(r.NormFloat64())
		}
		got := make([]float32, len(x32))
		want := make([]float32, len(x32))
		for i := range got {
			got[i] = float32(r.NormFloat64())
			want[i] = got[i]
		}
		col2im(g, got, col32, ld)
		for ci := 0; ci < g.C; ci++ {
			for a := 0; a < g.KH; a++ {
				for b := 0; b < g.KW; b++ {
					rr, ss := g.tap(a, b)
					row := col32[((ci*g.KH+a)*g.KW+b)*ld:]
					for i := 0; i < g.OH; i++ {
						for j := 0; j < g.OW; j++ {
							y, xx := i*g.SH+rr-g.PH, j+ss-g.PW
							if y >= 0 && y < g.H && xx >= 0 && xx < g.W {
								want[(ci*g.H+y)*g.W+xx] += row[i*g.OW+j]
							}
						}
					}
				}
			}
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: col2im gx[%d] = %v, want %v", g, i, got[i], want[i])
			}
		}
	}
}
