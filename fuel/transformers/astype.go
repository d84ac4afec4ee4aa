package transformers

import (
	"slices"

	"github.com/blocks-go/blocks/nd"
)

// astype is nd.Array.Astype with direct loops for the conversions a data
// pipeline makes on every batch (to float32 from float64, uint8, int64;
// to float64 from float32 and uint8); Go's conversions round to nearest
// as numpy's astype does. Other pairs fall back to Astype.
func astype(a *nd.Array, dt nd.DType) *nd.Array {
	shape := slices.Clone(a.Shape)
	switch dt {
	case nd.Float32:
		switch x := a.Data.(type) {
		case []float64:
			return &nd.Array{Shape: shape, Data: conv[float64, float32](x)}
		case []uint8:
			return &nd.Array{Shape: shape, Data: conv[uint8, float32](x)}
		case []int64:
			return &nd.Array{Shape: shape, Data: conv[int64, float32](x)}
		}
	case nd.Float64:
		switch x := a.Data.(type) {
		case []float32:
			return &nd.Array{Shape: shape, Data: conv[float32, float64](x)}
		case []uint8:
			return &nd.Array{Shape: shape, Data: conv[uint8, float64](x)}
		}
	}
	return a.Astype(dt)
}

func conv[S, D uint8 | int64 | float32 | float64](x []S) []D {
	out := make([]D, len(x))
	for i, v := range x {
		out[i] = D(v)
	}
	return out
}
