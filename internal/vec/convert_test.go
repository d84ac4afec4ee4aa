package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScaleShiftUint8ToFloat32 checks the kernel against the portable loop,
// bit for bit, for every byte value, lengths around the kernel's block of
// 16, unaligned starts, and scales and shifts that round differently in
// float32 and float64 (1/255 among them).
func TestScaleShiftUint8ToFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]uint8, 1000)
	for i := range src {
		src[i] = uint8(i*37 + i/256)
	}
	cases := [][2]float64{{1 / 255.0, 0}, {1, 0}, {-1 / 3.0, 0.5}, {2.0 / 255, -1}, {1e-40, 0}, {1e39, 0}, {-0.0, 0}, {math.Inf(1), 0}, {math.NaN(), 1}}
	for range 20 {
		cases = append(cases, [2]float64{r.NormFloat64(), r.NormFloat64()})
	}
	for _, c := range cases {
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 256, 999} {
			for _, off := range []int{0, 1, 3} {
				if off+n > len(src) {
					continue
				}
				s := src[off : off+n]
				want := make([]float32, n)
				scaleShiftUint8ToFloat32Go(want, s, c[0], c[1])
				got := make([]float32, n+1)
				got[n] = 42
				ScaleShiftUint8ToFloat32(got[:n], s, c[0], c[1])
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("scale %v shift %v n %d off %d: dst[%d] = %v (%#x), want %v (%#x)", c[0], c[1], n, off, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
				if got[n] != 42 {
					t.Fatalf("n %d: wrote past the end", n)
				}
			}
		}
	}
	// Independent of the portable loop: 255/255 is exactly 1 and 0 is 0.
	out := make([]float32, 32)
	in := make([]uint8, 32)
	in[0], in[17] = 255, 255
	ScaleShiftUint8ToFloat32(out, in, 1/255.0, 0)
	if out[0] != 1 || out[17] != 1 || out[1] != 0 {
		t.Fatalf("got %v", out)
	}
}

func BenchmarkScaleShiftUint8ToFloat32(b *testing.B) {
	src := make([]uint8, 256*784)
	dst := make([]float32, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		ScaleShiftUint8ToFloat32(dst, src, 1/255.0, 0)
	}
}

func BenchmarkScaleShiftUint8ToFloat32Go(b *testing.B) {
	src := make([]uint8, 256*784)
	dst := make([]float32, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		scaleShiftUint8ToFloat32Go(dst, src, 1/255.0, 0)
	}
}

// TestByteScaler checks the converter against the portable loop bit for
// bit, for every byte value at every position of the kernel's block, on
// the scales and shifts of TestScaleShiftUint8ToFloat32, and that the
// float32 kernel is taken for MNIST's 1/255 (where the machine has FMA).
func TestByteScaler(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]uint8, 16*256+37)
	for i := range src {
		src[i] = uint8(i*37 + i/256)
	}
	cases := [][2]float64{{1 / 255.0, 0}, {1, 0}, {-1 / 3.0, 0.5}, {2.0 / 255, -1}, {1e-40, 0}, {1e39, 0}, {-0.0, 0}, {math.Inf(1), 0}, {math.NaN(), 1}, {1 / 255.0, 0.5}, {-1 / 255.0, 0}, {1 / 256.0, 0}, {0.1, 0}, {1 / 58.0, 0}, {1e-45, 0}, {3e38, 0}}
	for range 40 {
		cases = append(cases, [2]float64{r.NormFloat64(), r.NormFloat64()}, [2]float64{1 / float64(1+r.IntN(1000)), 0})
	}
	fast := 0
	for _, c := range cases {
		s := NewByteScaler(c[0], c[1])
		if s.Fast() {
			fast++
		}
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 256, 16 * 256, len(src) - 1} {
			for _, off := range []int{0, 1} {
				sub := src[off : off+n]
				want := make([]float32, n)
				scaleShiftUint8ToFloat32Go(want, sub, c[0], c[1])
				got := make([]float32, n+1)
				got[n] = 42
				s.Convert(got[:n], sub)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("scale %v shift %v (fast %v) n %d off %d: dst[%d] = %v (%#x), want %v (%#x)", c[0], c[1], s.Fast(), n, off, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
				if got[n] != 42 {
					t.Fatalf("n %d: wrote past the end", n)
				}
			}
		}
	}
	if useFMA && !NewByteScaler(1/255.0, 0).Fast() {
		t.Errorf("1/255: the float32 kernel was not proven right")
	}
	t.Logf("%d of %d scales and shifts take the float32 kernel", fast, len(cases))
	// Independent of the portable loop: 255/255 is exactly 1, 51/255 is
	// float32(0.2), 0 is 0.
	out := make([]float32, 32)
	in := make([]uint8, 32)
	in[0], in[17], in[5] = 255, 255, 51
	NewByteScaler(1/255.0, 0).Convert(out, in)
	if out[0] != 1 || out[17] != 1 || out[1] != 0 || out[5] != float32(0.2) {
		t.Fatalf("got %v", out)
	}
}

func BenchmarkByteScaler(b *testing.B) {
	src := make([]uint8, 256*784)
	for i := range src {
		src[i] = uint8(i)
	}
	dst := make([]float32, len(src))
	s := NewByteScaler(1/255.0, 0)
	if !s.Fast() {
		b.Log("not the float32 kernel")
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		s.Convert(dst, src)
	}
}
