package datasets

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// FuzzReadIDX: arbitrary bytes give an array or an error, never a panic
// or an allocation the input does not back; an array read back encodes to
// the same bytes.
func FuzzReadIDX(f *testing.F) {
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3})
	f.Add([]byte{0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4})
	f.Add([]byte{0, 0, 0x0d, 1, 0, 0, 0, 1, 0x3f, 0x80, 0, 0})
	f.Add([]byte{0, 0, 0x0e, 1, 0, 0, 0, 1, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 0x0c, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe})
	f.Add([]byte{0, 0, 8, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 9, 1})
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadIDX(bytes.NewReader(data))
		if err != nil {
			return
		}
		if got := encodeIDX(t, a); !bytes.Equal(got, data) {
			t.Fatalf("read %s%v from %x, which encodes to %x", a.DType(), a.Shape, data, got)
		}
	})
}

// encodeIDX writes a as an idx file (the format's definition, written
// independently of the reader).
func encodeIDX(t *testing.T, a *nd.Array) []byte {
	var b bytes.Buffer
	code := map[nd.DType]byte{nd.Uint8: 0x08, nd.Int32: 0x0c, nd.Float32: 0x0d, nd.Float64: 0x0e}[a.DType()]
	b.Write([]byte{0, 0, code, byte(len(a.Shape))})
	for _, d := range a.Shape {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	switch d := a.Data.(type) {
	case []uint8:
		b.Write(d)
	case []int32:
		binary.Write(&b, binary.BigEndian, d)
	case []float32:
		for _, x := range d {
			binary.Write(&b, binary.BigEndian, math.Float32bits(x))
		}
	case []float64:
		for _, x := range d {
			binary.Write(&b, binary.BigEndian, math.Float64bits(x))
		}
	default:
		t.Fatalf("ReadIDX returned a %s array", a.DType())
	}
	return b.Bytes()
}
