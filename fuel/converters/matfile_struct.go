package converters

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads every kind of variable of a MATLAB level 5 MAT-file
// that Fuel's ILSVRC development kits use (meta.mat: a struct array
// whose fields hold numbers, char arrays and numeric vectors), as
// scipy.io.loadmat reads it: numeric and logical arrays, char arrays,
// cell arrays and struct arrays, compressed (MATLAB 7's default) or not.
// Sparse, object and function variables are errors when nested, skipped
// at the top level. Bad input is an error, never a panic: every length is
// checked against the bytes left, nesting is bounded, and decompression
// is capped (FuzzParseMat).

// MatValue is one MATLAB array. Dims are MATLAB's (at least two), and
// the elements are in MATLAB's column-major order.
type MatValue struct {
	// Class is MATLAB's class name: "double", "single", "int8", "uint8",
	// "int16", "uint16", "int32", "uint32", "int64", "uint64", "logical",
	// "char", "cell" or "struct".
	Class string
	Dims  []int
	// Numbers holds a numeric or logical array's real elements.
	Numbers []float64
	// Chars holds a char array's characters.
	Chars []rune
	// Cells holds a cell array's elements.
	Cells []*MatValue
	// Fields are a struct array's field names, in the file's order;
	// Elems[i][j] is element i's value of field j.
	Fields []string
	Elems  [][]*MatValue
}

// Len is the number of elements (the product of Dims).
func (v *MatValue) Len() int {
	n := 1
	for _, d := range v.Dims {
		n *= d
	}
	return n
}

// Text is a char array as scipy's loadmat(squeeze_me=True) gives a char
// row vector: its characters as a string ("" for an empty array). A char
// array of more than one row is an error.
func (v *MatValue) Text() (string, error) {
	if v.Class != "char" {
		return "", fmt.Errorf("a %s array, want char", v.Class)
	}
	rows := 0
	if len(v.Dims) > 0 {
		rows = v.Dims[0]
	}
	if len(v.Chars) > 0 && (rows != 1 || len(v.Dims) != 2) {
		return "", fmt.Errorf("a char array of dims %v, want one row", v.Dims)
	}
	return string(v.Chars), nil
}

// Field returns element i's value of a struct array's field.
func (v *MatValue) Field(i int, name string) (*MatValue, error) {
	if v.Class != "struct" {
		return nil, fmt.Errorf("a %s array, want struct", v.Class)
	}
	if i < 0 || i >= len(v.Elems) {
		return nil, fmt.Errorf("element %d of a struct array of %d", i, len(v.Elems))
	}
	for j, f := range v.Fields {
		if f == name {
			return v.Elems[i][j], nil
		}
	}
	return nil, fmt.Errorf("no field %q (fields: %v)", name, v.Fields)
}

// Limits of ParseMat.
const (
	matMaxDepth        = 32
	matMaxDecompressed = 1 << 30
)

// mxClass names MATLAB's array classes by number.
var mxClass = map[byte]string{
	1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse",
	6: "double", 7: "single", 8: "int8", 9: "uint8", 10: "int16", 11: "uint16",
	12: "int32", 13: "uint32", 14: "int64", 15: "uint64",
}

// MAT data types for text.
const (
	miUTF8  = 16
	miUTF16 = 17
	miUTF32 = 18
)

// ParseMat reads the variables of a level 5 MAT-file's bytes by name.
func ParseMat(b []byte) (map[string]*MatValue, error) {
	if len(b) < 128 {
		return nil, errors.New("too short for a MAT-file")
	}
	if bytes.HasPrefix(b, []byte{0x89, 'H', 'D', 'F'}) || bytes.Contains(b[:128], []byte("MATLAB 7.3")) {
		return nil, errors.New("a MATLAB 7.3 (HDF5) file; only level 5 MAT-files are read")
	}
	var order binary.ByteOrder
	switch string(b[126:128]) {
	case "IM":
		order = binary.LittleEndian
	case "MI":
		order = binary.BigEndian
	default:
		return nil, errors.New("not a MAT-file (no endian indicator)")
	}
	out := map[string]*MatValue{}
	r := &matReader{b: b[128:], order: order}
	budget := matMaxDecompressed
	for len(r.b) > 0 {
		typ, data, err := r.element(true)
		if err != nil {
			return nil, err
		}
		if typ == miCOMPRESSED {
			raw, err := inflateChecked(data, budget)
			if err != nil {
				return nil, err
			}
			budget -= len(raw)
			inner := &matReader{b: raw, order: order}
			if typ, data, err = inner.element(true); err != nil {
				return nil, err
			}
		}
		if typ != miMATRIX {
			continue
		}
		name, v, err := parseMatrix(data, order, 0, true)
		if err != nil {
			if name != "" {
				return nil, fmt.Errorf("variable %q: %w", name, err)
			}
			return nil, err
		}
		if v != nil {
			out[name] = v
		}
	}
	return out, nil
}

// parseMatrix parses a miMATRIX element's contents. At the top level a
// class this reader does not read gives a nil value; nested, an error.
func parseMatrix(data []byte, order binary.ByteOrder, depth int, top bool) (string, *MatValue, error) {
	if depth > matMaxDepth {
		return "", nil, fmt.Errorf("arrays nested deeper than %d", matMaxDepth)
	}
	if len(data) == 0 {
		// MATLAB's empty array ([] in a cell or a struct field).
		return "", &MatValue{Class: "double", Dims: []int{0, 0}}, nil
	}
	sub := &matReader{b: data, order: order}
	_, flags, err := sub.element(false)
	if err != nil || len(flags) < 8 {
		return "", nil, errors.New("bad array flags")
	}
	word := order.Uint32(flags)
	classNum, complexFlag, logical := byte(word&0xff), word&0x0800 != 0, word&0x0200 != 0
	_, dimsB, err := sub.element(false)
	if err != nil {
		return "", nil, err
	}
	if len(dimsB) < 8 || len(dimsB)%4 != 0 {
		return "", nil, fmt.Errorf("%d bytes of dimensions", len(dimsB))
	}
	dims := make([]int, len(dimsB)/4)
	n := 1
	for i := range dims {
		d := int32(order.Uint32(dimsB[4*i:]))
		if d < 0 {
			return "", nil, fmt.Errorf("negative dimension %d", d)
		}
		dims[i] = int(d)
		if d > 0 && n > math.MaxInt32/int(d) {
			return "", nil, fmt.Errorf("dims %v: too many elements", dims)
		}
		n *= int(d)
	}
	_, nameB, err := sub.element(false)
	if err != nil {
		return "", nil, err
	}
	name := string(nameB)
	class, ok := mxClass[classNum]
	if !ok || class == "object" || class == "sparse" || complexFlag {
		if top {
			return name, nil, nil
		}
		what := class
		if complexFlag {
			what = "complex " + class
		}
		if !ok {
			what = fmt.Sprintf("class %d", classNum)
		}
		return name, nil, fmt.Errorf("a nested %s array is not read", what)
	}
	v := &MatValue{Class: class, Dims: dims}
	switch class {
	case "cell":
		// Each cell is a tagged element of at least 8 bytes.
		if n > len(sub.b)/8 {
			return name, nil, fmt.Errorf("a cell array of %d elements in %d bytes", n, len(sub.b))
		}
		v.Cells = make([]*MatValue, n)
		for i := range v.Cells {
			if v.Cells[i], err = nestedMatrix(sub, order, depth); err != nil {
				return name, nil, fmt.Errorf("cell %d: %w", i, err)
			}
		}
	case "struct":
		_, lenB, err := sub.element(false)
		if err != nil || len(lenB) < 4 {
			return name, nil, errors.New("bad field name length")
		}
		flen := int(int32(order.Uint32(lenB)))
		_, namesB, err := sub.element(false)
		if err != nil {
			return name, nil, err
		}
		if flen <= 0 || len(namesB)%flen != 0 {
			if flen == 0 && len(namesB) == 0 {
				flen = 1
			} else {
				return name, nil, fmt.Errorf("%d bytes of field names of %d bytes each", len(namesB), flen)
			}
		}
		nf := len(namesB) / flen
		for j := range nf {
			f := namesB[j*flen : (j+1)*flen]
			if k := bytes.IndexByte(f, 0); k >= 0 {
				f = f[:k]
			}
			v.Fields = append(v.Fields, string(f))
		}
		if nf == 0 && n > 1<<16 || nf > 0 && n > len(sub.b)/(8*nf) {
			return name, nil, fmt.Errorf("a struct array of %d elements of %d fields in %d bytes", n, nf, len(sub.b))
		}
		v.Elems = make([][]*MatValue, n)
		for i := range v.Elems {
			v.Elems[i] = make([]*MatValue, nf)
			for j := range nf {
				if v.Elems[i][j], err = nestedMatrix(sub, order, depth); err != nil {
					return name, nil, fmt.Errorf("element %d, field %q: %w", i, v.Fields[j], err)
				}
			}
		}
	case "char":
		typ, real, err := sub.element(false)
		if err != nil {
			return name, nil, err
		}
		if v.Chars, err = matChars(typ, real, n, order); err != nil {
			return name, nil, err
		}
	default:
		typ, real, err := sub.element(false)
		if err != nil {
			return name, nil, err
		}
		if v.Numbers, err = matValues(typ, real, n, order); err != nil {
			return name, nil, err
		}
		if logical {
			v.Class = "logical"
		}
	}
	return name, v, nil
}

// nestedMatrix reads the next element of sub, which must be a miMATRIX.
func nestedMatrix(sub *matReader, order binary.ByteOrder, depth int) (*MatValue, error) {
	typ, data, err := sub.element(false)
	if err != nil {
		return nil, err
	}
	if typ != miMATRIX {
		return nil, fmt.Errorf("data type %d where an array was expected", typ)
	}
	_, v, err := parseMatrix(data, order, depth+1, false)
	return v, err
}

// matChars decodes n characters stored as typ.
func matChars(typ uint32, b []byte, n int, order binary.ByteOrder) ([]rune, error) {
	var out []rune
	switch typ {
	case miUINT8, miINT8:
		out = make([]rune, 0, len(b))
		for _, c := range b {
			out = append(out, rune(c))
		}
	case miUTF8:
		if !utf8.Valid(b) {
			return nil, errors.New("char data that is not UTF-8")
		}
		out = []rune(string(b))
	case miUINT16, miINT16, miUTF16:
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = order.Uint16(b[2*i:])
		}
		if typ == miUTF16 {
			out = utf16.Decode(u)
		} else {
			out = make([]rune, len(u))
			for i, c := range u {
				out[i] = rune(c)
			}
		}
	case miUTF32, miUINT32, miINT32:
		out = make([]rune, len(b)/4)
		for i := range out {
			out[i] = rune(order.Uint32(b[4*i:]))
		}
	default:
		return nil, fmt.Errorf("char data of type %d is not read", typ)
	}
	if len(out) != n {
		return nil, fmt.Errorf("%d characters for a char array of %d", len(out), n)
	}
	return out, nil
}
