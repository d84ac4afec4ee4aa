package vec

import (
	"math/rand/v2"
	"testing"
)

// The row kernels against index arithmetic, widths around the block of 8,
// with the AVX2 path and the portable one.
func TestRows(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, avx := range []bool{useAVX2, false} {
		saved := useAVX2
		useAVX2 = avx
		for _, width := range []int{1, 5, 8, 9, 12, 16, 24, 25} {
			for _, rows := range []int{1, 3, 8} {
				stride := width + r.IntN(5)
				src := randomSlice(r, (rows-1)*stride+width)
				dst := make([]float32, rows*width+1)
				dst[rows*width] = 42
				CopyRows32(dst, src, rows, width, stride)
				for i := range rows {
					for j := range width {
						if dst[i*width+j] != src[i*stride+j] && src[i*stride+j] == src[i*stride+j] {
							t.Fatalf("avx %v CopyRows32 width %d rows %d: [%d,%d] = %v, want %v", avx, width, rows, i, j, dst[i*width+j], src[i*stride+j])
						}
					}
				}
				if dst[rows*width] != 42 {
					t.Fatal("CopyRows32 wrote past the end")
				}
				acc := randomSlice(r, (rows-1)*stride+width)
				want := append([]float32(nil), acc...)
				add := randomSlice(r, rows*width)
				AddRows32(acc, add, rows, width, stride)
				for i := range rows {
					for j := range width {
						want[i*stride+j] += add[i*width+j]
					}
				}
				sameBits(t, "AddRows32", width, acc, want)
			}
		}
		useAVX2 = saved
	}
}
