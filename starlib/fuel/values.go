package fuel

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// The values of Fuel's examples and batches between Starlark and the data
// layer (fuel works on *nd.Array only).
//
// Into the data layer (valueData): an ndarray as is; a number, a bool or
// nested lists of them as numpy.asarray makes them; a string as a 0-d
// array of numpy's str dtype (and a list of strings as a 1-D one); a list
// of differently shaped examples as an object array (a ragged batch).
//
// Out of it (dataValue): a 0-d float array as the numpy scalar Fuel gives
// (starlib.Scalar: numpy.float32 with dtype, shape, item(), arithmetic
// keeping the dtype, == and < with numbers); a 0-d integer, bool or string
// array as the Starlark int, bool or string it holds, because Starlark
// has no __index__: a numpy int scalar could not index a list, bound a
// range or be the same dict key as the equal int, which labels do
// (docs/fuel-streams.md); an object array as a list of its examples; strings as
// nested lists of strings; byte strings (numpy's S<n>) as bytes or
// nested lists of bytes; any other array as an ndarray.

// maxValueDepth bounds the nesting valueData follows: a list that
// contains itself must give an error, not a stack overflow.
const maxValueDepth = 32

// dataValue is a stream item's array for Starlark.
func dataValue(a *nd.Array) starlark.Value {
	switch d := a.Data.(type) {
	case []*nd.Array:
		l := make([]starlark.Value, len(d))
		for i, x := range d {
			l[i] = starlark.None
			if x != nil {
				l[i] = dataValue(x)
			}
		}
		return starlark.NewList(l)
	case []string:
		return stringsValue(d, a.Shape)
	case [][]byte:
		return bytesValue(d, a.Shape)
	}
	if len(a.Shape) == 0 {
		return starlib.ScalarValue(a) // numpy.float32, numpy.uint8, ...
	}
	return starlib.FromArray(a)
}

// stringsValue is a string array as a string (0-d) or nested lists.
func stringsValue(d []string, shape []int) starlark.Value {
	if len(shape) == 0 {
		return starlark.String(d[0])
	}
	n := shape[0]
	items := make([]starlark.Value, n)
	if n == 0 {
		return starlark.NewList(items)
	}
	step := len(d) / n
	for i := range items {
		items[i] = stringsValue(d[i*step:(i+1)*step], shape[1:])
	}
	return starlark.NewList(items)
}

// bytesValue is a byte-string array (numpy's S<n>, as h5py reads a
// string source) as bytes (0-d) or nested lists of bytes.
func bytesValue(d [][]byte, shape []int) starlark.Value {
	if len(shape) == 0 {
		return starlark.Bytes(d[0])
	}
	n := shape[0]
	items := make([]starlark.Value, n)
	if n == 0 {
		return starlark.NewList(items)
	}
	step := len(d) / n
	for i := range items {
		items[i] = bytesValue(d[i*step:(i+1)*step], shape[1:])
	}
	return starlark.NewList(items)
}

// valueData converts one source's value (an example, a batch, what a
// mapping returned) to an array.
func valueData(v starlark.Value) (*nd.Array, error) { return valueDataDepth(v, 0) }

func valueDataDepth(v starlark.Value, depth int) (*nd.Array, error) {
	if depth > maxValueDepth {
		return nil, fmt.Errorf("nested more than %d levels deep (does a list contain itself?)", maxValueDepth)
	}
	switch x := v.(type) {
	case starlark.String:
		return nd.String0(string(x)), nil
	case starlark.Bytes:
		return nd.String0(string(x)), nil
	case starlark.NoneType:
		return nil, fmt.Errorf("None is not an example (want a number, a string, an array or a list)")
	}
	a, err := starlib.ToArray(v, nil)
	if err == nil {
		return a, nil
	}
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return nil, err
	}
	parts := make([]*nd.Array, seq.Len())
	for i := range parts {
		if parts[i], err = valueDataDepth(seq.Index(i), depth+1); err != nil {
			return nil, err
		}
	}
	if len(parts) == 0 {
		return nd.Objects(nil), nil
	}
	return nd.Stack(parts)
}

// indexableSource is one source of an IndexableDataset: an array, nested
// lists of numbers (Python floats in floatX), a list of strings, or a
// list of differently shaped examples (sequences: an object array).
func indexableSource(thread *starlark.Thread, v starlark.Value) (*nd.Array, error) {
	a, err := starlib.ToArray(v, nil)
	if err == nil {
		if a.DType() == nd.Float64 && !hasFloat64(v) {
			a = a.Astype(starlib.FloatX(thread))
		}
		return a, nil
	}
	if s, err := valueData(v); err == nil && s.DType() == nd.Str && len(s.Shape) > 0 {
		return s, nil
	}
	return raggedSource(thread, v)
}
