package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/blocks-go/blocks/nd"
)

// Named is an array with its key in an .npz file.
type Named struct {
	Name  string
	Array *nd.Array
}

// npyDescr is numpy's dtype descriptor of each dtype (little-endian).
var npyDescr = map[nd.DType]string{
	nd.Float32: "<f4", nd.Float64: "<f8", nd.Int64: "<i8", nd.Int32: "<i4", nd.Uint8: "|u1", nd.Bool: "|b1",
}

// arrayBytes is a's data as little-endian bytes (C order).
func arrayBytes(a *nd.Array) []byte {
	n := a.Size()
	b := make([]byte, n*a.DType().Size())
	switch d := a.Data.(type) {
	case []float32:
		for i, x := range d {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
	case []float64:
		for i, x := range d {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
	case []int64:
		for i, x := range d {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
		}
	case []int32:
		for i, x := range d {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
		}
	case []uint8:
		copy(b, d)
	case []bool:
		for i, x := range d {
			if x {
				b[i] = 1
			}
		}
	}
	return b
}

// arrayFromBytes rebuilds an array from arrayBytes' output.
func arrayFromBytes(dt nd.DType, shape []int, b []byte) (*nd.Array, error) {
	n, ok := nd.ProdChecked(shape)
	if !ok || n > len(b) {
		return nil, fmt.Errorf("%d bytes for a %s array of shape %v (the shape is too large)", len(b), dt, shape)
	}
	if len(b) != n*dt.Size() {
		return nil, fmt.Errorf("%d bytes for a %s array of shape %v (want %d)", len(b), dt, shape, n*dt.Size())
	}
	a := nd.New(dt, shape...)
	switch d := a.Data.(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case []int64:
		for i := range d {
			d[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case []int32:
		for i := range d {
			d[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case []uint8:
		copy(d, b)
	case []bool:
		for i := range d {
			d[i] = b[i] != 0
		}
	}
	return a, nil
}

// npyHeader is the .npy (format 1.0) header of a C-order array.
func npyHeader(a *nd.Array) []byte {
	shape := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		shape[i] = strconv.Itoa(d)
	}
	s := strings.Join(shape, ", ")
	if len(a.Shape) == 1 {
		s += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", npyDescr[a.DType()], s)
	// magic(6) + version(2) + length(2) + dict + padding + '\n' is a
	// multiple of 64, as numpy writes it.
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	hdr := make([]byte, 0, total+pad)
	hdr = append(hdr, "\x93NUMPY\x01\x00"...)
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(len(dict)+pad+1))
	hdr = append(hdr, dict...)
	hdr = append(hdr, bytes.Repeat([]byte{' '}, pad)...)
	return append(hdr, '\n')
}

// npzTime is the modification time of every member: fixed, so that the
// same arrays always give the same bytes.
var npzTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// EncodeNPZ writes arrays as numpy.savez does: a zip archive (stored, not
// compressed) with one NAME.npy member per array, in the given order.
// numpy.load(f)[NAME] reads each back.
func EncodeNPZ(arrays []Named) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	seen := map[string]bool{}
	for _, na := range arrays {
		if seen[na.Name] {
			return nil, fmt.Errorf("npz: the name %q is used twice", na.Name)
		}
		seen[na.Name] = true
		if _, ok := npyDescr[na.Array.DType()]; !ok {
			return nil, fmt.Errorf("npz: %s: unsupported dtype %s", na.Name, na.Array.DType())
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: na.Name + ".npy", Method: zip.Store, Modified: npzTime})
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", na.Name, err)
		}
		if _, err := w.Write(npyHeader(na.Array)); err != nil {
			return nil, err
		}
		if _, err := w.Write(arrayBytes(na.Array)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	return buf.Bytes(), nil
}

var (
	reDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	reOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	reShape = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// DecodeNPZ reads an .npz archive (stored or deflated members, C or
// Fortran order is refused) into arrays, in the archive's order.
func DecodeNPZ(data []byte) ([]Named, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	var out []Named
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("npz: member %q is not an .npy file", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", name, err)
		}
		b, err := readNPY(rc, f.UncompressedSize64)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", name, err)
		}
		a, err := decodeNPY(b)
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", name, err)
		}
		out = append(out, Named{name, a})
	}
	return out, nil
}

// maxNPYHeader bounds an .npy header (numpy writes under 4 KiB).
const maxNPYHeader = 1 << 20

// readNPY reads one .npy member, decompressing no more than its header
// says the array holds: a deflate bomb (a few kilobytes inflating to
// gigabytes) is refused after reading one byte past the declared size,
// and so is a header declaring more than the member's stated size or than
// the machine could hold.
func readNPY(r io.Reader, declared uint64) ([]byte, error) {
	pre := make([]byte, 12)
	n, err := io.ReadFull(r, pre[:10])
	if err != nil {
		return nil, fmt.Errorf("not an .npy array (%d bytes)", n)
	}
	var hlen, start int
	switch {
	case string(pre[:6]) != "\x93NUMPY":
		return nil, fmt.Errorf("not an .npy array")
	case pre[6] == 1:
		hlen, start = int(binary.LittleEndian.Uint16(pre[8:])), 10
	case pre[6] == 2 || pre[6] == 3:
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return nil, fmt.Errorf("truncated .npy header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(pre[8:])), 12
	default:
		return nil, fmt.Errorf(".npy format version %d is not supported", pre[6])
	}
	if hlen > maxNPYHeader {
		return nil, fmt.Errorf(".npy header of %d bytes (at most %d)", hlen, maxNPYHeader)
	}
	buf := make([]byte, start+hlen)
	copy(buf, pre[:start])
	if _, err := io.ReadFull(r, buf[start:]); err != nil {
		return nil, fmt.Errorf("truncated .npy header")
	}
	dt, shape, err := parseNPYHeader(string(buf[start:]))
	if err != nil {
		return nil, err
	}
	if err := nd.CheckAlloc(dt, shape, 0, ""); err != nil {
		return nil, err
	}
	size, _ := nd.Bytes(dt, shape)
	if total := uint64(start+hlen) + size; declared != 0 && total != declared {
		return nil, fmt.Errorf("the header says %d bytes of data (a %s array of shape %v), the archive says the member has %d", size, dt, shape, declared-uint64(start+hlen))
	}
	// Read as the data comes (a header may lie about a size the stream
	// does not hold), and one byte more than declared at most.
	var out bytes.Buffer
	out.Write(buf)
	k, err := out.ReadFrom(io.LimitReader(r, int64(size)+1))
	if err != nil {
		return nil, err
	}
	if uint64(k) != size {
		return nil, fmt.Errorf("%d bytes of data for a %s array of shape %v (want %d)", k, dt, shape, size)
	}
	return out.Bytes(), nil
}

func decodeNPY(b []byte) (*nd.Array, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("not an .npy array")
	}
	var hlen, start int
	switch b[6] {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, fmt.Errorf("truncated .npy header")
		}
		hlen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	default:
		return nil, fmt.Errorf(".npy format version %d is not supported", b[6])
	}
	if start+hlen > len(b) {
		return nil, fmt.Errorf("truncated .npy header")
	}
	dt, shape, err := parseNPYHeader(string(b[start : start+hlen]))
	if err != nil {
		return nil, err
	}
	return arrayFromBytes(dt, shape, b[start+hlen:])
}

// parseNPYHeader reads the dtype and shape of an .npy header (a Python
// dict literal).
func parseNPYHeader(hdr string) (nd.DType, []int, error) {
	m := reDescr.FindStringSubmatch(hdr)
	if m == nil {
		return 0, nil, fmt.Errorf("no descr in the .npy header %q", hdr)
	}
	var dt nd.DType = -1
	for d, s := range npyDescr {
		if s == m[1] || (s[0] == '|' && m[1] == "<"+s[1:]) {
			dt = d
		}
	}
	if dt < 0 {
		return 0, nil, fmt.Errorf("unsupported dtype %q", m[1])
	}
	if o := reOrder.FindStringSubmatch(hdr); o == nil || o[1] != "False" {
		return 0, nil, fmt.Errorf("only C-order arrays are supported")
	}
	sm := reShape.FindStringSubmatch(hdr)
	if sm == nil {
		return 0, nil, fmt.Errorf("no shape in the .npy header %q", hdr)
	}
	var shape []int
	for _, f := range strings.Split(sm[1], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		d, err := strconv.Atoi(strings.TrimSuffix(f, "L"))
		if err != nil || d < 0 {
			return 0, nil, fmt.Errorf("bad shape %q", sm[1])
		}
		shape = append(shape, d)
	}
	return dt, shape, nil
}
