package vec

import "math"

// Exp32 is e^x in float32 arithmetic, within 2 ulp of the exact value
// (Cephes' expf: x = n·ln2 + r with |r| ≤ ln2/2, a degree-6 polynomial
// for e^r, then the exponent n added). Every product is rounded before the
// next addition (explicit conversions), so no architecture fuses them and
// the result is the same everywhere. Below -87.33654 (where e^x leaves
// float32's normal range) it gives 0, above 88.72284 +Inf; NaN gives NaN.
// About 5 times as fast as float32(math.Exp(float64(x))).
func Exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72284:
		return float32(math.Inf(1))
	case x < -87.33654:
		return 0
	}
	n := float32(math.RoundToEven(float64(float32(x * 1.44269504088896341))))
	// x − n·ln2, with ln2 in two parts so that n·C1 is exact.
	r := x - float32(n*0.693359375)
	r = r - float32(n*-2.12194440e-4)
	p := float32(1.9875691500e-4*r) + 1.3981999507e-3
	p = float32(p*r) + 8.3334519073e-3
	p = float32(p*r) + 4.1665795894e-2
	p = float32(p*r) + 1.6666665459e-1
	p = float32(p*r) + 5.0000001201e-1
	y := float32(float32(p*float32(r*r))+r) + 1
	if n > 127 { // 2^128 is not a float32: scale in two steps
		y, n = y*2, n-1
	}
	return y * math.Float32frombits(uint32(int32(n)+127)<<23)
}
