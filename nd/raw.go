package nd

import "unsafe"

// RawBytes is the memory of a numeric array's elements, in the machine's
// byte order, shared with the array (writing to it writes the array). It
// is nil for an empty array and for bool and object arrays, whose memory
// is not their elements' bytes.
func RawBytes(a *Array) []byte {
	view := func(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }
	switch d := a.Data.(type) {
	case []float32:
		if len(d) > 0 {
			return view(unsafe.Pointer(&d[0]), 4*len(d))
		}
	case []float64:
		if len(d) > 0 {
			return view(unsafe.Pointer(&d[0]), 8*len(d))
		}
	case []int64:
		if len(d) > 0 {
			return view(unsafe.Pointer(&d[0]), 8*len(d))
		}
	case []int32:
		if len(d) > 0 {
			return view(unsafe.Pointer(&d[0]), 4*len(d))
		}
	case []int16:
		if len(d) > 0 {
			return view(unsafe.Pointer(&d[0]), 2*len(d))
		}
	case []uint16:
		if len(d) > 0 {
			return view(unsafe.Pointer(&d[0]), 2*len(d))
		}
	case []int8:
		if len(d) > 0 {
			return view(unsafe.Pointer(&d[0]), len(d))
		}
	case []uint8:
		if len(d) > 0 {
			return d
		}
	}
	return nil
}
