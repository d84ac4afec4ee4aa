package converters

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/blocks-go/blocks/nd"
)

// The magic numbers of MNIST's idx files (Fuel's MNIST_IMAGE_MAGIC and
// MNIST_LABEL_MAGIC).
const (
	MNISTImageMagic = 2051
	MNISTLabelMagic = 2049
)

// ReadMNISTImages is Fuel's fuel.converters.mnist.read_mnist_images: the
// images of an idx image file (gzipped, as Fuel reads it, or plain) as a
// (N, 1, rows, cols) array. dtype "" keeps the unsigned bytes; "bool"
// thresholds at 128; "float32" and "float64" map 255 to 1.0. A magic
// number other than 2051 is Fuel's "Wrong magic number reading MNIST
// image file"; another dtype is Fuel's "Unknown dtype to convert MNIST to".
func ReadMNISTImages(path, dtype string) (*nd.Array, error) {
	switch dtype {
	case "", "bool", "float32", "float64":
	default:
		return nil, fmt.Errorf("%s: Unknown dtype to convert MNIST to: %q (want float32, float64 or bool)", path, dtype)
	}
	var a *nd.Array
	err := readMNIST(path, func(r io.Reader) error {
		var h [4]int32
		if err := binary.Read(r, binary.BigEndian, &h); err != nil {
			return fmt.Errorf("reading the header: %w", err)
		}
		if h[0] != MNISTImageMagic {
			return fmt.Errorf("Wrong magic number reading MNIST image file: %d, want %d", h[0], MNISTImageMagic)
		}
		n, rows, cols := int(h[1]), int(h[2]), int(h[3])
		if n < 0 || rows < 0 || cols < 0 || (rows > 0 && cols > 0 && n > math.MaxInt32/rows/cols) {
			return fmt.Errorf("the header's shape (%d, %d, %d) is not that of an image file", n, rows, cols)
		}
		px, err := readBody(r, n*rows*cols)
		if err != nil {
			return err
		}
		a = &nd.Array{Shape: []int{n, 1, rows, cols}, Data: px}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mnistDType(a, dtype)
}

// ReadMNISTLabels is Fuel's fuel.converters.mnist.read_mnist_labels: the
// labels of an idx label file (gzipped or plain) as a (N, 1) uint8 array;
// a magic number other than 2049 is Fuel's "Wrong magic number reading
// MNIST label file".
func ReadMNISTLabels(path string) (*nd.Array, error) {
	var a *nd.Array
	err := readMNIST(path, func(r io.Reader) error {
		var h [2]int32
		if err := binary.Read(r, binary.BigEndian, &h); err != nil {
			return fmt.Errorf("reading the header: %w", err)
		}
		if h[0] != MNISTLabelMagic {
			return fmt.Errorf("Wrong magic number reading MNIST label file: %d, want %d", h[0], MNISTLabelMagic)
		}
		if h[1] < 0 {
			return fmt.Errorf("the header's count %d is negative", h[1])
		}
		labels, err := readBody(r, int(h[1]))
		if err != nil {
			return err
		}
		a = &nd.Array{Shape: []int{len(labels), 1}, Data: labels}
		return nil
	})
	return a, err
}

// readMNIST opens path, undoes gzip when the file is gzipped, and hands
// the bytes to read; errors name the file.
func readMNIST(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	if err := read(r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readBody reads the n bytes the header announces and checks that nothing
// follows.
func readBody(r io.Reader, n int) ([]uint8, error) {
	// Read in pieces so that a lying header costs no more than the input.
	var out []uint8
	buf := make([]byte, 1<<16)
	for len(out) < n {
		k := min(len(buf), n-len(out))
		m, err := io.ReadFull(r, buf[:k])
		out = append(out, buf[:m]...)
		if err != nil {
			return nil, fmt.Errorf("the header announces %d bytes of data, the file has %d", n, len(out))
		}
	}
	if m, _ := r.Read(buf[:1]); m > 0 {
		return nil, fmt.Errorf("more data than the header's %d bytes", n)
	}
	return out, nil
}
