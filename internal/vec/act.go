package vec

import "math"

// Sigmoid32 is 1/(1+e^-x) in float32 arithmetic with Exp32 (within 3 ulp;
// e^x/(1+e^x) for negative x, so that small results keep their precision;
// 0 where the value is subnormal, below about -87.3, as Exp32). The same
// bits on every architecture.
func Sigmoid32(x float32) float32 {
	if x >= 0 {
		return 1 / (1 + Exp32(-x))
	}
	e := Exp32(x)
	return e / (1 + e)
}

// Tanh32 is tanh(x) in float32 arithmetic (Cephes' tanhf: an odd
// polynomial below |x| = 0.625, 1 − 2/(e^2|x|+1) above, ±1 beyond 44),
// every product rounded before the next addition; within 3 ulp, the same
// bits on every architecture. NaN gives NaN.
func Tanh32(x float32) float32 {
	a := x
	if a < 0 {
		a = -a
	}
	switch {
	case x != x:
		return x
	case a > 44:
		return float32(math.Copysign(1, float64(x)))
	case a >= 0.625:
		z := Exp32(a + a)
		z = 1 - 2/(z+1)
		if x < 0 {
			z = -z
		}
		return z
	}
	z := x * x
	p := float32(-5.70498872745e-3*z) + 2.06390887954e-2
	p = float32(p*z) - 5.37397155531e-2
	p = float32(p*z) + 1.33314422036e-1
	p = float32(p*z) - 3.33332819422e-1
	return float32(float32(p*z)*x) + x
}

// SigmoidSlice32 sets dst[i] = Sigmoid32(src[i]) (dst may be src).
func SigmoidSlice32(dst, src []float32) {
	src = src[:len(dst)]
	done := 0
	if useAVX2 && len(dst) >= 8 {
		done = len(dst) &^ 7
		sigmoid32AVX2(&dst[0], &src[0], done)
	}
	for i := done; i < len(dst); i++ {
		dst[i] = Sigmoid32(src[i])
	}
}

// ExpSlice32 sets dst[i] = Exp32(src[i]) (dst may be src).
func ExpSlice32(dst, src []float32) {
	src = src[:len(dst)]
	done := 0
	if useAVX2 && len(dst) >= 8 {
		done = len(dst) &^ 7
		exp32AVX2(&dst[0], &src[0], done)
	}
	for i := done; i < len(dst); i++ {
		dst[i] = Exp32(src[i])
	}
}

// TanhSlice32 sets dst[i] = Tanh32(src[i]) (dst may be src).
func TanhSlice32(dst, src []float32) {
	src = src[:len(dst)]
	done := 0
	if useAVX2 && len(dst) >= 8 {
		done = len(dst) &^ 7
		tanh32AVX2(&dst[0], &src[0], done)
	}
	for i := done; i < len(dst); i++ {
		dst[i] = Tanh32(src[i])
	}
}
