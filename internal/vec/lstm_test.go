package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sameBitsOrNaN is sameBits with any NaN equal to any other: where both
// operands of an operation are NaNs, x86 returns the first one's sign and
// payload, and the Go compiler orders a commutative operation's operands
// as its registers fall (the portable loop and core's generic loop, two
// compilations of the same expressions, need not agree either).
func sameBitsOrNaN(t *testing.T, name string, n int, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != got[i] && want[i] != want[i] {
			continue
		}
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s n=%d: [%d] = %v (%#x), want %v (%#x)", name, n, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestLSTMGrad: the AVX2 kernel of the LSTM step's gradient gives the
// portable loop's bits on random and special values (NaNs' signs and
// payloads aside), for lengths around the block of 8 (every output: the
// gates' gradients, the previous cell's, the peepholes' sums); and one
// entry against the formulas.
func TestLSTMGrad(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for _, d := range []int{0, 1, 7, 8, 9, 16, 23, 40} {
		g, dh1, dh2, dc1 := randomSlice(r, 4*d), randomSlice(r, d), randomSlice(r, d), randomSlice(r, d)
		c, tc, cp := randomSlice(r, d), randomSlice(r, d), randomSlice(r, d)
		wci, wcf, wco := randomSlice(r, d), randomSlice(r, d), randomSlice(r, d)
		dcp0, s0 := randomSlice(r, d), randomSlice(r, 3*d)
		var outs [2][5][]float32
		for k, avx := range []bool{useAVX2, false} {
			saved := useAVX2
			useAVX2 = avx
			da, dcp, s := make([]float32, 4*d), append([]float32(nil), dcp0...), append([]float32(nil), s0...)
			// Two rows' worth: the sums accumulate over rows.
			for range 2 {
				LSTMGrad32(da, dcp, s[:d], s[d:2*d], s[2*d:], dh1, dh2, dc1, g, c, tc, cp, wci, wcf, wco)
			}
			outs[k] = [5][]float32{da, dcp, s[:d], s[d : 2*d], s[2*d:]}
			useAVX2 = saved
		}
		for i, name := range []string{"da", "dcp", "sci", "scf", "sco"} {
			sameBitsOrNaN(t, "LSTMGrad32 "+name, d, outs[0][i], outs[1][i])
		}
	}
	const d = 9
	one := func(v float32, n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	g := append(append(append(one(0.5, d), one(0.25, d)...), one(0.5, d)...), one(0.75, d)...) // i, f, c̃, o
	da, dcp, s := make([]float32, 4*d), one(0.25, d), one(1, 3*d)
	LSTMGrad32(da, dcp, s[:d], s[d:2*d], s[2*d:], one(0.25, d), one(0.25, d), one(0.5, d), g,
		one(1, d), one(0.5, d), one(2, d), one(0.5, d), one(0.5, d), one(0.5, d))
	// dh = 0.5, dc = 0.75, t = 0.5: dct = 0.75 + 0.5·0.75·0.75 = 1.03125;
	// dao = 0.5·0.5·0.75·0.25 = 0.046875; dct += dao·0.5 → 1.0546875;
	// dai = dct·0.5·0.5·0.5, daf = dct·2·0.25·0.75, dag = dct·0.5·0.75;
	// dcp = dct·0.25 + dai·0.5 + daf·0.5; sums 1 + dai·2, 1 + daf·2, 1 + dao·1.
	want := []struct {
		name      string
		got, want float32
	}{
		{"dai", da[0], 0.1318359375}, {"daf", da[d], 0.3955078125}, {"dag", da[2*d], 0.3955078125},
		{"dao", da[3*d], 0.046875}, {"dcp", dcp[0], 0.52734375},
		{"sci", s[0], 1.263671875}, {"scf", s[d], 1.791015625}, {"sco", s[2*d], 1.046875},
		{"dao (tail)", da[4*d-1], 0.046875}, {"dcp (tail)", dcp[d-1], 0.52734375},
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("LSTMGrad32 %s = %v, want %v", w.name, w.got, w.want)
		}
	}
}

// BenchmarkLSTMGrad: the gradient of one row, of lstm-lm's 256 and
// lstm-big's 1024 units, with the AVX2 kernel and with the portable loop
// (values in (-0.9, 0.9), the same every time: no subnormal or infinity
// building up).
func BenchmarkLSTMGrad(b *testing.B) {
	for _, d := range []int{256, 1024} {
		r := rand.New(rand.NewPCG(37, 38))
		randomSlice := func(_ *rand.Rand, n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(r.Float64()*1.8 - 0.9)
			}
			return s
		}
		g, dh1, dh2, dc1 := randomSlice(r, 4*d), randomSlice(r, d), randomSlice(r, d), randomSlice(r, d)
		c, tc, cp := randomSlice(r, d), randomSlice(r, d), randomSlice(r, d)
		wci, wcf, wco := randomSlice(r, d), randomSlice(r, d), randomSlice(r, d)
		da, dcp0, s := make([]float32, 4*d), randomSlice(r, d), make([]float32, 3*d)
		dcp := make([]float32, d)
		for _, avx := range []bool{true, false} {
			name := "avx2"
			if !avx {
				name = "portable"
			}
			b.Run(fmt.Sprintf("%s/d=%d", name, d), func(b *testing.B) {
				saved := useAVX2
				useAVX2 = avx && saved
				defer func() { useAVX2 = saved }()
				for range b.N {
					copy(dcp, dcp0) // the same values every time
					clear(s)
					LSTMGrad32(da, dcp, s[:d], s[d:2*d], s[2*d:], dh1, dh2, dc1, g, c, tc, cp, wci, wcf, wco)
				}
			})
		}
	}
}
