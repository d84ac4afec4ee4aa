package converters

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// ReadMNISTImages and ReadMNISTLabels read gzipped and plain idx files
// and say what is wrong with a bad one, as Fuel's read_mnist_* do.
func TestReadMNISTFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, gz bool, header []int32, body []byte) string {
		var b bytes.Buffer
		binary.Write(&b, binary.BigEndian, header)
		b.Write(body)
		data := b.Bytes()
		if gz {
			var z bytes.Buffer
			w := gzip.NewWriter(&z)
			w.Write(data)
			w.Close()
			data = z.Bytes()
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	px := []byte{0, 127, 128, 255, 1, 2}
	for _, gz := range []bool{true, false} {
		p := write("img", gz, []int32{MNISTImageMagic, 1, 2, 3}, px)
		a, err := ReadMNISTImages(p, "")
		if err != nil || !equalInts(a.Shape, []int{1, 1, 2, 3}) || !bytes.Equal(a.Data.([]uint8), px) {
			t.Errorf("gzip %v: %v %v", gz, a, err)
		}
		b, err := ReadMNISTImages(p, "bool")
		if err != nil || b.DType() != nd.Bool || b.Data.([]bool)[1] || !b.Data.([]bool)[2] {
			t.Errorf("bool: %v %v", b, err)
		}
		f, err := ReadMNISTImages(p, "float64")
		if err != nil || f.F64()[3] != 1 || f.F64()[1] != 127.0/255 {
			t.Errorf("float64: %v %v", f, err)
		}
		l, err := ReadMNISTLabels(write("lab", gz, []int32{MNISTLabelMagic, 3}, []byte{7, 8, 9}))
		if err != nil || !equalInts(l.Shape, []int{3, 1}) || l.Data.([]uint8)[2] != 9 {
			t.Errorf("labels: %v %v", l, err)
		}
	}
	for _, c := range []struct {
		path, dtype, want string
		labels            bool
	}{
		{write("short", true, []int32{MNISTImageMagic, 2, 2, 3}, px), "", "announces 12 bytes of data, the file has 6", false},
		{write("long", false, []int32{MNISTImageMagic, 1, 2, 2}, px), "", "more data than the header's 4 bytes", false},
		{write("neg", false, []int32{MNISTImageMagic, -1, 2, 2}, nil), "", "not that of an image file", false},
		{write("img2", false, []int32{MNISTImageMagic, 1, 2, 3}, px), "int32", "Unknown dtype to convert MNIST to", false},
		{write("lab2", false, []int32{MNISTImageMagic, 1}, nil), "", "Wrong magic number reading MNIST label file", true},
		{write("hdr", false, []int32{MNISTLabelMagic}, nil), "", "reading the header", true},
	} {
		var err error
		if c.labels {
			_, err = ReadMNISTLabels(c.path)
		} else {
			_, err = ReadMNISTImages(c.path, c.dtype)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) && c.dtype == "" {
			t.Errorf("%s: got %v, want an error naming the file and %q", c.path, err, c.want)
		}
	}
}
