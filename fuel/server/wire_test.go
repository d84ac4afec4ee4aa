package server

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

func TestEncodeHeadersMatchesPyzmq(t *testing.T) {
	// What pyzmq's send_json sends for Fuel's headers of these arrays
	// (jsonapi.dumps([header_data_from_array_1_0(a) for a in arrays])),
	// checked against the real thing in TestPythonClientReadsGoServer.
	arrays := []*nd.Array{nd.New(nd.Float32, 2, 3), nd.New(nd.Uint8, 5), nd.New(nd.Int64), nd.New(nd.Bool, 1, 0)}
	got, err := EncodeHeaders(arrays)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"shape": [2, 3], "fortran_order": false, "descr": "<f4"}, {"shape": [5], "fortran_order": false, "descr": "|u1"}, {"shape": [], "fortran_order": false, "descr": "<i8"}, {"shape": [1, 0], "fortran_order": false, "descr": "|b1"}]`
	if string(got) != want {
		t.Errorf("headers\n%s\nwant\n%s", got, want)
	}
	if string(stopFrame) != `{"stop": true}` {
		t.Errorf("stop frame %s", stopFrame)
	}
}

func TestRoundTripFrames(t *testing.T) {
	a := nd.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := nd.FromSlice([]bool{true, false}, 2)
	c := nd.FromSlice([]int32{-7}, 1)
	d := nd.FromSlice([]int16{-3, 300}, 2)
	e := nd.FromSlice([]uint16{65535}, 1)
	frames, err := EncodeArrays([]*nd.Array{a, b, c, d, e})
	if err != nil {
		t.Fatal(err)
	}
	// The receiver owns its frames: copy, as ZeroMQ would.
	cp := make([][]byte, len(frames))
	for i, f := range frames {
		cp[i] = append([]byte(nil), f...)
	}
	got, err := DecodeArrays(cp)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []*nd.Array{a, b, c, d, e} {
		if !reflect.DeepEqual(got[i].Shape, want.Shape) || !reflect.DeepEqual(got[i].Data, want.Data) {
			t.Errorf("array %d: got %v %v, want %v %v", i, got[i].Shape, got[i].Data, want.Shape, want.Data)
		}
	}
	if _, err := DecodeArrays([][]byte{[]byte(`{"stop": true}`)}); !errors.Is(err, ErrStop) {
		t.Errorf("stop frame: %v", err)
	}
}

func TestDecodeFortranAndByteOrder(t *testing.T) {
	// numpy.asfortranarray(numpy.arange(6, dtype='>i4').reshape(2, 3)):
	// memory order 0 3 1 4 2 5, big-endian.
	var data []byte
	for _, v := range []byte{0, 3, 1, 4, 2, 5} {
		data = append(data, 0, 0, 0, v)
	}
	got, err := DecodeArrays([][]byte{[]byte(`[{"descr": ">i4", "fortran_order": true, "shape": [2, 3]}]`), data})
	if err != nil {
		t.Fatal(err)
	}
	if a := got[0]; !reflect.DeepEqual(a.Shape, []int{2, 3}) || !reflect.DeepEqual(a.Data, []int32{0, 1, 2, 3, 4, 5}) {
		t.Errorf("got %v %v, want [2 3] [0 1 2 3 4 5]", a.Shape, a.Data)
	}
}

func TestDecodeMalformed(t *testing.T) {
	f4 := make([]byte, 24)
	for _, c := range []struct {
		frames [][]byte
		want   string
	}{
		{nil, "no frames"},
		{[][]byte{[]byte("not json")}, "malformed header frame"},
		{[][]byte{[]byte(`{"start": true}`)}, `without "stop"`},
		{[][]byte{[]byte(`{"stop": true}`), f4}, "stop frame followed by 1 more"},
		{[][]byte{[]byte(`[{"descr": "<f4", "fortran_order": false, "shape": [2, 3]}]`)}, "1 headers but 0 data frames"},
		{[][]byte{[]byte(`[{"descr": "<f4", "fortran_order": false, "shape": [2, 4]}]`), f4}, "the data frame: 24 bytes for a float32 array of shape (2, 4) (want 32)"},
		{[][]byte{[]byte(`[{"descr": "<c16", "fortran_order": false, "shape": [1]}]`), f4}, `descr "<c16"`},
		{[][]byte{[]byte(`[{"descr": "<c8", "fortran_order": false, "shape": [3]}]`), f4}, `float32, float64, int64, int32, int16, uint16, uint8, int8 and bool`},
		{[][]byte{[]byte(`[{"descr": "<f4", "fortran_order": false}]`), f4}, "no shape"},
		{[][]byte{[]byte(`[{"descr": [["a", "<f4"]], "fortran_order": false, "shape": [6]}]`), f4}, "malformed header frame"},
	} {
		_, err := DecodeArrays(c.frames)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("frames %q: error %v, want one containing %q", c.frames, err, c.want)
		}
	}
}
