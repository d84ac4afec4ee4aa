package kernels

import "github.com/blocks-go/blocks/nd"

// Cast converts in into out (same shape, another dtype) as numpy's astype
// does.
func Cast(out, in *nd.Array) {
	switch s := in.Data.(type) {
	case []uint8:
		switch d := out.Data.(type) {
		case []float32:
			for i, v := range s {
				d[i] = float32(v)
			}
			return
		case []int64:
			for i, v := range s {
				d[i] = int64(v)
			}
			return
		}
	case []float32:
		if d, ok := out.Data.([]float64); ok {
			for i, v := range s {
				d[i] = float64(v)
			}
			return
		}
	case []float64:
		if d, ok := out.Data.([]float32); ok {
			for i, v := range s {
				d[i] = float32(v)
			}
			return
		}
	}
	for i, n := 0, in.Size(); i < n; i++ {
		out.SetFlat(i, in.Flat(i))
	}
}

// CopyInto copies src into dst (same shape), converting the dtype when
// they differ.
func CopyInto(dst, src *nd.Array) {
	if dst.DType() == src.DType() {
		_ = dst.CopyFrom(src)
		return
	}
	Cast(dst, src)
}
