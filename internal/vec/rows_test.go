package vec

import (
	"math/rand/v2"
	"testing"
)

// The row kernels against index arithmetic, widths around the block of 8,
// strides on either side, with the AVX2 path and the portable one.
func TestRows(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, avx := range []bool{useAVX2, false} {
		saved := useAVX2
		useAVX2 = avx
		for _, width := range []int{1, 5, 8, 9, 12, 16, 24, 25} {
			for _, rows := range []int{1, 3, 8} {
				ss, ds := width+r.IntN(5), width+r.IntN(5)
				src := randomSlice(r, (rows-1)*ss+width)
				dst := make([]float32, (rows-1)*ds+width+1)
				for i := range dst {
					dst[i] = 42
				}
				CopyRows32(dst, ds, src, ss, rows, width)
				for i := range rows {
					for j := range width {
						if g, w := dst[i*ds+j], src[i*ss+j]; g != w && w == w {
							t.Fatalf("avx %v CopyRows32 width %d rows %d: [%d,%d] = %v, want %v", avx, width, rows, i, j, g, w)
						}
					}
					for j := width; j < ds && i*ds+j < len(dst); j++ {
						if dst[i*ds+j] != 42 {
							t.Fatalf("avx %v CopyRows32 wrote between rows", avx)
						}
					}
				}
				acc := randomSlice(r, (rows-1)*ds+width)
				want := append([]float32(nil), acc...)
				add := randomSlice(r, (rows-1)*ss+width)
				AddRows32(acc, ds, add, ss, rows, width)
				for i := range rows {
					for j := range width {
						want[i*ds+j] += add[i*ss+j]
					}
				}
				sameBits(t, "AddRows32", width, acc, want)
			}
		}
		useAVX2 = saved
	}
}
