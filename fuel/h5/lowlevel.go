//go:build cgo

package h5

// #include <stdlib.h>
// #include <string.h>
// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/blocks-go/blocks/nd"
)

// This file holds the package's thin layer over the HDF5 C API. Every
// function here expects the HDF5 lock (lock/unlock) to be held.

// ErrNotHDF5 is wrapped by the error for a file that is not an HDF5 file.
var ErrNotHDF5 = errors.New("not an HDF5 file")

// ErrNotSelfContained is wrapped by the error for an HDF5 file that would
// make libhdf5 read files other than itself (external storage on
// /proc/self/environ, an external link, a virtual dataset's sources) or
// whose HDF5 data follows a user block (what lets an .npy file, say, be
// an HDF5 file too). The file is refused, whoever opens it: only data
// stored in the file that was named (and checked by the sandbox) is read.
var ErrNotSelfContained = errors.New("refused: only data stored in the HDF5 file itself is read (no external storage, external links, virtual datasets or user block)")

// openFile opens an HDF5 file read-only.
func openFile(path string) (hid, error) { return openFileDriver(path, "") }

// openFileDriver opens a file read-only with one of Drivers ("" for the
// default): "core" reads the whole file into memory when it opens.
func openFileDriver(path, driver string) (hid, error) { return openFileWith(path, driver, false) }

// openFileWith is openFileDriver; userBlock lets the HDF5 data follow a
// user block (MATLAB 7.3 files have one of 512 bytes). The file is
// checked (checkFile) before it is returned.
func openFileWith(path, driver string, userBlock bool) (hid, error) {
	code := C.int(C.H5FUEL_DRIVER_DEFAULT)
	switch driver {
	case "":
	case "sec2":
		code = C.H5FUEL_DRIVER_SEC2
	case "stdio":
		code = C.H5FUEL_DRIVER_STDIO
	case "core":
		code = C.H5FUEL_DRIVER_CORE
	default:
		return -1, fmt.Errorf("driver %q is not supported (supported: None, %s)", driver, quoteAll(Drivers))
	}
	cpath := cstring(path)
	defer cfree(cpath)
	switch r := C.H5Fis_hdf5(cpath); {
	case r == 0:
		C.H5Eclear2(C.H5E_DEFAULT)
		return -1, ErrNotHDF5
	case r < 0:
		return -1, h5error("cannot read the file")
	}
	fapl := C.hid_t(C.H5P_DEFAULT)
	if code != C.H5FUEL_DRIVER_DEFAULT {
		if fapl = C.h5fuel_fapl(code); fapl < 0 {
			return -1, h5error(fmt.Sprintf("setting up the %s driver", driver))
		}
		defer C.H5Pclose(fapl)
	}
	if C.h5fuel_refuse_external_links() < 0 {
		return -1, h5error("replacing the external link class")
	}
	f := C.H5Fopen(cpath, C.H5F_ACC_RDONLY, fapl)
	if f < 0 {
		return -1, h5error("cannot open the file")
	}
	if err := checkFile(f, userBlock); err != nil {
		C.H5Fclose(f)
		return -1, err
	}
	return f, nil
}

// checkFile refuses a file with a user block (unless userBlock) or an
// external or user-defined link anywhere under its root. (Traversing an
// external link fails anyway, wherever it is: the library's external
// link class is replaced; the walk names the link.)
func checkFile(f hid, userBlock bool) error {
	var buf [2048]C.char
	ub := C.int(0)
	if userBlock {
		ub = 1
	}
	switch r := C.h5fuel_check_file(f, ub, &buf[0], C.size_t(len(buf))); {
	case r < 0:
		return h5error("looking for links to other files")
	case r > 0:
		return fmt.Errorf("%s: %w", C.GoString(&buf[0]), ErrNotSelfContained)
	}
	return nil
}

// checkStorage refuses a dataset whose data lies in other files:
// external storage, or a virtual layout. Every dataset opened is checked
// before anything reads it.
func checkStorage(ds hid) error {
	var buf [2048]C.char
	switch r := C.h5fuel_check_dataset(ds, &buf[0], C.size_t(len(buf))); {
	case r < 0:
		return h5error("reading the dataset's storage layout")
	case r > 0:
		return fmt.Errorf("%s: %w", C.GoString(&buf[0]), ErrNotSelfContained)
	}
	return nil
}

// deref opens the object an object reference points to (relative to the
// file, or any object in it, loc); a dataset is checked (checkStorage).
func deref(loc hid, ref *C.hobj_ref_t) (hid, error) {
	obj := C.h5fuel_deref(loc, ref)
	if obj < 0 {
		return -1, h5error("following the reference")
	}
	if C.H5Iget_type(obj) == C.H5I_DATASET {
		if err := checkStorage(obj); err != nil {
			closeID(obj)
			return -1, err
		}
	}
	return obj, nil
}

// attrExists reports whether object loc has an attribute called name.
func attrExists(loc hid, name string) (bool, error) {
	cname := cstring(name)
	defer cfree(cname)
	r := C.H5Aexists(loc, cname)
	if r < 0 {
		return false, h5error(fmt.Sprintf("h5: looking for attribute %q", name))
	}
	return r > 0, nil
}

// openDataset opens the dataset at path (relative to loc); a missing path
// gives an error saying so.
func openDataset(loc hid, path string) (hid, error) {
	cpath := cstring(path)
	defer cfree(cpath)
	if !strings.Contains(strings.Trim(path, "/"), "/") {
		// H5Lexists needs every intermediate group to exist; for a name in
		// the root group (every source is one) it answers cleanly.
		switch r := C.H5Lexists(loc, cpath, C.H5P_DEFAULT); {
		case r == 0:
			return -1, fmt.Errorf("no dataset %q in the file", path)
		case r < 0:
			return -1, h5error(fmt.Sprintf("looking for dataset %q", path))
		}
	}
	ds := C.H5Dopen2(loc, cpath, C.H5P_DEFAULT)
	if ds < 0 {
		return -1, h5error(fmt.Sprintf("opening dataset %q", path))
	}
	if err := checkStorage(ds); err != nil {
		C.H5Dclose(ds)
		return -1, fmt.Errorf("dataset %q: %w", path, err)
	}
	return ds, nil
}

// datasetShape returns the current dimensions of a dataset.
func datasetShape(ds hid) ([]int, error) {
	space := C.H5Dget_space(ds)
	if space < 0 {
		return nil, h5error("getting a dataspace")
	}
	defer C.H5Sclose(space)
	n := C.H5Sget_simple_extent_ndims(space)
	if n < 0 {
		return nil, h5error("getting a dataspace's rank")
	}
	if n == 0 {
		return []int{}, nil
	}
	dims := make([]C.hsize_t, n)
	if C.H5Sget_simple_extent_dims(space, &dims[0], nil) < 0 {
		return nil, h5error("getting a dataspace's dimensions")
	}
	shape := make([]int, n)
	for i, d := range dims {
		if uint64(d) > math.MaxInt64 {
			return nil, fmt.Errorf("the dataset's dimension %d is %d, beyond what any array can hold", i, uint64(d))
		}
		shape[i] = int(d)
	}
	return shape, nil
}

// storageSize is the bytes a dataset's data takes in the file (0 when
// none is allocated: a dataset never written, all fill value).
func storageSize(ds hid) uint64 {
	return uint64(C.H5Dget_storage_size(ds))
}

// elemType describes a dataset's element type: the nd dtype it is read
// as, or (ok false) a numpy-style name for a type this package cannot
// read yet.
type elemType struct {
	dtype nd.DType
	ok    bool
	name  string
	// vlen is set for a variable-length type (h5py's vlen arrays), whose
	// elements are of dtype.
	vlen bool
	// strWidth is the byte width of a fixed-length string type (numpy's
	// S<n>), 0 for any other; ok stays false for it, as only H5PYDataset
	// reads strings.
	strWidth int
}

// datasetType classifies the element type of a dataset.
func datasetType(ds hid) (elemType, error) {
	t := C.H5Dget_type(ds)
	if t < 0 {
		return elemType{}, h5error("getting a dataset's type")
	}
	defer C.H5Tclose(t)
	return classifyType(t)
}

func classifyType(t hid) (elemType, error) {
	size := int(C.H5Tget_size(t))
	switch C.H5Tget_class(t) {
	case C.H5T_INTEGER:
		signed := C.H5Tget_sign(t) == C.H5T_SGN_2
		name := fmt.Sprintf("int%d", 8*size)
		if !signed {
			name = "u" + name
		}
		switch {
		case size == 1 && !signed:
			return elemType{dtype: nd.Uint8, ok: true, name: name}, nil
		case size == 1 && signed:
			return elemType{dtype: nd.Int8, ok: true, name: name}, nil
		case size == 2 && signed:
			return elemType{dtype: nd.Int16, ok: true, name: name}, nil
		case size == 2 && !signed:
			return elemType{dtype: nd.Uint16, ok: true, name: name}, nil
		case size == 4 && signed:
			return elemType{dtype: nd.Int32, ok: true, name: name}, nil
		case size == 8 && signed:
			return elemType{dtype: nd.Int64, ok: true, name: name}, nil
		}
		return elemType{name: name}, nil
	case C.H5T_FLOAT:
		name := fmt.Sprintf("float%d", 8*size)
		switch size {
		case 4:
			return elemType{dtype: nd.Float32, ok: true, name: name}, nil
		case 8:
			return elemType{dtype: nd.Float64, ok: true, name: name}, nil
		}
		return elemType{name: name}, nil
	case C.H5T_ENUM:
		if isH5pyBool(t) {
			return elemType{dtype: nd.Bool, ok: true, name: "bool"}, nil
		}
		return elemType{name: "enum"}, nil
	case C.H5T_STRING:
		if C.H5Tis_variable_str(t) > 0 {
			return elemType{name: "variable-length string"}, nil
		}
		return elemType{name: fmt.Sprintf("S%d", size), strWidth: size}, nil
	case C.H5T_VLEN:
		base := C.H5Tget_super(t)
		if base < 0 {
			return elemType{}, h5error("getting a vlen type's base type")
		}
		defer C.H5Tclose(base)
		b, err := classifyType(base)
		if err != nil {
			return elemType{}, err
		}
		return elemType{dtype: b.dtype, ok: b.ok && b.dtype != nd.Bool, name: "vlen " + b.name, vlen: true}, nil
	case C.H5T_COMPOUND:
		return elemType{name: "compound"}, nil
	case C.H5T_REFERENCE:
		return elemType{name: "reference"}, nil
	case C.H5T_ARRAY:
		return elemType{name: "array"}, nil
	case C.H5T_OPAQUE:
		return elemType{name: "opaque"}, nil
	case C.H5T_BITFIELD:
		return elemType{name: "bitfield"}, nil
	}
	return elemType{}, h5error("classifying a datatype")
}

// isH5pyBool reports whether an enum type is h5py's encoding of numpy's
// bool: a 1-byte integer enum with exactly FALSE=0 and TRUE=1.
func isH5pyBool(t hid) bool {
	if C.H5Tget_nmembers(t) != 2 || C.H5Tget_size(t) != 1 {
		return false
	}
	want := map[string]int8{"FALSE": 0, "TRUE": 1}
	for i := C.unsigned(0); i < 2; i++ {
		cname := C.H5Tget_member_name(t, i)
		if cname == nil {
			C.H5Eclear2(C.H5E_DEFAULT)
			return false
		}
		name := C.GoString(cname)
		C.H5free_memory(unsafe.Pointer(cname))
		var v int8
		if C.H5Tget_member_value(t, i, unsafe.Pointer(&v)) < 0 {
			C.H5Eclear2(C.H5E_DEFAULT)
			return false
		}
		w, ok := want[name]
		if !ok || w != v {
			return false
		}
		delete(want, name)
	}
	return true
}

// memType returns the memory type a dataset of dtype dt is read with, and
// whether the caller must close it.
func memType(ds hid, dt nd.DType) (hid, bool, error) {
	switch dt {
	case nd.Bool:
		// The enum in native byte order: its values (0 and 1) land in one
		// byte each, which the caller turns into bools.
		ft := C.H5Dget_type(ds)
		if ft < 0 {
			return -1, false, h5error("getting a dataset's type")
		}
		defer C.H5Tclose(ft)
		mt := C.H5Tget_native_type(ft, C.H5T_DIR_ASCEND)
		if mt < 0 {
			return -1, false, h5error("getting a native type")
		}
		return mt, true, nil
	case nd.ByteStr:
		// The file's string type, read as stored (NULLPAD or NULLTERM
		// bytes of its width).
		ft := C.H5Dget_type(ds)
		if ft < 0 {
			return -1, false, h5error("getting a dataset's type")
		}
		defer C.H5Tclose(ft)
		mt := C.H5Tcopy(ft)
		if mt < 0 {
			return -1, false, h5error("copying a string type")
		}
		return mt, true, nil
	}
	if mt, err := nativeType(dt); err == nil {
		return mt, false, nil
	}
	return -1, false, fmt.Errorf("h5: no memory type for %s", dt)
}

// dimLabel returns the H5DS label of dimension i of a dataset ("" when it
// has none), as h5py's dset.dims[i].label.
func dimLabel(ds hid, i int) (string, error) {
	n := C.H5DSget_label(ds, C.uint(i), nil, 0)
	if n < 0 {
		return "", h5error(fmt.Sprintf("reading the label of dimension %d", i))
	}
	if n == 0 {
		return "", nil
	}
	buf := make([]C.char, n+1)
	if C.H5DSget_label(ds, C.uint(i), &buf[0], C.size_t(len(buf))) < 0 {
		return "", h5error(fmt.Sprintf("reading the label of dimension %d", i))
	}
	return C.GoString(&buf[0]), nil
}

// findScale looks for a dimension scale called name attached to dimension
// dim of a dataset (h5py's `name in dset.dims[dim]`) and returns its path.
func findScale(ds hid, dim int, name string) (string, bool, error) {
	cname := cstring(name)
	defer cfree(cname)
	var buf [4096]C.char
	r := C.h5fuel_find_scale(ds, C.uint(dim), cname, &buf[0], C.size_t(len(buf)))
	if r < 0 {
		return "", false, h5error(fmt.Sprintf("looking for dimension scale %q", name))
	}
	if r == 0 {
		return "", false, nil
	}
	return C.GoString(&buf[0]), true, nil
}

// readStrings reads a 1-D dataset of fixed- or variable-length strings.
func readStrings(ds hid) ([]string, error) {
	shape, err := datasetShape(ds)
	if err != nil {
		return nil, err
	}
	if len(shape) != 1 {
		return nil, fmt.Errorf("a string dataset of shape %v, want 1-D", shape)
	}
	n := shape[0]
	ft := C.H5Dget_type(ds)
	if ft < 0 {
		return nil, h5error("getting a dataset's type")
	}
	defer C.H5Tclose(ft)
	if C.H5Tget_class(ft) != C.H5T_STRING {
		return nil, fmt.Errorf("a dataset of non-string type, want strings")
	}
	if n == 0 {
		return []string{}, nil
	}
	out := make([]string, n)
	if C.H5Tis_variable_str(ft) > 0 {
		mt := C.H5Tcopy(C.h5fuel_type(C.H5FUEL_C_S1))
		defer C.H5Tclose(mt)
		C.H5Tset_size(mt, C.H5T_VARIABLE)
		C.H5Tset_cset(mt, C.H5Tget_cset(ft))
		ptrs := unsafe.Slice((**C.char)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.char)(nil))))), n)
		defer C.free(unsafe.Pointer(&ptrs[0]))
		if C.H5Dread(ds, mt, C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&ptrs[0])) < 0 {
			return nil, h5error("reading strings")
		}
		for i, p := range ptrs {
			if p != nil {
				out[i] = C.GoString(p)
			}
		}
		space := C.H5Dget_space(ds)
		C.H5Dvlen_reclaim(mt, space, C.H5P_DEFAULT, unsafe.Pointer(&ptrs[0]))
		C.H5Sclose(space)
		return out, nil
	}
	size := int(C.H5Tget_size(ft))
	buf := make([]byte, n*size)
	if C.H5Dread(ds, ft, C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&buf[0])) < 0 {
		return nil, h5error("reading strings")
	}
	for i := range out {
		out[i] = trimNul(buf[i*size : (i+1)*size])
	}
	return out, nil
}

// readInt64s reads a whole 1-D integer dataset (an index dataset) as int64.
func readInt64s(ds hid) ([]int64, error) {
	shape, err := datasetShape(ds)
	if err != nil {
		return nil, err
	}
	if len(shape) != 1 {
		return nil, fmt.Errorf("an index dataset of shape %v, want 1-D", shape)
	}
	return readIntegers(ds, shape[0], "an index dataset", "indices")
}

// readIntegers reads the n elements of a whole integer dataset as int64;
// what ("an index dataset") and elems ("indices") name them in errors.
func readIntegers(ds hid, n int, what, elems string) ([]int64, error) {
	ft := C.H5Dget_type(ds)
	if ft < 0 {
		return nil, h5error("getting a dataset's type")
	}
	class := C.H5Tget_class(ft)
	C.H5Tclose(ft)
	if class != C.H5T_INTEGER {
		return nil, fmt.Errorf("%s of non-integer type", what)
	}
	out := make([]int64, n)
	if len(out) == 0 {
		return out, nil
	}
	if C.H5Dread(ds, C.h5fuel_type(C.H5FUEL_NATIVE_INT64), C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&out[0])) < 0 {
		return nil, h5error("reading " + elems)
	}
	return out, nil
}

// run is a range [start, stop) of rows along a dataset's first axis.
type run struct{ start, stop int }

// readRuns reads the rows of the given runs, which must be sorted and
// disjoint, into dst: rows of rowShape elements of dtype dt, in file
// order, one H5Dread for all of them. dst must hold exactly those rows.
func readRuns(ds hid, dt nd.DType, shape []int, runs []run, dst unsafe.Pointer) error {
	rows := 0
	for _, r := range runs {
		rows += r.stop - r.start
	}
	if rows == 0 {
		return nil
	}
	fspace, mspace, err := runSpaces(ds, shape, runs, rows)
	if err != nil {
		return err
	}
	defer C.H5Sclose(fspace)
	defer C.H5Sclose(mspace)
	mt, owned, err := memType(ds, dt)
	if err != nil {
		return err
	}
	if owned {
		defer C.H5Tclose(mt)
	}
	if C.H5Dread(ds, mt, mspace, fspace, C.H5P_DEFAULT, dst) < 0 {
		return h5error("reading rows")
	}
	return nil
}

// runSpaces selects the rows of the given runs (sorted, disjoint, rows in
// all) in the file space of ds, a dataset of the given shape (only its
// trailing axes are read), and makes the memory space that holds them;
// the caller closes both.
func runSpaces(ds hid, shape []int, runs []run, rows int) (fspace, mspace hid, err error) {
	rank := len(shape)
	fspace = C.H5Dget_space(ds)
	if fspace < 0 {
		return -1, -1, h5error("getting a dataspace")
	}
	start := make([]C.hsize_t, rank)
	count := make([]C.hsize_t, rank)
	for i := 1; i < rank; i++ {
		count[i] = C.hsize_t(shape[i])
	}
	op := C.H5S_seloper_t(C.H5S_SELECT_SET)
	for _, r := range runs {
		if r.stop == r.start {
			continue
		}
		start[0] = C.hsize_t(r.start)
		count[0] = C.hsize_t(r.stop - r.start)
		if C.H5Sselect_hyperslab(fspace, op, &start[0], nil, &count[0], nil) < 0 {
			C.H5Sclose(fspace)
			return -1, -1, h5error("selecting rows")
		}
		op = C.H5S_SELECT_OR
	}
	mdims := make([]C.hsize_t, rank)
	copy(mdims, count)
	mdims[0] = C.hsize_t(rows)
	mspace = C.H5Screate_simple(C.int(rank), &mdims[0], nil)
	if mspace < 0 {
		C.H5Sclose(fspace)
		return -1, -1, h5error("creating a dataspace")
	}
	return fspace, mspace, nil
}

// nativeType is the native memory type of a numeric dtype (not Bool).
func nativeType(dt nd.DType) (hid, error) {
	switch dt {
	case nd.Uint8:
		return C.h5fuel_type(C.H5FUEL_NATIVE_UINT8), nil
	case nd.Int8:
		return C.h5fuel_type(C.H5FUEL_NATIVE_INT8), nil
	case nd.Int16:
		return C.h5fuel_type(C.H5FUEL_NATIVE_INT16), nil
	case nd.Uint16:
		return C.h5fuel_type(C.H5FUEL_NATIVE_UINT16), nil
	case nd.Int32:
		return C.h5fuel_type(C.H5FUEL_NATIVE_INT32), nil
	case nd.Int64:
		return C.h5fuel_type(C.H5FUEL_NATIVE_INT64), nil
	case nd.Float32:
		return C.h5fuel_type(C.H5FUEL_NATIVE_FLOAT), nil
	case nd.Float64:
		return C.h5fuel_type(C.H5FUEL_NATIVE_DOUBLE), nil
	}
	return -1, fmt.Errorf("no native HDF5 type for %s", dt)
}

// vlenMemType is the memory type of variable-length rows whose elements
// are dt (to be closed by the caller).
func vlenMemType(dt nd.DType) (hid, error) {
	base, err := nativeType(dt)
	if err != nil {
		return -1, err
	}
	mt := C.H5Tvlen_create(base)
	if mt < 0 {
		return -1, h5error("creating a vlen type")
	}
	return mt, nil
}

// dataPointer returns the address of an array's first element (nil for an
// empty array); the array must hold a numeric (not bool) slice.
func dataPointer(a *nd.Array) (unsafe.Pointer, error) {
	if a.Size() == 0 {
		return nil, nil
	}
	switch d := a.Data.(type) {
	case []uint8:
		return unsafe.Pointer(&d[0]), nil
	case []int8:
		return unsafe.Pointer(&d[0]), nil
	case []int16:
		return unsafe.Pointer(&d[0]), nil
	case []uint16:
		return unsafe.Pointer(&d[0]), nil
	case []int32:
		return unsafe.Pointer(&d[0]), nil
	case []int64:
		return unsafe.Pointer(&d[0]), nil
	case []float32:
		return unsafe.Pointer(&d[0]), nil
	case []float64:
		return unsafe.Pointer(&d[0]), nil
	}
	return nil, fmt.Errorf("no element pointer for %T", a.Data)
}

// readVlenRuns reads the rows of the given sorted, disjoint runs of a 1-D
// variable-length dataset whose elements are of dtype dt, one H5Dread for
// all of them, and returns each row's elements as a flat array, in file
// order.
func readVlenRuns(ds hid, dt nd.DType, runs []run) ([]*nd.Array, error) {
	rows := 0
	for _, r := range runs {
		rows += r.stop - r.start
	}
	if rows == 0 {
		return nil, nil
	}
	fspace, mspace, err := runSpaces(ds, []int{0}, runs, rows)
	if err != nil {
		return nil, err
	}
	defer C.H5Sclose(fspace)
	defer C.H5Sclose(mspace)
	mt, err := vlenMemType(dt)
	if err != nil {
		return nil, err
	}
	defer C.H5Tclose(mt)
	// What the rows take once read, before libhdf5 allocates it (in C,
	// where Go's heap does not see it) and the rows are copied to Go:
	// rows may all point at one large heap object (400 rows of one 5 MB
	// object in a 5 MB file were 4 GB).
	var vlenBytes C.hsize_t
	if C.H5Dvlen_get_buf_size(ds, mt, fspace, &vlenBytes) < 0 {
		return nil, h5error("sizing the rows")
	}
	if err := nd.CheckBytes(2 * uint64(vlenBytes)); err != nil {
		return nil, fmt.Errorf("%d variable-length rows of %s in all: %w", rows, nd.FormatBytes(uint64(vlenBytes)), err)
	}
	buf := (*C.hvl_t)(C.calloc(C.size_t(rows), C.size_t(unsafe.Sizeof(C.hvl_t{}))))
	if buf == nil {
		return nil, fmt.Errorf("out of memory for %d rows", rows)
	}
	defer C.free(unsafe.Pointer(buf))
	if C.H5Dread(ds, mt, mspace, fspace, C.H5P_DEFAULT, unsafe.Pointer(buf)) < 0 {
		return nil, h5error("reading rows")
	}
	defer C.H5Dvlen_reclaim(mt, mspace, C.H5P_DEFAULT, unsafe.Pointer(buf))
	out := make([]*nd.Array, rows)
	size := C.size_t(dt.Size())
	for i, v := range unsafe.Slice(buf, rows) {
		a := nd.New(dt, int(v.len))
		if v.len > 0 {
			p, _ := dataPointer(a)
			C.memcpy(p, v.p, v.len*size)
		}
		out[i] = a
	}
	return out, nil
}

// readInt64Matrix reads a whole 1-D or 2-D integer dataset (a vlen
// source's shapes) as int64 rows.
func readInt64Matrix(ds hid) ([][]int, error) {
	shape, err := datasetShape(ds)
	if err != nil {
		return nil, err
	}
	if len(shape) != 2 {
		return nil, fmt.Errorf("a shapes dataset of shape %v, want 2-D", shape)
	}
	flat, err := readIntegers(ds, shape[0]*shape[1], "a shapes dataset", "shapes")
	if err != nil {
		return nil, err
	}
	return shapesMatrix(flat, shape[0], shape[1])
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
