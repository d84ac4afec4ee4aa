//go:build cgo

package h5

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"unsafe"
)

// ReadSplit reads the `split` attribute of the Fuel HDF5 file at path.
func ReadSplit(path string) (Split, error) {
	return readFile(path, readSplit)
}

// readFile opens the HDF5 file at path read-only and, with the lock held,
// reads it with read; errors name the path.
func readFile[T any](path string, read func(f hid) (T, error)) (T, error) {
	return readFileWith(path, false, read)
}

// readFileWith is readFile; userBlock allows a user block before the
// HDF5 data (openFileWith).
func readFileWith[T any](path string, userBlock bool, read func(f hid) (T, error)) (T, error) {
	var zero T
	if err := checkPath(path); err != nil {
		return zero, err
	}
	lock()
	defer unlock()
	f, err := openFileWith(path, "", userBlock)
	if err != nil {
		return zero, fmt.Errorf("h5: %s: %w", path, err)
	}
	defer C.H5Fclose(f)
	v, err := read(f)
	if err != nil {
		return zero, fmt.Errorf("h5: %s: %w", path, err)
	}
	return v, nil
}

// checkPath gives a plain Go error for a path that is not a readable
// regular file, before HDF5 gives its own.
func checkPath(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("h5: %s: %w", path, fs.ErrNotExist)
		}
		return fmt.Errorf("h5: %w", err)
	}
	if st.IsDir() {
		return fmt.Errorf("h5: %s is a directory, not an HDF5 file", path)
	}
	return nil
}

// readSplit reads and checks the `split` attribute of an open file. Lock
// held.
func readSplit(f hid) (Split, error) {
	ok, err := attrExists(f, "split")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotFuel
	}
	cname := cstring("split")
	defer cfree(cname)
	attr := C.H5Aopen(f, cname, C.H5P_DEFAULT)
	if attr < 0 {
		return nil, h5error("opening the split attribute")
	}
	defer C.H5Aclose(attr)
	ftype := C.H5Aget_type(attr)
	if ftype < 0 {
		return nil, h5error("getting the split attribute's type")
	}
	defer C.H5Tclose(ftype)
	if C.H5Tget_class(ftype) != C.H5T_COMPOUND {
		what := "of another type"
		if et, err := classifyType(ftype); err == nil && et.name != "" {
			what = "of " + et.name
		}
		return nil, fmt.Errorf("%w: its root group's `split` attribute is an array %s, not Fuel's compound rows (split, source, start, stop, indices, available, comment)", ErrNotFuelSplit, what)
	}
	space := C.H5Aget_space(attr)
	if space < 0 {
		return nil, h5error("getting the split attribute's dataspace")
	}
	defer C.H5Sclose(space)
	n := int(C.H5Sget_simple_extent_npoints(space))
	if n < 0 {
		return nil, h5error("getting the split attribute's size")
	}
	if n == 0 {
		return nil, fmt.Errorf("the split attribute is empty")
	}
	r := attrReader{attr: attr, ftype: ftype, space: space, n: n}
	splits, err := r.strings("split")
	if err != nil {
		return nil, err
	}
	sources, err := r.strings("source")
	if err != nil {
		return nil, err
	}
	starts, err := r.ints("start")
	if err != nil {
		return nil, err
	}
	stops, err := r.ints("stop")
	if err != nil {
		return nil, err
	}
	refs, err := r.refs("indices")
	if err != nil {
		return nil, err
	}
	avail, err := r.bools("available")
	if err != nil {
		return nil, err
	}
	comments, err := r.strings("comment")
	if err != nil {
		return nil, err
	}
	rows, err := splitRows(splits, sources, starts, stops, avail, comments)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		row := &rows[i]
		if refs[i] != 0 {
			row.IndicesPath, row.Indices, err = readIndexRef(f, refs[i])
			if err != nil {
				return nil, fmt.Errorf("split %q, source %q: %w", row.Split, row.Source, err)
			}
		}
	}
	return rows, nil
}

// readIndexRef follows an object reference to a 1-D index dataset and
// reads it.
func readIndexRef(f hid, ref C.hobj_ref_t) (string, []int, error) {
	obj, err := deref(f, &ref)
	if err != nil {
		return "", nil, fmt.Errorf("following the indices reference: %w", err)
	}
	defer closeID(obj)
	if C.H5Iget_type(obj) != C.H5I_DATASET {
		return "", nil, fmt.Errorf("the indices reference does not point to a dataset")
	}
	var buf [4096]C.char
	path := ""
	if C.H5Iget_name(obj, &buf[0], C.size_t(len(buf))) > 0 {
		path = C.GoString(&buf[0])
	}
	v, err := readInt64s(obj)
	if err != nil {
		return "", nil, fmt.Errorf("index dataset %s: %w", path, err)
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return path, out, nil
}

// attrReader reads the fields of a compound attribute one at a time, each
// through a one-member compound memory type: HDF5 matches members by name,
// so the file's packing (h5py writes packed structs) does not matter.
type attrReader struct {
	attr, ftype, space hid
	n                  int
}

// member returns the file type of a field (to be closed by the caller).
func (r attrReader) member(name string) (hid, error) {
	cname := cstring(name)
	defer cfree(cname)
	idx := C.H5Tget_member_index(r.ftype, cname)
	if idx < 0 {
		C.H5Eclear2(C.H5E_DEFAULT)
		return -1, fmt.Errorf("the split attribute has no field %q", name)
	}
	t := C.H5Tget_member_type(r.ftype, C.uint(idx))
	if t < 0 {
		return -1, h5error(fmt.Sprintf("getting the type of split field %q", name))
	}
	return t, nil
}

// read reads field name, converted to memory type mt, into buf.
func (r attrReader) read(name string, mt hid, buf unsafe.Pointer) error {
	cname := cstring(name)
	defer cfree(cname)
	ct := C.H5Tcreate(C.H5T_COMPOUND, C.H5Tget_size(mt))
	if ct < 0 {
		return h5error("creating a compound type")
	}
	defer C.H5Tclose(ct)
	if C.H5Tinsert(ct, cname, 0, mt) < 0 {
		return h5error("building a compound type")
	}
	if C.H5Aread(r.attr, ct, buf) < 0 {
		return h5error(fmt.Sprintf("reading split field %q", name))
	}
	return nil
}

func (r attrReader) strings(name string) ([]string, error) {
	ft, err := r.member(name)
	if err != nil {
		return nil, err
	}
	defer C.H5Tclose(ft)
	if C.H5Tget_class(ft) != C.H5T_STRING {
		return nil, fmt.Errorf("split field %q is not a string", name)
	}
	out := make([]string, r.n)
	if C.H5Tis_variable_str(ft) > 0 {
		ptrs := unsafe.Slice((**C.char)(C.calloc(C.size_t(r.n), C.size_t(unsafe.Sizeof((*C.char)(nil))))), r.n)
		defer C.free(unsafe.Pointer(&ptrs[0]))
		if err := r.read(name, ft, unsafe.Pointer(&ptrs[0])); err != nil {
			return nil, err
		}
		for i, p := range ptrs {
			if p != nil {
				out[i] = C.GoString(p)
				C.H5free_memory(unsafe.Pointer(p))
			}
		}
		return out, nil
	}
	size := int(C.H5Tget_size(ft))
	buf := make([]byte, r.n*size)
	if len(buf) == 0 {
		return out, nil
	}
	if err := r.read(name, ft, unsafe.Pointer(&buf[0])); err != nil {
		return nil, err
	}
	return fixedStrings(buf, size, r.n)
}

func (r attrReader) ints(name string) ([]int64, error) {
	ft, err := r.member(name)
	if err != nil {
		return nil, err
	}
	class := C.H5Tget_class(ft)
	C.H5Tclose(ft)
	if class != C.H5T_INTEGER {
		return nil, fmt.Errorf("split field %q is not an integer", name)
	}
	out := make([]int64, r.n)
	err = r.read(name, C.h5fuel_type(C.H5FUEL_NATIVE_INT64), unsafe.Pointer(&out[0]))
	return out, err
}

func (r attrReader) refs(name string) ([]C.hobj_ref_t, error) {
	ft, err := r.member(name)
	if err != nil {
		return nil, err
	}
	ok := C.H5Tget_class(ft) == C.H5T_REFERENCE && C.H5Tget_size(ft) == C.size_t(unsafe.Sizeof(C.hobj_ref_t(0)))
	C.H5Tclose(ft)
	if !ok {
		return nil, fmt.Errorf("split field %q is not an object reference", name)
	}
	out := make([]C.hobj_ref_t, r.n)
	err = r.read(name, C.h5fuel_type(C.H5FUEL_STD_REF_OBJ), unsafe.Pointer(&out[0]))
	return out, err
}

func (r attrReader) bools(name string) ([]bool, error) {
	ft, err := r.member(name)
	if err != nil {
		return nil, err
	}
	defer C.H5Tclose(ft)
	out := make([]bool, r.n)
	switch C.H5Tget_class(ft) {
	case C.H5T_ENUM: // h5py's bool
		mt := C.H5Tget_native_type(ft, C.H5T_DIR_ASCEND)
		if mt < 0 {
			return nil, h5error("getting a native type")
		}
		defer C.H5Tclose(mt)
		size := int(C.H5Tget_size(mt))
		buf := make([]byte, r.n*size)
		if len(buf) == 0 {
			return nil, fmt.Errorf("split field %q has a zero-size type", name)
		}
		if err := r.read(name, mt, unsafe.Pointer(&buf[0])); err != nil {
			return nil, err
		}
		return enumBools(buf, size, r.n)
	case C.H5T_INTEGER:
		v := make([]int64, r.n)
		if err := r.read(name, C.h5fuel_type(C.H5FUEL_NATIVE_INT64), unsafe.Pointer(&v[0])); err != nil {
			return nil, err
		}
		for i, x := range v {
			out[i] = x != 0
		}
	default:
		return nil, fmt.Errorf("split field %q is not a boolean", name)
	}
	return out, nil
}
