//go:build !amd64

package vec

const useAVX2 = false

func scaleShiftUint8ToFloat32(dst []float32, src []uint8, scale, shift float64) int { return 0 }

func biasRelu32AVX2(out, x, b *float32, n int)                {}
func reluGrad32AVX2(out, y, grad *float32, n int)             {}
func scaledSub32AVX2(out, a, grad *float32, n int, s float32) {}
func add32AVX2(acc, x *float32, n int)                        {}
