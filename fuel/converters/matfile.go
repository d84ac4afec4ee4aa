package converters

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/blocks-go/blocks/nd"
)

// This file reads MATLAB level 5 MAT-files (what scipy.io.loadmat reads
// for Fuel's svhn format 2 and caltech101_silhouettes converters): numeric
// matrices, compressed or not. A matrix comes back as scipy gives it: the
// MATLAB class's dtype and the dimensions in MATLAB order, its elements
// in column-major (Fortran) order, which matElem indexes.

// matArray is one numeric matrix of a MAT-file.
type matArray struct {
	dims []int
	// data holds the elements in column-major order, in the class's dtype.
	data *nd.Array
}

// at returns the flat (column-major) offset of an index.
func (m *matArray) at(idx ...int) int {
	off, stride := 0, 1
	for k, i := range idx {
		off += i * stride
		stride *= m.dims[k]
	}
	return off
}

// MAT data types and array classes (MATLAB's "MAT-File Format").
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15
)

// matClasses maps the numeric classes this reader knows to their dtypes.
var matClasses = map[byte]nd.DType{
	6:  nd.Float64, // mxDOUBLE_CLASS
	7:  nd.Float32, // mxSINGLE_CLASS
	8:  nd.Int8,    // mxINT8_CLASS
	9:  nd.Uint8,   // mxUINT8_CLASS
	10: nd.Int16,   // mxINT16_CLASS
	11: nd.Uint16,  // mxUINT16_CLASS
	12: nd.Int32,   // mxINT32_CLASS
	14: nd.Int64,   // mxINT64_CLASS
}

// loadMat reads the numeric matrices of a MAT-file by name. Other kinds
// of variables (cells, structs, strings) are skipped.
func loadMat(path string) (map[string]*matArray, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 128 {
		return nil, fmt.Errorf("%s: too short for a MAT-file", path)
	}
	if bytes.HasPrefix(b, []byte{0x89, 'H', 'D', 'F'}) || bytes.Contains(b[:128], []byte("MATLAB 7.3")) {
		return nil, fmt.Errorf("%s: a MATLAB 7.3 (HDF5) file; only level 5 MAT-files are read", path)
	}
	var order binary.ByteOrder
	switch string(b[126:128]) {
	case "IM":
		order = binary.LittleEndian
	case "MI":
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("%s: not a MAT-file (no endian indicator)", path)
	}
	out := map[string]*matArray{}
	r := &matReader{b: b[128:], order: order}
	for len(r.b) > 0 {
		typ, data, err := r.element(true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if typ == miCOMPRESSED {
			raw, err := inflateChecked(data, matMaxDecompressed)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			inner := &matReader{b: raw, order: order}
			if typ, data, err = inner.element(true); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		if typ != miMATRIX {
			continue
		}
		name, m, err := r.matrix(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if m != nil {
			out[name] = m
		}
	}
	return out, nil
}

type matReader struct {
	b     []byte
	order binary.ByteOrder
}

// element reads one data element: its type and data (padding skipped;
// compressed elements are not padded).
func (r *matReader) element(top bool) (uint32, []byte, error) {
	if len(r.b) < 8 {
		return 0, nil, errors.New("truncated data element tag")
	}
	first := r.order.Uint32(r.b)
	if first>>16 != 0 { // small data element: 2-byte size, 2-byte type, 4 bytes of data
		n, typ := int(first>>16), first&0xffff
		if n > 4 {
			return 0, nil, errors.New("bad small data element")
		}
		data := r.b[4 : 4+n]
		r.b = r.b[8:]
		return typ, data, nil
	}
	n := int(r.order.Uint32(r.b[4:]))
	if n < 0 || 8+n > len(r.b) {
		return 0, nil, fmt.Errorf("a data element of %d bytes past the end", n)
	}
	data := r.b[8 : 8+n]
	end := 8 + n
	if first != miCOMPRESSED {
		end = 8 + (n+7)/8*8
		if end > len(r.b) {
			end = len(r.b)
		}
	}
	r.b = r.b[end:]
	return first, data, nil
}

// matrix parses a miMATRIX element's contents: flags, dimensions, name,
// real part. It returns a nil array for a variable it does not read.
func (r *matReader) matrix(data []byte) (string, *matArray, error) {
	sub := &matReader{b: data, order: r.order}
	_, flags, err := sub.element(false)
	if err != nil || len(flags) < 8 {
		return "", nil, errors.New("bad array flags")
	}
	class := flags[0] // the low byte of the first flags word (little or big endian)
	if r.order == binary.BigEndian {
		class = flags[3]
	}
	complexFlag := r.order.Uint32(flags)&0x0800 != 0
	_, dimsB, err := sub.element(false)
	if err != nil {
		return "", nil, err
	}
	var dims []int
	for i := 0; i+4 <= len(dimsB); i += 4 {
		dims = append(dims, int(int32(r.order.Uint32(dimsB[i:]))))
	}
	_, nameB, err := sub.element(false)
	if err != nil {
		return "", nil, err
	}
	name := string(nameB)
	dt, ok := matClasses[class]
	if !ok || complexFlag {
		return name, nil, nil
	}
	typ, real, err := sub.element(false)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, d := range dims {
		if d < 0 {
			return "", nil, fmt.Errorf("%s: negative dimension", name)
		}
	}
	n, ok := nd.ProdChecked(dims)
	if !ok {
		return "", nil, fmt.Errorf("%s: dimensions %v hold more elements than any array can", name, dims)
	}
	if dt == nd.Uint8 && typ == miUINT8 && len(real) >= n {
		// The common case (images): no conversion.
		return name, &matArray{dims: dims, data: nd.FromSlice(append([]byte(nil), real[:n]...))}, nil
	}
	vals, err := matValues(typ, real, n, r.order)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := nd.CheckBudget(dt, []int{n}); err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	a := nd.New(dt, n)
	for i, v := range vals {
		a.SetFlat(i, v)
	}
	return name, &matArray{dims: dims, data: a}, nil
}

// matValues decodes n stored values (MATLAB may store a class in a
// smaller type, as scipy undoes).
func matValues(typ uint32, b []byte, n int, order binary.ByteOrder) ([]float64, error) {
	size := map[uint32]int{miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4, miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8}[typ]
	if size == 0 {
		return nil, fmt.Errorf("data type %d is not read", typ)
	}
	if n < 0 || n > len(b)/size {
		return nil, fmt.Errorf("%d bytes for %d elements of %d bytes", len(b), n, size)
	}
	// Decoded as float64: up to 8 times the stored bytes (a compressed
	// uint8 variable of 131 KB became 1.4 GB), checked first.
	if err := nd.CheckBudget(nd.Float64, []int{n}); err != nil {
		return nil, fmt.Errorf("decoding %d elements: %w", n, err)
	}
	out := make([]float64, n)
	for i := range out {
		p := b[i*size:]
		switch typ {
		case miINT8:
			out[i] = float64(int8(p[0]))
		case miUINT8:
			out[i] = float64(p[0])
		case miINT16:
			out[i] = float64(int16(order.Uint16(p)))
		case miUINT16:
			out[i] = float64(order.Uint16(p))
		case miINT32:
			out[i] = float64(int32(order.Uint32(p)))
		case miUINT32:
			out[i] = float64(order.Uint32(p))
		case miSINGLE:
			out[i] = float64(math.Float32frombits(order.Uint32(p)))
		case miDOUBLE:
			out[i] = math.Float64frombits(order.Uint64(p))
		case miINT64:
			out[i] = float64(int64(order.Uint64(p)))
		case miUINT64:
			out[i] = float64(order.Uint64(p))
		}
	}
	return out, nil
}

// inflateChecked decompresses a miCOMPRESSED element of at most max
// bytes. The size is found first by inflating into nothing, then checked
// against max and the memory budget (nd.CheckBytes), and only then is the
// buffer allocated: a few KB of deflate stream stand for up to about a
// thousand times as much.
func inflateChecked(data []byte, max int) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("a compressed variable: %w", err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(zr, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("decompressing a variable: %w", err)
	}
	if n > int64(max) {
		return nil, fmt.Errorf("a compressed variable of more than %s", nd.FormatBytes(uint64(max)))
	}
	if err := nd.CheckBytes(uint64(n)); err != nil {
		return nil, fmt.Errorf("a compressed variable of %s: %w", nd.FormatBytes(uint64(n)), err)
	}
	if zr, err = zlib.NewReader(bytes.NewReader(data)); err != nil {
		return nil, err
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(zr, raw); err != nil {
		return nil, fmt.Errorf("decompressing a variable: %w", err)
	}
	return raw, nil
}
