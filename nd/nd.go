// Package nd holds the n-dimensional arrays that flow between the data
// layer (fuel), the executor (core) and scripts: a shape and a flat,
// row-major (C-order) Go slice of one numeric type, as numpy's ndarray.
//
// An Array owns its slice unless a function's documentation says it returns
// a view. The dtype names follow numpy's (float32, int64, uint8, ...).
package nd

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
)

// DType is an array element type, named as numpy names it.
type DType int

// The element types an Array can hold.
const (
	Float32 DType = iota
	Float64
	Int64
	Int32
	Uint8
	Bool
	// Int16 and Uint16 are read from HDF5 files (h5py's int16 sources,
	// SVHN's uint16 bounding boxes).
	Int16
	Uint16
	// Object is numpy's object dtype as Fuel uses it for variable-length
	// sources: a 1-D array whose elements are arrays ([]*Array), each with
	// its own shape.
	Object
	// Str is numpy's str dtype as Fuel's tests use it for examples that
	// are strings: Data is a []string (see str.go).
	Str
	// ByteStr is numpy's fixed-length bytes dtype (S<n>) as h5py reads it
	// from a string dataset (Fuel's ILSVRC `filenames`): Data is a
	// [][]byte, each element with its trailing NULs removed, as numpy
	// gives them (see str.go).
	ByteStr
	// Int8 is what Fuel's text converters write (character indices) and
	// h5py reads as int8. It comes last so that the numbers of the dtypes
	// above, which the parallel wire format carries, are unchanged.
	Int8
)

var dtypeNames = [...]string{"float32", "float64", "int64", "int32", "uint8", "bool", "int16", "uint16", "object", "str", "bytes", "int8"}

func (d DType) String() string {
	if d < 0 || int(d) >= len(dtypeNames) {
		return fmt.Sprintf("dtype(%d)", int(d))
	}
	return dtypeNames[d]
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

// IsNumeric reports whether an array of dtype d holds numbers (or bools):
// every dtype but Object, Str and ByteStr.
func (d DType) IsNumeric() bool {
	return d >= 0 && int(d) < len(dtypeNames) && d != Object && d != Str && d != ByteStr
}

// NumericDTypes lists every dtype for which IsNumeric holds, in the order
// of their numbers: what tests that cover each dtype enumerate.
func NumericDTypes() []DType {
	var out []DType
	for d := range DType(len(dtypeNames)) {
		if d.IsNumeric() {
			out = append(out, d)
		}
	}
	return out
}

// IsInt reports whether d is an integer (or boolean) type.
func (d DType) IsInt() bool { return !d.IsFloat() }

// Size is the number of bytes of one element.
func (d DType) Size() int {
	switch d {
	case Float64, Int64:
		return 8
	case Float32, Int32:
		return 4
	case Int16, Uint16:
		return 2
	case Object:
		return 8
	case Str:
		return 16
	case ByteStr:
		return 24
	}
	return 1
}

// ParseDType reads a numpy dtype name ("float32", "int64", "uint8", ...).
// "floatX" is not resolved here: the caller knows its floatX.
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i), nil
		}
	}
	switch s {
	case "f4":
		return Float32, nil
	case "f8", "float":
		return Float64, nil
	case "i8", "int":
		return Int64, nil
	case "i4":
		return Int32, nil
	case "u1":
		return Uint8, nil
	case "i2":
		return Int16, nil
	case "u2":
		return Uint16, nil
	case "i1":
		return Int8, nil
	}
	return 0, fmt.Errorf("nd: unknown dtype %q (want one of %s)", s, strings.Join(dtypeNames[:], ", "))
}

// Array is an n-dimensional array: Shape and a row-major Data slice of
// type []float32, []float64, []int64, []int32, []uint8, []bool, []int16,
// []uint16, []int8, []*Array (dtype Object, 1-D: an array of arrays), []string
// (Str) or [][]byte (ByteStr).
type Array struct {
	Shape []int
	Data  any

	// recycler, when set, lent Data and takes it back on Release.
	recycler *Recycler
}

// Numeric is the set of Go element types an Array holds.
type Numeric interface {
	~float32 | ~float64 | ~int64 | ~int32 | ~uint8 | ~int16 | ~uint16 | ~int8
}

// New returns a zero-filled array of the given dtype and shape.
//
// It panics with a *SizeError or *BudgetError (CheckBudget) when the
// element count overflows an int, or the array exceeds the process's
// memory budget: shapes from scripts, files and the network are checked
// first, with CheckAlloc or NewChecked, and the builtins' recover turns
// what slips past into the script's error, never Go's fatal out of memory.
func New(dt DType, shape ...int) *Array {
	n, ok := ProdChecked(shape)
	if !ok {
		panic(&SizeError{Shape: append([]int(nil), shape...), DType: dt})
	}
	if err := CheckBudget(dt, shape); err != nil {
		panic(err)
	}
	var data any
	switch dt {
	case Float32:
		data = make([]float32, n)
	case Float64:
		data = make([]float64, n)
	case Int64:
		data = make([]int64, n)
	case Int32:
		data = make([]int32, n)
	case Uint8:
		data = make([]uint8, n)
	case Bool:
		data = make([]bool, n)
	case Int16:
		data = make([]int16, n)
	case Uint16:
		data = make([]uint16, n)
	case Int8:
		data = make([]int8, n)
	case Object:
		data = make([]*Array, n)
	case Str:
		data = make([]string, n)
	case ByteStr:
		data = make([][]byte, n)
	default:
		panic(fmt.Sprintf("nd.New: bad dtype %d", dt))
	}
	return &Array{Shape: append([]int(nil), shape...), Data: data}
}

// FromSlice wraps data (not copied) as an array of the given shape. With no
// shape the array is 1-D. It panics if the sizes differ (a programmer error).
func FromSlice[T Numeric | bool](data []T, shape ...int) *Array {
	if shape == nil {
		shape = []int{len(data)}
	}
	if Prod(shape) != len(data) {
		panic(fmt.Sprintf("nd.FromSlice: %d elements for shape %v", len(data), shape))
	}
	return &Array{Shape: append([]int(nil), shape...), Data: data}
}

// Scalar returns a 0-d array holding v in the given dtype.
func Scalar(dt DType, v float64) *Array {
	a := New(dt)
	a.SetFlat(0, v)
	return a
}

// Prod is the product of shape's entries (1 for a 0-d shape).
func Prod(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// DType is the element type of a.
func (a *Array) DType() DType {
	switch a.Data.(type) {
	case []float32:
		return Float32
	case []float64:
		return Float64
	case []int64:
		return Int64
	case []int32:
		return Int32
	case []uint8:
		return Uint8
	case []bool:
		return Bool
	case []int16:
		return Int16
	case []uint16:
		return Uint16
	case []int8:
		return Int8
	case []*Array:
		return Object
	case []string:
		return Str
	case [][]byte:
		return ByteStr
	}
	panic(fmt.Sprintf("nd: array holds %T", a.Data))
}

// NDim is the number of dimensions.
func (a *Array) NDim() int { return len(a.Shape) }

// Size is the number of elements.
func (a *Array) Size() int { return Prod(a.Shape) }

// F32 returns the data of a float32 array (panics for another dtype).
func (a *Array) F32() []float32 { return a.Data.([]float32) }

// F64 returns the data of a float64 array (panics for another dtype).
func (a *Array) F64() []float64 { return a.Data.([]float64) }

// I64 returns the data of an int64 array (panics for another dtype).
func (a *Array) I64() []int64 { return a.Data.([]int64) }

// Flat returns element i (row-major) converted to float64.
func (a *Array) Flat(i int) float64 {
	switch d := a.Data.(type) {
	case []float32:
		return float64(d[i])
	case []float64:
		return d[i]
	case []int64:
		return float64(d[i])
	case []int32:
		return float64(d[i])
	case []uint8:
		return float64(d[i])
	case []bool:
		if d[i] {
			return 1
		}
		return 0
	case []int16:
		return float64(d[i])
	case []uint16:
		return float64(d[i])
	case []int8:
		return float64(d[i])
	}
	panic(fmt.Sprintf("nd: Flat of an array holding %T", a.Data))
}

// SetFlat sets element i (row-major) from a float64, converting as numpy's
// astype does (truncation toward zero for integers).
func (a *Array) SetFlat(i int, v float64) {
	switch d := a.Data.(type) {
	case []float32:
		d[i] = float32(v)
	case []float64:
		d[i] = v
	case []int64:
		d[i] = int64(v)
	case []int32:
		d[i] = int32(v)
	case []uint8:
		d[i] = uint8(int64(v))
	case []bool:
		d[i] = v != 0
	case []int16:
		d[i] = int16(v)
	case []uint16:
		d[i] = uint16(int64(v))
	case []int8:
		d[i] = int8(int64(v))
	default:
		panic(fmt.Sprintf("nd: SetFlat of an array holding %T", a.Data))
	}
}

// Float64s returns a's elements as a new []float64.
func (a *Array) Float64s() []float64 {
	out := make([]float64, a.Size())
	for i := range out {
		out[i] = a.Flat(i)
	}
	return out
}

// Index returns the flat offset of the element at idx (negative indices
// count from the end). It returns an error for a wrong count or range.
func (a *Array) Index(idx ...int) (int, error) {
	if len(idx) != len(a.Shape) {
		return 0, fmt.Errorf("nd: %d indices for a %d-d array", len(idx), len(a.Shape))
	}
	off := 0
	for k, i := range idx {
		n := a.Shape[k]
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return 0, fmt.Errorf("nd: index %d out of range for axis %d of size %d", idx[k], k, n)
		}
		off = off*n + i
	}
	return off, nil
}

// Copy returns a deep copy of a.
func (a *Array) Copy() *Array {
	b := New(a.DType(), a.Shape...)
	copyData(b.Data, a.Data)
	return b
}

func copyData(dst, src any) {
	switch d := dst.(type) {
	case []float32:
		copy(d, src.([]float32))
	case []float64:
		copy(d, src.([]float64))
	case []int64:
		copy(d, src.([]int64))
	case []int32:
		copy(d, src.([]int32))
	case []uint8:
		copy(d, src.([]uint8))
	case []bool:
		copy(d, src.([]bool))
	case []int16:
		copy(d, src.([]int16))
	case []uint16:
		copy(d, src.([]uint16))
	case []int8:
		copy(d, src.([]int8))
	case []string:
		copy(d, src.([]string))
	case [][]byte:
		for i, e := range src.([][]byte) {
			d[i] = bytes.Clone(e)
		}
	case []*Array:
		for i, e := range src.([]*Array) {
			if e != nil {
				e = e.Copy()
			}
			d[i] = e
		}
	default:
		panic(fmt.Sprintf("nd: copy into an array holding %T", dst))
	}
}

// CopyFrom copies src's elements into a in place. Shapes must hold the
// same number of elements and dtypes must agree.
func (a *Array) CopyFrom(src *Array) error {
	if a.DType() != src.DType() {
		return fmt.Errorf("nd: cannot copy %s into %s", src.DType(), a.DType())
	}
	if !SameShape(a.Shape, src.Shape) {
		return fmt.Errorf("nd: cannot copy shape %v into shape %v", src.Shape, a.Shape)
	}
	copyData(a.Data, src.Data)
	return nil
}

// SameShape reports whether two shapes are equal.
func SameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Astype returns a converted to dt (a copy, even when dt is a's dtype).
func (a *Array) Astype(dt DType) *Array {
	if dt == a.DType() {
		return a.Copy()
	}
	if objs, ok := a.Data.([]*Array); ok {
		// An object array converts element by element (numpy would need
		// equal shapes; Fuel's transformers convert each example).
		out := make([]*Array, len(objs))
		for i, e := range objs {
			if e != nil {
				out[i] = e.Astype(dt)
			}
		}
		return &Array{Shape: append([]int(nil), a.Shape...), Data: out}
	}
	b := New(dt, a.Shape...)
	switch s := a.Data.(type) {
	case []uint8:
		if d, ok := b.Data.([]float32); ok {
			for i, v := range s {
				d[i] = float32(v)
			}
			return b
		}
	case []float32:
		if d, ok := b.Data.([]float64); ok {
			for i, v := range s {
				d[i] = float64(v)
			}
			return b
		}
	case []float64:
		// Fuel's ScaleAndShift then Cast('float32') goes through here.
		if d, ok := b.Data.([]float32); ok {
			for i, v := range s {
				d[i] = float32(v)
			}
			return b
		}
	}
	for i, n := 0, a.Size(); i < n; i++ {
		b.SetFlat(i, a.Flat(i))
	}
	return b
}

// Reshape returns a view of a with a new shape of the same size; one entry
// may be -1 and is then inferred.
func (a *Array) Reshape(shape ...int) (*Array, error) {
	shape, err := ResolveShape(a.Size(), shape)
	if err != nil {
		return nil, err
	}
	return &Array{Shape: shape, Data: a.Data}, nil
}

// ResolveShape fills a -1 entry of shape so that it holds size elements.
func ResolveShape(size int, shape []int) ([]int, error) {
	shape = append([]int(nil), shape...)
	infer, known := -1, 1
	for i, s := range shape {
		switch {
		case s == -1 && infer < 0:
			infer = i
		case s < 0:
			return nil, fmt.Errorf("nd: bad shape %v", shape)
		case s != 0 && known > math.MaxInt/s:
			return nil, fmt.Errorf("nd: shape %v: %w", shape, &SizeError{Shape: shape})
		default:
			known *= s
		}
	}
	if infer >= 0 {
		if known == 0 || size%known != 0 {
			return nil, fmt.Errorf("nd: cannot reshape %d elements into %v", size, shape)
		}
		shape[infer] = size / known
	} else if known != size {
		return nil, fmt.Errorf("nd: cannot reshape %d elements into %v", size, shape)
	}
	return shape, nil
}

// RowSize is the number of elements in one entry of the first axis.
func (a *Array) RowSize() int {
	if len(a.Shape) == 0 {
		return 1
	}
	return Prod(a.Shape[1:])
}

// Slice returns a view of rows [start, stop) along the first axis.
func (a *Array) Slice(start, stop int) *Array {
	r := a.RowSize()
	shape := append([]int{stop - start}, a.Shape[1:]...)
	return &Array{Shape: shape, Data: SliceData(a.Data, start*r, stop*r)}
}

// SliceData is d[i:j] (capacity cut at j) for the Data of any array.
func SliceData(d any, i, j int) any {
	switch d := d.(type) {
	case []float32:
		return d[i:j:j]
	case []float64:
		return d[i:j:j]
	case []int64:
		return d[i:j:j]
	case []int32:
		return d[i:j:j]
	case []uint8:
		return d[i:j:j]
	case []bool:
		return d[i:j:j]
	case []int16:
		return d[i:j:j]
	case []uint16:
		return d[i:j:j]
	case []int8:
		return d[i:j:j]
	case []*Array:
		return d[i:j:j]
	case []string:
		return d[i:j:j]
	case [][]byte:
		return d[i:j:j]
	}
	panic("unreachable")
}

// Take returns a copy of the rows at indices along the first axis.
func (a *Array) Take(indices []int) *Array {
	r := a.RowSize()
	shape := append([]int{len(indices)}, a.Shape[1:]...)
	b := New(a.DType(), shape...)
	for k, i := range indices {
		copyData(SliceData(b.Data, k*r, (k+1)*r), SliceData(a.Data, i*r, (i+1)*r))
	}
	return b
}

// Concat stacks arrays of equal trailing shape along the first axis.
func Concat(parts []*Array) (*Array, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("nd: nothing to concatenate")
	}
	first := parts[0]
	n := 0
	for _, p := range parts {
		if p.DType() != first.DType() || !SameShape(p.Shape[1:], first.Shape[1:]) {
			return nil, fmt.Errorf("nd: cannot concatenate %s%v with %s%v", first.DType(), first.Shape, p.DType(), p.Shape)
		}
		n += p.Shape[0]
	}
	out := New(first.DType(), append([]int{n}, first.Shape[1:]...)...)
	off, r := 0, first.RowSize()
	for _, p := range parts {
		copyData(SliceData(out.Data, off*r, (off+p.Shape[0])*r), p.Data)
		off += p.Shape[0]
	}
	return out, nil
}

// Equal reports whether a and b have the same dtype, shape and elements.
func Equal(a, b *Array) bool {
	if a.DType() != b.DType() || !SameShape(a.Shape, b.Shape) {
		return false
	}
	if x, ok := a.Data.([]*Array); ok {
		y := b.Data.([]*Array)
		for i := range x {
			if (x[i] == nil) != (y[i] == nil) || x[i] != nil && !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if x, ok := a.Data.([]string); ok {
		return slices.Equal(x, b.Data.([]string))
	}
	if x, ok := a.Data.([][]byte); ok {
		return slices.EqualFunc(x, b.Data.([][]byte), bytes.Equal)
	}
	for i, n := 0, a.Size(); i < n; i++ {
		x, y := a.Flat(i), b.Flat(i)
		if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
			return false
		}
	}
	return true
}
