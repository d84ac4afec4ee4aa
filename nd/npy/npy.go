// Package npy is numpy's array format: the .npy header (a Python dict
// literal with the dtype's descr, the order and the shape) and the
// elements' bytes in either byte order. It is the one place the project
// turns arrays into bytes and back: checkpoints (.npz members), the saved
// state of Fuel's iterators and the data server's frames all use it.
//
// Every numeric dtype of package nd is carried: float32 (<f4), float64
// (<f8), int64 (<i8), int32 (<i4), int16 (<i2), uint16 (<u2), uint8
// (|u1) and bool (|b1).
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/nd"
)

// kinds maps each carried dtype to numpy's kind and size ("f4").
var kinds = map[nd.DType]string{
	nd.Float32: "f4", nd.Float64: "f8", nd.Int64: "i8", nd.Int32: "i4",
	nd.Int16: "i2", nd.Uint16: "u2", nd.Uint8: "u1", nd.Int8: "i1", nd.Bool: "b1",
}

// Order is a byte order: binary.LittleEndian, binary.BigEndian or
// binary.NativeEndian.
type Order interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// IsLittleEndian says whether order puts the least significant byte
// first (binary.NativeEndian is either, by machine).
func IsLittleEndian(order Order) bool { return order.Uint16([]byte{1, 0}) == 1 }

// Supported says whether dt has a numpy descr here.
func Supported(dt nd.DType) bool {
	_, ok := kinds[dt]
	return ok
}

// Descr is numpy's descr of dt in the given byte order, as
// numpy.lib.format.dtype_to_descr writes it: "<f4", ">i8", and "|u1" or
// "|b1" for one-byte types, which have no order.
func Descr(dt nd.DType, order Order) (string, error) {
	k, ok := kinds[dt]
	if !ok {
		return "", fmt.Errorf("dtype %s has no numpy descr here (carried: float32, float64, int64, int32, int16, uint16, uint8, int8, bool)", dt)
	}
	if dt.Size() == 1 {
		return "|" + k, nil
	}
	if !IsLittleEndian(order) {
		return ">" + k, nil
	}
	return "<" + k, nil
}

// ParseDescr reads a numpy descr: its dtype and the byte order of its
// elements ('=' is this machine's order; a one-byte type's order is
// irrelevant and given as little-endian).
func ParseDescr(descr string) (nd.DType, Order, error) {
	if len(descr) != 3 {
		return 0, nil, fmt.Errorf("dtype descr %q is not one of <f4 <f8 <i8 <i4 <i2 <u2 |u1 |i1 |b1", descr)
	}
	var dt nd.DType = -1
	for d, k := range kinds {
		if k == descr[1:] {
			dt = d
		}
	}
	if dt < 0 {
		return 0, nil, fmt.Errorf("dtype descr %q: this side holds float32, float64, int64, int32, int16, uint16, uint8, int8 and bool arrays only", descr)
	}
	switch descr[0] {
	case '<', '|':
		return dt, binary.LittleEndian, nil
	case '>':
		if dt.Size() == 1 {
			return dt, binary.LittleEndian, nil
		}
		return dt, binary.BigEndian, nil
	case '=':
		return dt, binary.NativeEndian, nil
	}
	return 0, nil, fmt.Errorf("dtype descr %q: unknown byte order %q", descr, descr[0])
}

// AppendData appends a's elements, in C order, to dst in the given byte
// order.
func AppendData(dst []byte, a *nd.Array, order Order) ([]byte, error) {
	switch d := a.Data.(type) {
	case []float32:
		for _, x := range d {
			dst = order.AppendUint32(dst, math.Float32bits(x))
		}
	case []float64:
		for _, x := range d {
			dst = order.AppendUint64(dst, math.Float64bits(x))
		}
	case []int64:
		for _, x := range d {
			dst = order.AppendUint64(dst, uint64(x))
		}
	case []int32:
		for _, x := range d {
			dst = order.AppendUint32(dst, uint32(x))
		}
	case []int16:
		for _, x := range d {
			dst = order.AppendUint16(dst, uint16(x))
		}
	case []uint16:
		for _, x := range d {
			dst = order.AppendUint16(dst, x)
		}
	case []uint8:
		dst = append(dst, d...)
	case []int8:
		for _, x := range d {
			dst = append(dst, byte(x))
		}
	case []bool:
		for _, x := range d {
			if x {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		}
	default:
		return nil, fmt.Errorf("a %s array has no numpy bytes here", a.DType())
	}
	return dst, nil
}

// DecodeData builds a C-order array of dt and shape from its elements'
// bytes in the given order. It checks that the shape fits in memory and
// that b holds exactly its elements; b is not kept.
func DecodeData(dt nd.DType, shape []int, b []byte, order Order) (*nd.Array, error) {
	if !Supported(dt) {
		return nil, fmt.Errorf("dtype %s has no numpy bytes here", dt)
	}
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("negative dimension in shape %s", nd.ShapeString(shape))
		}
	}
	n, ok := nd.ProdChecked(shape)
	if !ok || n > math.MaxInt/dt.Size() {
		return nil, fmt.Errorf("%d bytes for a %s array of shape %s (the shape is too large)", len(b), dt, nd.ShapeString(shape))
	}
	if len(b) != n*dt.Size() {
		return nil, fmt.Errorf("%d bytes for a %s array of shape %s (want %d)", len(b), dt, nd.ShapeString(shape), n*dt.Size())
	}
	a := nd.New(dt, shape...)
	switch d := a.Data.(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(order.Uint32(b[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(order.Uint64(b[8*i:]))
		}
	case []int64:
		for i := range d {
			d[i] = int64(order.Uint64(b[8*i:]))
		}
	case []int32:
		for i := range d {
			d[i] = int32(order.Uint32(b[4*i:]))
		}
	case []int16:
		for i := range d {
			d[i] = int16(order.Uint16(b[2*i:]))
		}
	case []uint16:
		for i := range d {
			d[i] = order.Uint16(b[2*i:])
		}
	case []uint8:
		copy(d, b)
	case []int8:
		for i := range d {
			d[i] = int8(b[i])
		}
	case []bool:
		for i := range d {
			d[i] = b[i] != 0
		}
	}
	return a, nil
}

// Header is the .npy header (format 1.0) of a C-order array of dt and
// shape, little-endian, as numpy.save writes it: the magic string, the
// header's length and the dict padded with spaces so that the data
// starts at a multiple of 64 bytes.
func Header(dt nd.DType, shape []int) ([]byte, error) {
	descr, err := Descr(dt, binary.LittleEndian)
	if err != nil {
		return nil, err
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, nd.ShapeString(shape))
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	hdr := make([]byte, 0, total+pad)
	hdr = append(hdr, "\x93NUMPY\x01\x00"...)
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(len(dict)+pad+1))
	hdr = append(hdr, dict...)
	hdr = append(hdr, bytes.Repeat([]byte{' '}, pad)...)
	return append(hdr, '\n'), nil
}

// Encode is a as an .npy file: Header and the little-endian elements.
func Encode(a *nd.Array) ([]byte, error) {
	hdr, err := Header(a.DType(), a.Shape)
	if err != nil {
		return nil, err
	}
	return AppendData(hdr, a, binary.LittleEndian)
}

// Info is what an .npy header says.
type Info struct {
	DType        nd.DType
	Order        Order
	FortranOrder bool
	Shape        []int
}

// ErrNotNPY is returned for bytes that do not start with .npy's magic.
var ErrNotNPY = errors.New("not an .npy array")

// ReadHeader reads the header at the start of an .npy file (formats 1.0,
// 2.0 and 3.0): what it says and the header's length in bytes, where the
// data starts.
func ReadHeader(b []byte) (Info, int, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return Info{}, 0, ErrNotNPY
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return Info{}, 0, errors.New("truncated header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return Info{}, 0, fmt.Errorf("format version %d is not supported", b[6])
	}
	if hlen < 0 || start+hlen > len(b) {
		return Info{}, 0, errors.New("truncated header")
	}
	info, err := ParseHeader(string(b[start : start+hlen]))
	return info, start + hlen, err
}

var (
	reDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	reOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	reShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// ParseHeader reads the dict of an .npy header (a Python dict literal).
func ParseHeader(dict string) (Info, error) {
	m := reDescr.FindStringSubmatch(dict)
	if m == nil {
		return Info{}, fmt.Errorf("no descr in the header %q", dict)
	}
	dt, order, err := ParseDescr(m[1])
	if err != nil {
		return Info{}, err
	}
	o := reOrder.FindStringSubmatch(dict)
	if o == nil {
		return Info{}, fmt.Errorf("no fortran_order in the header %q", dict)
	}
	sm := reShape.FindStringSubmatch(dict)
	if sm == nil {
		return Info{}, fmt.Errorf("no shape in the header %q", dict)
	}
	var shape []int
	for _, f := range strings.Split(sm[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := strconv.Atoi(strings.TrimSuffix(f, "L"))
		if err != nil || d < 0 {
			return Info{}, fmt.Errorf("bad shape (%s) in the header", sm[1])
		}
		shape = append(shape, d)
	}
	return Info{DType: dt, Order: order, FortranOrder: o[1] == "True", Shape: shape}, nil
}

// MaxHeader bounds an .npy header (numpy writes under 4 KiB).
const MaxHeader = 1 << 20

// Read reads one .npy file from r, reading no more than its header says
// the array holds: a deflate bomb (a few kilobytes inflating to
// gigabytes) is refused after one byte past the declared size, and so is
// a header declaring more than the machine could hold or, when size is
// not 0, than the file's stated size.
func Read(r io.Reader, size uint64) (*nd.Array, error) {
	pre := make([]byte, 12)
	n, err := io.ReadFull(r, pre[:10])
	if err != nil {
		return nil, fmt.Errorf("not an .npy array (%d bytes)", n)
	}
	var hlen, start int
	switch {
	case string(pre[:6]) != "\x93NUMPY":
		return nil, ErrNotNPY
	case pre[6] == 1:
		hlen, start = int(binary.LittleEndian.Uint16(pre[8:])), 10
	case pre[6] == 2 || pre[6] == 3:
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return nil, errors.New("truncated .npy header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(pre[8:])), 12
	default:
		return nil, fmt.Errorf(".npy format version %d is not supported", pre[6])
	}
	if hlen > MaxHeader {
		return nil, fmt.Errorf(".npy header of %d bytes (at most %d)", hlen, MaxHeader)
	}
	dict := make([]byte, hlen)
	if _, err := io.ReadFull(r, dict); err != nil {
		return nil, errors.New("truncated .npy header")
	}
	info, err := ParseHeader(string(dict))
	if err != nil {
		return nil, err
	}
	if info.FortranOrder {
		return nil, errors.New("only C-order arrays are supported")
	}
	if err := nd.CheckAlloc(info.DType, info.Shape, 0, ""); err != nil {
		return nil, err
	}
	dataSize, _ := nd.Bytes(info.DType, info.Shape)
	if total := uint64(start+hlen) + dataSize; size != 0 && total != size {
		return nil, fmt.Errorf("the header says %d bytes of data (a %s array of shape %s), the file has %d", dataSize, info.DType, nd.ShapeString(info.Shape), size-uint64(start+hlen))
	}
	if IsLittleEndian(info.Order) && IsLittleEndian(binary.NativeEndian) && dataSize >= readDirect {
		// Straight into the array's memory, which is the data's bytes:
		// the array is the only copy. Its memory is allocated once the
		// stream has shown the first bytes of the data it declares.
		first := make([]byte, readDirect)
		if k, err := io.ReadFull(r, first); err != nil {
			return nil, fmt.Errorf("%d bytes of data for a %s array of shape %s (want %d)", k, info.DType, nd.ShapeString(info.Shape), dataSize)
		}
		a := nd.New(info.DType, info.Shape...)
		if raw := nd.RawBytes(a); raw != nil {
			copy(raw, first)
			k, err := io.ReadFull(r, raw[readDirect:])
			if err != nil {
				return nil, fmt.Errorf("%d bytes of data for a %s array of shape %s (want %d)", readDirect+k, info.DType, nd.ShapeString(info.Shape), dataSize)
			}
			// One byte more than declared is an error; reading to the end
			// lets the stream check itself (a zip entry's CRC).
			if k, err := io.ReadFull(r, first[:1]); k != 0 {
				return nil, fmt.Errorf("%d bytes of data for a %s array of shape %s (want %d)", dataSize+1, info.DType, nd.ShapeString(info.Shape), dataSize)
			} else if err != io.EOF && err != io.ErrUnexpectedEOF {
				return nil, err
			}
			return a, nil
		}
		r = io.MultiReader(bytes.NewReader(first), r)
	}
	// Read as the data comes (a header may lie about a size the stream
	// does not hold), and one byte more than declared at most.
	var data bytes.Buffer
	k, err := data.ReadFrom(io.LimitReader(r, int64(dataSize)+1))
	if err != nil {
		return nil, err
	}
	if uint64(k) != dataSize {
		return nil, fmt.Errorf("%d bytes of data for a %s array of shape %s (want %d)", k, info.DType, nd.ShapeString(info.Shape), dataSize)
	}
	return DecodeData(info.DType, info.Shape, data.Bytes(), info.Order)
}

// readDirect: an array of at least this many bytes is read straight into
// its memory.
const readDirect = 1 << 16

// Decode reads an .npy file held in b; a Fortran-order array is refused.
func Decode(b []byte) (*nd.Array, error) {
	info, start, err := ReadHeader(b)
	if err != nil {
		return nil, err
	}
	if info.FortranOrder {
		return nil, errors.New("only C-order arrays are supported")
	}
	return DecodeData(info.DType, info.Shape, b[start:], info.Order)
}
