package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// idxBytes writes an idx file: the magic, the dimensions, then body.
func idxBytes(code byte, dims []uint32, body []byte) []byte {
	b := []byte{0, 0, code, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, body...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestReadIDXTypes(t *testing.T) {
	a := must(ReadIDX(bytes.NewReader(idxBytes(0x08, []uint32{2, 3}, []byte{1, 2, 3, 4, 5, 255}))))
	if !nd.Equal(a, nd.FromSlice([]uint8{1, 2, 3, 4, 5, 255}, 2, 3)) {
		t.Errorf("ubyte: %v", a)
	}
	var body []byte
	body = binary.BigEndian.AppendUint32(body, uint32(0xFFFFFFFE)) // -2
	body = binary.BigEndian.AppendUint32(body, 7)
	a = must(ReadIDX(bytes.NewReader(idxBytes(0x0C, []uint32{2}, body))))
	if !nd.Equal(a, nd.FromSlice([]int32{-2, 7})) {
		t.Errorf("int32: %v", a)
	}
	body = binary.BigEndian.AppendUint32(nil, math.Float32bits(1.5))
	a = must(ReadIDX(bytes.NewReader(idxBytes(0x0D, []uint32{1}, body))))
	if !nd.Equal(a, nd.FromSlice([]float32{1.5})) {
		t.Errorf("float32: %v", a)
	}
	body = binary.BigEndian.AppendUint64(nil, math.Float64bits(-0.25))
	a = must(ReadIDX(bytes.NewReader(idxBytes(0x0E, []uint32{1, 1}, body))))
	if !nd.Equal(a, nd.FromSlice([]float64{-0.25}, 1, 1)) {
		t.Errorf("float64: %v", a)
	}
	// Zero examples is a valid, empty array.
	a = must(ReadIDX(bytes.NewReader(idxBytes(0x08, []uint32{0, 28, 28}, nil))))
	if a.Size() != 0 || a.Shape[1] != 28 {
		t.Errorf("empty: shape %v", a.Shape)
	}
	// Gzip is recognised by content.
	a = must(ReadIDXGzipOrPlain(bytes.NewReader(gz(idxBytes(0x08, []uint32{2}, []byte{9, 8})))))
	if !nd.Equal(a, nd.FromSlice([]uint8{9, 8})) {
		t.Errorf("gzipped: %v", a)
	}
}

// Corrupt and truncated inputs give errors, not panics or huge
// allocations.
func TestReadIDXCorrupt(t *testing.T) {
	good := idxBytes(0x08, []uint32{2, 2}, []byte{1, 2, 3, 4})
	cases := map[string]struct {
		in   []byte
		want string
	}{
		"empty":           {nil, "truncated"},
		"short magic":     {[]byte{0, 0}, "truncated"},
		"bad magic":       {append([]byte{1}, good[1:]...), "bad magic"},
		"gzip given raw":  {gz(good), "gzip"},
		"bad type":        {idxBytes(0x0A, []uint32{1}, []byte{1}), "unsupported element type"},
		"signed bytes":    {idxBytes(0x09, []uint32{1}, []byte{1}), "unsupported element type"},
		"no dims":         {idxBytes(0x08, nil, nil), "0 dimensions"},
		"short dims":      {good[:9], "truncated"},
		"short body":      {good[:len(good)-1], "truncated: uint8[2 2] needs 4 bytes of data, the input has 3"},
		"trailing":        {append(good, 0), "trailing data"},
		"huge header":     {idxBytes(0x08, []uint32{1 << 20, 1 << 20}, []byte{1}), "more than"},
		"huge but short":  {idxBytes(0x0E, []uint32{1 << 16, 1 << 14}, []byte{1, 2}), "truncated"},
		"short int32s":    {idxBytes(0x0C, []uint32{2}, []byte{0, 0, 0, 1, 0, 0}), "truncated"},
		"dims overflow32": {idxBytes(0x08, []uint32{0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, nil), "more than"},
	}
	for name, c := range cases {
		a, err := ReadIDX(bytes.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, %v; want an error containing %q", name, a, err, c.want)
		}
	}
	// Every truncation of a gzipped file is an error too.
	z := gz(good)
	for n := 0; n < len(z); n++ {
		if _, err := ReadIDXGzipOrPlain(bytes.NewReader(z[:n])); err == nil {
			t.Errorf("gzip truncated to %d of %d bytes: no error", n, len(z))
		}
	}
	// A flipped bit in the compressed data fails the checksum (or the
	// inflate) rather than giving wrong data.
	bad := bytes.Clone(z)
	bad[len(bad)-10] ^= 0x40
	if a, err := ReadIDXGzipOrPlain(bytes.NewReader(bad)); err == nil {
		t.Errorf("corrupt gzip read as %v", a)
	}
}

// MNIST's files (MNIST-shaped ones made from the embedded subset; the
// real ones in TestAcceptReadIDXMNISTFiles): known sizes and values.
func TestReadIDXMNISTFiles(t *testing.T) {
	checkMNISTFiles(t, mnistDir(t), false)
}

// checkMNISTFiles reads the four MNIST files in dir and checks their
// shapes, dtypes and first values, and with wholeSums the sums of the
// real files' bytes.
func checkMNISTFiles(t *testing.T, dir string, wholeSums bool) {
	train := must(ReadIDXFile(filepath.Join(dir, "train-images-idx3-ubyte.gz")))
	trainLabels := must(ReadIDXFile(filepath.Join(dir, "train-labels-idx1-ubyte.gz")))
	test := must(ReadIDXFile(filepath.Join(dir, "t10k-images-idx3-ubyte.gz")))
	testLabels := must(ReadIDXFile(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz")))
	if !nd.SameShape(train.Shape, []int{60000, 28, 28}) || !nd.SameShape(trainLabels.Shape, []int{60000}) {
		t.Errorf("train shapes %v %v", train.Shape, trainLabels.Shape)
	}
	if !nd.SameShape(test.Shape, []int{10000, 28, 28}) || !nd.SameShape(testLabels.Shape, []int{10000}) {
		t.Errorf("test shapes %v %v", test.Shape, testLabels.Shape)
	}
	if train.DType() != nd.Uint8 || trainLabels.DType() != nd.Uint8 {
		t.Errorf("dtypes %s %s", train.DType(), trainLabels.DType())
	}
	if l := trainLabels.Flat(0); l != 5 {
		t.Errorf("first training label %v, want 5", l)
	}
	if l := testLabels.Flat(0); l != 7 {
		t.Errorf("first test label %v, want 7", l)
	}
	if s := sumU8(train.Slice(0, 1)); s != 27525 {
		t.Errorf("first training image's pixel sum %v, want 27525", s)
	}
	if !wholeSums {
		return
	}
	// Sums over the whole files, computed with numpy (uint8 summed as
	// integers) on the same files.
	for _, c := range []struct {
		a    *nd.Array
		want float64
	}{{train, 1567298545}, {trainLabels, 267236}, {test, 264923200}, {testLabels, 44434}} {
		if s := sumU8(c.a); s != c.want {
			t.Errorf("sum %v, want %v", s, c.want)
		}
	}
}

// FuzzIDXHeader feeds idx headers (type code, rank, dimensions) with a
// body and an input size: readIDXGzipOrPlain must refuse a header that
// declares more data than the input can hold, gzipped or plain, before
// reading it, and otherwise return an array of exactly the declared
// shape.
func FuzzIDXHeader(f *testing.F) {
	f.Add(byte(0x0e), byte(1), uint32(1<<28), uint32(0), uint32(0), uint16(64), true)
	f.Add(byte(0x08), byte(3), uint32(2), uint32(2), uint32(2), uint16(8), false)
	f.Add(byte(0x0d), byte(2), uint32(1<<31-1), uint32(1<<31-1), uint32(0), uint16(0), true)
	f.Fuzz(func(t *testing.T, code, rank byte, d0, d1, d2 uint32, body uint16, gz bool) {
		hdr := []byte{0, 0, code, rank}
		for _, d := range []uint32{d0, d1, d2}[:min(int(rank), 3)] {
			hdr = binary.BigEndian.AppendUint32(hdr, d)
		}
		data := append(hdr, make([]byte, body)...)
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
			data = buf.Bytes()
		}
		a, err := readIDXGzipOrPlain(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if err := a.Consistent(); err != nil {
			t.Fatal(err)
		}
		if b, _ := nd.Bytes(a.DType(), a.Shape); b > uint64(len(data))*maxInflation {
			t.Fatalf("%d bytes of data from a %d-byte input", b, len(data))
		}
	})
}
