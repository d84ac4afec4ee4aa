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

// TestCopyTaps: CopyTaps32 against index arithmetic, widths around the
// block of 8, with the AVX2 path and the portable one; nothing outside
// the blocks is written, and a block outside src panics.
func TestCopyTaps(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, avx := range []bool{useAVX2, false} {
		saved := useAVX2
		useAVX2 = avx
		for _, width := range []int{1, 5, 8, 9, 16, 24, 25} {
			for _, rows := range []int{1, 3, 8} {
				srcStride := width + r.IntN(5)
				offs := []int{0, 3, 1, 2*srcStride + 1, 7}
				src := make([]float32, 8+(rows+2)*srcStride+width)
				for i := range src {
					src[i] = float32(r.NormFloat64())
				}
				ld := rows*width + r.IntN(4)
				dst := make([]float32, len(offs)*ld+3)
				for i := range dst {
					dst[i] = -7
				}
				CopyTaps32(dst, ld, src, offs, srcStride, rows, width)
				for k := range dst {
					tp, e := k/ld, k%ld
					want := float32(-7)
					if tp < len(offs) && e < rows*width {
						want = src[offs[tp]+e/width*srcStride+e%width]
					}
					if dst[k] != want {
						t.Fatalf("avx %v width %d rows %d: dst[%d] = %v, want %v", avx, width, rows, k, dst[k], want)
					}
				}
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("avx %v width %d rows %d: a block past src's end did not panic", avx, width, rows)
						}
					}()
					CopyTaps32(dst, ld, src, []int{len(src) - width + 1}, srcStride, 1, width)
				}()
			}
		}
		useAVX2 = saved
	}
}

// TestAddTaps: AddTaps32 against one AddRows32 a tap in order (the taps'
// blocks overlap in dst, as a col2im's do), bit for bit, with the AVX2
// path and the portable one, widths around the block of 8.
func TestAddTaps(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, avx := range []bool{useAVX2, false} {
		saved := useAVX2
		useAVX2 = avx
		for _, width := range []int{1, 5, 8, 9, 16, 24, 25} {
			for _, rows := range []int{1, 3, 8} {
				dstStride := width + r.IntN(5)
				offs := []int{0, 3, 1, 2*dstStride + 1, 7, 1}
				ld := rows*width + r.IntN(4)
				src := make([]float32, len(offs)*ld)
				for i := range src {
					src[i] = float32(r.NormFloat64())
				}
				got := make([]float32, 8+(rows+2)*dstStride+width)
				for i := range got {
					got[i] = float32(r.NormFloat64())
				}
				want := append([]float32(nil), got...)
				AddTaps32(got, dstStride, src, ld, offs, rows, width)
				useAVX2 = saved
				for k, o := range offs {
					AddRows32(want[o:], dstStride, src[k*ld:], width, rows, width)
				}
				useAVX2 = avx
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("avx %v width %d rows %d: dst[%d] = %v, want %v", avx, width, rows, i, got[i], want[i])
					}
				}
			}
		}
		useAVX2 = saved
	}
}
