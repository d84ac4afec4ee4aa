package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/blocks-go/blocks/nd"
)

// maxIDXElements bounds the element count an idx header may declare
// (2^31-1, far above MNIST's 47 million), so that a corrupt header is an
// error rather than an absurd allocation.
const maxIDXElements int = math.MaxInt32

// idxTypes maps an idx element type code to its dtype. The idx format also
// has signed bytes (0x09) and 16-bit integers (0x0B), which nd has no
// dtype for; they are rejected.
var idxTypes = map[byte]nd.DType{
	0x08: nd.Uint8,
	0x0C: nd.Int32,
	0x0D: nd.Float32,
	0x0E: nd.Float64,
}

// ReadIDX reads one array in LeCun's idx format: the magic number (two
// zero bytes, an element type code, the number of dimensions), each
// dimension as a big-endian uint32, then the elements, big-endian, in C
// order. The input must end right after the last element. The input is
// the raw format: ReadIDXFile undoes gzip.
//
// The errors say what was wrong (magic, type code, dimensions, a short or
// overlong body); ReadIDX does not panic on corrupt input and never
// allocates more than the input holds plus the header's claim, which is
// bounded.
func ReadIDX(r io.Reader) (*nd.Array, error) {
	return readIDX(r, -1, "")
}

// maxInflation is how many bytes one byte of gzip may expand to at most
// (deflate's limit is about 1032:1).
const maxInflation = 1100

// readIDX is ReadIDX with a bound: the data may not exceed maxData bytes
// (-1: no bound beyond memory), what the input can hold; from names the
// input in that error.
func readIDX(r io.Reader, maxData int64, from string) (*nd.Array, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, fmt.Errorf("idx: reading the magic number: %w", truncated(err))
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("idx: bad magic number %#02x%02x%02x%02x: an idx file starts with two zero bytes (a gzip file starts with 1f8b, which is read as gzip)", magic[0], magic[1], magic[2], magic[3])
	}
	dt, ok := idxTypes[magic[2]]
	if !ok {
		return nil, fmt.Errorf("idx: unsupported element type code %#02x (supported: 0x08 ubyte, 0x0c int32, 0x0d float32, 0x0e float64)", magic[2])
	}
	ndim := int(magic[3])
	if ndim == 0 {
		return nil, errors.New("idx: the header declares 0 dimensions")
	}
	dims := make([]byte, 4*ndim)
	if _, err := io.ReadFull(r, dims); err != nil {
		return nil, fmt.Errorf("idx: reading %d dimensions: %w", ndim, truncated(err))
	}
	shape := make([]int, ndim)
	n := 1
	for i := range shape {
		d := binary.BigEndian.Uint32(dims[4*i:])
		shape[i] = int(d)
		if d != 0 && uint64(n)*uint64(d) > uint64(maxIDXElements) {
			return nil, fmt.Errorf("idx: the header's shape %v declares more than %d elements", shapePrefix(dims, ndim), maxIDXElements)
		}
		n *= int(d)
	}
	size := n * dt.Size()
	if maxData >= 0 && int64(size) > maxData {
		return nil, fmt.Errorf("idx: the header declares %s%v, %s of data, more than %s can hold (%s at most)",
			dt, shape, nd.FormatBytes(uint64(size)), from, nd.FormatBytes(uint64(maxData)))
	}
	// The data is read once into a buffer and once into the array.
	if avail := nd.AvailableMemory(); uint64(2*size) > avail {
		return nil, fmt.Errorf("idx: the header declares %s%v, %s of data; reading it needs twice that, more than the memory available (%s)",
			dt, shape, nd.FormatBytes(uint64(size)), nd.FormatBytes(avail))
	}
	// Read what is there, up to one byte more than declared, growing the
	// buffer as data arrives rather than trusting the header's size.
	var body bytes.Buffer
	got, err := body.ReadFrom(io.LimitReader(r, int64(size)+1))
	if err != nil {
		return nil, fmt.Errorf("idx: reading %s%v data: %w", dt, shape, err)
	}
	if got < int64(size) {
		return nil, fmt.Errorf("idx: truncated: %s%v needs %d bytes of data, the input has %d", dt, shape, size, got)
	}
	if got > int64(size) {
		return nil, fmt.Errorf("idx: trailing data after the %d bytes of %s%v", size, dt, shape)
	}
	b := body.Bytes()
	a := nd.New(dt, shape...)
	switch d := a.Data.(type) {
	case []uint8:
		copy(d, b)
	case []int32:
		for i := range d {
			d[i] = int32(binary.BigEndian.Uint32(b[4*i:]))
		}
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(binary.BigEndian.Uint32(b[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(binary.BigEndian.Uint64(b[8*i:]))
		}
	}
	return a, nil
}

func shapePrefix(dims []byte, ndim int) []uint32 {
	out := make([]uint32, ndim)
	for i := range out {
		out[i] = binary.BigEndian.Uint32(dims[4*i:])
	}
	return out
}

func truncated(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("truncated input")
	}
	return err
}

// ReadIDXGzipOrPlain reads an idx array from r, undoing gzip compression
// when the input starts with gzip's magic bytes.
func ReadIDXGzipOrPlain(r io.Reader) (*nd.Array, error) {
	return readIDXGzipOrPlain(r, -1)
}

// readIDXGzipOrPlain is ReadIDXGzipOrPlain for an input of inputSize
// bytes (-1: unknown): the header may not declare more data than that
// input can hold, plain or gzipped.
func readIDXGzipOrPlain(r io.Reader, inputSize int64) (*nd.Array, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("idx: gzip: %w", err)
		}
		limit, from := int64(-1), ""
		if inputSize >= 0 {
			limit, from = inputSize*maxInflation, fmt.Sprintf("a gzip file of %d bytes", inputSize)
		}
		a, err := readIDX(zr, limit, from)
		if err != nil {
			return nil, err
		}
		// Reach the gzip trailer so that its checksum is verified.
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return nil, fmt.Errorf("idx: gzip: %w", err)
		}
		return a, nil
	}
	if inputSize >= 0 {
		return readIDX(br, inputSize, fmt.Sprintf("a file of %d bytes", inputSize))
	}
	return ReadIDX(br)
}

// ReadIDXFile reads an idx file, gzipped or plain (told apart by content,
// not by name).
func ReadIDXFile(path string) (*nd.Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	a, err := readIDXGzipOrPlain(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}
