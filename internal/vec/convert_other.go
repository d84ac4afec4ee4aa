//go:build !amd64

package vec

func scaleShiftUint8ToFloat32(dst []float32, src []uint8, scale, shift float64) int { return 0 }
