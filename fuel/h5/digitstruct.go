//go:build cgo

package h5

// #include <stdlib.h>
// #include <string.h>
// #include "shim.h"
import "C"

import (
	"bytes"
	"fmt"
	"unsafe"
)

// ReadDigitStruct reads the bounding boxes of SVHN format 1's
// digitStruct.mat (a MATLAB 7.3 file, which is HDF5), as Fuel's
// convert_svhn_format_1 walks it with h5py: the group digitStruct holds
// bbox, an (N, 1) dataset of references to one group per image; that
// group holds label, height, width, left and top, each (boxes, 1). With
// one box the value is stored in place; with several, each element
// points to a 1x1 dataset holding it: an object reference in MATLAB's
// files, or the dataset's name in digitStruct as a string (what Fuel's
// test writes; h5py follows both). Values come back as stored (MATLAB
// stores doubles).
//
// The HDF5 data of a MATLAB 7.3 file follows a 512-byte user block (the
// MATLAB header): that user block is allowed here, and only here.
func ReadDigitStruct(path string) ([]DigitBoxes, error) {
	return readFileWith(path, true, readDigitStruct)
}

// maxDigitElements bounds what one dataset of a digitStruct may hold.
const maxDigitElements = 1 << 26

func readDigitStruct(f hid) ([]DigitBoxes, error) {
	name := cstring("digitStruct")
	defer cfree(name)
	if C.H5Lexists(f, name, C.H5P_DEFAULT) <= 0 {
		return nil, fmt.Errorf("no group digitStruct (not an SVHN digitStruct.mat)")
	}
	main := C.H5Gopen2(f, name, C.H5P_DEFAULT)
	if main < 0 {
		return nil, fmt.Errorf("digitStruct is not a group: %w", h5error("opening digitStruct"))
	}
	defer C.H5Gclose(main)
	bbox, err := openDataset(main, "bbox")
	if err != nil {
		return nil, fmt.Errorf("digitStruct/bbox: %w", err)
	}
	defer C.H5Dclose(bbox)
	refs, err := readRefs(bbox)
	if err != nil {
		return nil, fmt.Errorf("digitStruct/bbox: %w", err)
	}
	out := make([]DigitBoxes, len(refs))
	for i := range refs {
		g, err := deref(bbox, &refs[i])
		if err != nil {
			return nil, fmt.Errorf("digitStruct/bbox[%d]: %w", i, err)
		}
		if C.H5Iget_type(g) != C.H5I_GROUP {
			closeID(g)
			return nil, fmt.Errorf("digitStruct/bbox[%d] does not point to a group", i)
		}
		fields := []*[]float64{&out[i].Labels, &out[i].Heights, &out[i].Widths, &out[i].Lefts, &out[i].Tops}
		for k, field := range []string{"label", "height", "width", "left", "top"} {
			v, err := readBoxField(main, g, field)
			if err != nil {
				closeID(g)
				return nil, fmt.Errorf("image %d: %s: %w", i+1, field, err)
			}
			*fields[k] = v
		}
		closeID(g)
		n := len(out[i].Labels)
		for _, f := range fields {
			if len(*f) != n {
				return nil, fmt.Errorf("image %d: %d labels but %d values in another field", i+1, n, len(*f))
			}
		}
	}
	return out, nil
}

// readRefs reads a dataset of object references (any shape, row-major).
func readRefs(ds hid) ([]C.hobj_ref_t, error) {
	ft := C.H5Dget_type(ds)
	if ft < 0 {
		return nil, h5error("getting a type")
	}
	defer C.H5Tclose(ft)
	if C.H5Tget_class(ft) != C.H5T_REFERENCE {
		return nil, fmt.Errorf("not a dataset of object references")
	}
	n, err := elements(ds)
	if err != nil {
		return nil, err
	}
	out := make([]C.hobj_ref_t, max(n, 1))
	if n > 0 && C.H5Dread(ds, C.h5fuel_type(C.H5FUEL_STD_REF_OBJ), C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&out[0])) < 0 {
		return nil, h5error("reading references")
	}
	return out[:n], nil
}

// elements is the number of elements of a dataset, bounded.
func elements(ds hid) (int, error) {
	shape, err := datasetShape(ds)
	if err != nil {
		return 0, err
	}
	n := 1
	for _, d := range shape {
		if d < 0 || d > maxDigitElements || n*d > maxDigitElements {
			return 0, fmt.Errorf("a dataset of shape %v is too large for a digitStruct", shape)
		}
		n *= d
	}
	return n, nil
}

// readBoxField reads one field of an image's group: the first column of
// a (boxes, 1) dataset, following references or names.
func readBoxField(main, g hid, field string) ([]float64, error) {
	ds, err := openDataset(g, field)
	if err != nil {
		return nil, err
	}
	defer C.H5Dclose(ds)
	shape, err := datasetShape(ds)
	if err != nil {
		return nil, err
	}
	if len(shape) == 0 || len(shape) > 2 {
		return nil, fmt.Errorf("shape %v, want (boxes, 1)", shape)
	}
	cols := 1
	if len(shape) == 2 {
		cols = shape[1]
	}
	if cols < 1 {
		return nil, fmt.Errorf("shape %v, want (boxes, 1)", shape)
	}
	ft := C.H5Dget_type(ds)
	if ft < 0 {
		return nil, h5error("getting a type")
	}
	defer C.H5Tclose(ft)
	switch C.H5Tget_class(ft) {
	case C.H5T_REFERENCE:
		refs, err := readRefs(ds)
		if err != nil {
			return nil, err
		}
		var out []float64
		for r := 0; r < len(refs); r += cols {
			obj, err := deref(ds, &refs[r])
			if err != nil {
				return nil, err
			}
			v, err := firstValue(obj)
			closeID(obj)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case C.H5T_STRING:
		names, err := readFixedStrings(ds, ft)
		if err != nil {
			return nil, err
		}
		var out []float64
		for r := 0; r < len(names); r += cols {
			obj, err := openDataset(main, names[r])
			if err != nil {
				return nil, fmt.Errorf("the element %q names no dataset in digitStruct: %w", names[r], err)
			}
			v, err := firstValue(obj)
			C.H5Dclose(obj)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case C.H5T_INTEGER, C.H5T_FLOAT:
		v, err := readDoubles(ds)
		if err != nil {
			return nil, err
		}
		var out []float64
		for r := 0; r < len(v); r += cols {
			out = append(out, v[r])
		}
		return out, nil
	}
	return nil, fmt.Errorf("elements are neither numbers, references nor names")
}

// firstValue is the first element of a numeric dataset (obj must be a
// dataset).
func firstValue(obj hid) (float64, error) {
	if C.H5Iget_type(obj) != C.H5I_DATASET {
		return 0, fmt.Errorf("a reference that does not point to a dataset")
	}
	v, err := readDoubles(obj)
	if err != nil {
		return 0, err
	}
	if len(v) == 0 {
		return 0, fmt.Errorf("an empty dataset where a value was expected")
	}
	return v[0], nil
}

// readDoubles reads a numeric dataset converted to float64.
func readDoubles(ds hid) ([]float64, error) {
	ft := C.H5Dget_type(ds)
	if ft < 0 {
		return nil, h5error("getting a type")
	}
	class := C.H5Tget_class(ft)
	C.H5Tclose(ft)
	if class != C.H5T_INTEGER && class != C.H5T_FLOAT {
		return nil, fmt.Errorf("a dataset of non-numbers where numbers were expected")
	}
	n, err := elements(ds)
	if err != nil {
		return nil, err
	}
	out := make([]float64, max(n, 1))
	if n > 0 && C.H5Dread(ds, C.h5fuel_type(C.H5FUEL_NATIVE_DOUBLE), C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&out[0])) < 0 {
		return nil, h5error("reading numbers")
	}
	return out[:n], nil
}

// readFixedStrings reads a dataset of strings (ft its type), fixed-length
// or variable-length (h5py stores a list of Python bytes as the latter).
func readFixedStrings(ds, ft hid) ([]string, error) {
	n, err := elements(ds)
	if err != nil {
		return nil, err
	}
	if C.H5Tis_variable_str(ft) > 0 {
		return readVarStrings(ds, n)
	}
	size := int(C.H5Tget_size(ft))
	if size <= 0 || size > 4096 {
		return nil, fmt.Errorf("strings of %d bytes", size)
	}
	buf := make([]byte, max(n*size, 1))
	if n > 0 && C.H5Dread(ds, ft, C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&buf[0])) < 0 {
		return nil, h5error("reading strings")
	}
	out := make([]string, n)
	for i := range out {
		s := buf[i*size : (i+1)*size]
		if k := bytes.IndexByte(s, 0); k >= 0 {
			s = s[:k]
		}
		out[i] = string(bytes.TrimRight(s, " "))
	}
	return out, nil
}

// readVarStrings reads a dataset of n variable-length strings.
func readVarStrings(ds hid, n int) ([]string, error) {
	mt := C.H5Tcopy(C.h5fuel_type(C.H5FUEL_C_S1))
	if mt < 0 {
		return nil, h5error("creating a string type")
	}
	defer C.H5Tclose(mt)
	if C.H5Tset_size(mt, C.H5T_VARIABLE) < 0 {
		return nil, h5error("sizing a string type")
	}
	if n == 0 {
		return nil, nil
	}
	buf := (**C.char)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	if buf == nil {
		return nil, fmt.Errorf("out of memory")
	}
	defer C.free(unsafe.Pointer(buf))
	ptrs := unsafe.Slice(buf, n)
	if C.H5Dread(ds, mt, C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(buf)) < 0 {
		return nil, h5error("reading strings")
	}
	out := make([]string, n)
	for i, p := range ptrs {
		if p != nil {
			out[i] = C.GoStringN(p, C.int(C.strnlen(p, 4096)))
			C.H5free_memory(unsafe.Pointer(p))
		}
	}
	return out, nil
}
