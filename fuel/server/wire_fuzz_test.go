package server

import (
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// FuzzDecodeArrays feeds messages of Fuel's protocol (a header frame and
// up to two data frames) to the frame decoder: errors, never a panic,
// and arrays whose data matches their shape.
func FuzzDecodeArrays(f *testing.F) {
	for _, arrays := range [][]*nd.Array{
		{nd.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3), nd.FromSlice([]int64{7, 8}, 2, 1)},
		{nd.FromSlice([]uint8{1, 2, 3}, 3)},
		{nd.FromSlice([]float64{1.5}, 1, 1)},
	} {
		frames, err := EncodeArrays(arrays)
		if err != nil {
			f.Fatal(err)
		}
		var second []byte
		if len(frames) > 2 {
			second = frames[2]
		}
		f.Add(frames[0], frames[1], second, uint8(len(frames)-1))
	}
	f.Add([]byte(`{"stop": true}`), []byte{}, []byte{}, uint8(0))
	f.Add([]byte(`[{"descr": ">f4", "fortran_order": true, "shape": [2, 2]}]`), make([]byte, 16), []byte{}, uint8(1))
	f.Add([]byte(`[{"descr": "<f4", "fortran_order": false, "shape": [4294967296, 4294967296]}]`), []byte{}, []byte{}, uint8(1))
	f.Add([]byte(`[{"descr": "|b1", "fortran_order": false, "shape": [3]}]`), []byte{0, 1, 2}, []byte{}, uint8(1))
	f.Fuzz(func(t *testing.T, header, data1, data2 []byte, n uint8) {
		frames := [][]byte{header, data1, data2}[:1+int(n)%3] // n data frames
		arrays, err := DecodeArrays(frames)
		if err != nil {
			return
		}
		for i, a := range arrays {
			n, ok := nd.ProdChecked(a.Shape)
			if !ok || a.Size() != n || dataLen(a) != n {
				t.Fatalf("array %d of shape %v holds %d elements", i, a.Shape, dataLen(a))
			}
		}
	})
}

func dataLen(a *nd.Array) int {
	switch d := a.Data.(type) {
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []int64:
		return len(d)
	case []int32:
		return len(d)
	case []uint8:
		return len(d)
	case []bool:
		return len(d)
	case []int16:
		return len(d)
	case []uint16:
		return len(d)
	}
	return -1
}
