//go:build cgo

package h5

// #include <stdlib.h>
// #include <string.h>
// #include "shim.h"
import "C"

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/blocks-go/blocks/nd"
)

// Writer writes a file in Fuel's HDF5 format, as Fuel's converters
// (fill_hdf5_file, create_split_array) and its documented h5py recipes
// do, so that Python h5py and Fuel read it back the same way this package
// does: one root dataset per source (contiguous, little-endian, h5py's
// types: numpy's bool as the FALSE/TRUE int8 enum), H5DS axis labels,
// variable-length sources with their `shapes` and `shape_labels`
// dimension scales, the `split` attribute (packed compound, fixed-length
// NULLPAD strings, one row per (split, source) pair with the sources
// sorted) and string attributes (h5py's encoding of bytes: fixed-length
// scalars).
//
// The file is written under a temporary name beside path and renamed into
// place by Close, so an interrupted or failed write never leaves a file at
// path that looks complete; Abort (or a failed Close) removes it.
//
// Every dataset the writer opens is closed before the call returns: HDF5
// does not flush a file that still has an object open when it is closed.
// A Writer is safe for use by one goroutine at a time; its HDF5 calls take
// the package's lock.
type Writer struct {
	path, tmp string
	file      hid
	sources   map[string]bool
	order     []string
	splits    []SplitDef
	attrs     [][2]string
	done      bool
	// vlenRank is the number of example axes of each source made by
	// CreateVlenSource.
	vlenRank map[string]int
	// vlenFlat marks the sources made with VlenLayout.Flat (no shapes).
	vlenFlat map[string]bool
	// vlenBuf holds the examples WriteVlenExample has not written yet.
	vlenBuf map[string]*vlenRun
}

// Create starts a Fuel HDF5 file that Close will put at path.
func Create(path string) (*Writer, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("h5: creating %s: %w", path, err)
	}
	tmp.Close()
	w := &Writer{path: path, tmp: tmp.Name(), sources: map[string]bool{}}
	lock()
	defer unlock()
	cpath := cstring(w.tmp)
	defer cfree(cpath)
	w.file = C.H5Fcreate(cpath, C.H5F_ACC_TRUNC, C.H5P_DEFAULT, C.H5P_DEFAULT)
	if w.file < 0 {
		err := h5error("creating the file")
		os.Remove(w.tmp)
		return nil, fmt.Errorf("h5: %s: %w", path, err)
	}
	return w, nil
}

// Path is where Close puts the file.
func (w *Writer) Path() string { return w.path }

func (w *Writer) errorf(format string, args ...any) error {
	return fmt.Errorf("h5: writing %s: %s", w.path, fmt.Sprintf(format, args...))
}

func (w *Writer) wrap(what string, err error) error {
	return fmt.Errorf("h5: writing %s: %s: %w", w.path, what, err)
}

// fileType returns the HDF5 type h5py stores a dtype with (to be closed by
// the caller when owned).
func fileType(dt nd.DType) (hid, bool, error) {
	switch dt {
	case nd.Uint8:
		return C.h5fuel_type(C.H5FUEL_STD_U8LE), false, nil
	case nd.Int8:
		return C.h5fuel_type(C.H5FUEL_STD_I8LE), false, nil
	case nd.Int16:
		return C.h5fuel_type(C.H5FUEL_STD_I16LE), false, nil
	case nd.Uint16:
		return C.h5fuel_type(C.H5FUEL_STD_U16LE), false, nil
	case nd.Int32:
		return C.h5fuel_type(C.H5FUEL_STD_I32LE), false, nil
	case nd.Int64:
		return C.h5fuel_type(C.H5FUEL_STD_I64LE), false, nil
	case nd.Float32:
		return C.h5fuel_type(C.H5FUEL_IEEE_F32LE), false, nil
	case nd.Float64:
		return C.h5fuel_type(C.H5FUEL_IEEE_F64LE), false, nil
	case nd.Bool:
		t, err := boolType()
		return t, true, err
	}
	return -1, false, fmt.Errorf("dtype %s cannot be written", dt)
}

// boolType is h5py's numpy bool: an int8 enum FALSE=0, TRUE=1.
func boolType() (hid, error) {
	t := C.H5Tenum_create(C.h5fuel_type(C.H5FUEL_NATIVE_INT8))
	if t < 0 {
		return -1, h5error("creating the bool enum")
	}
	for i, name := range []string{"FALSE", "TRUE"} {
		v := C.schar(i)
		cname := cstring(name)
		r := C.H5Tenum_insert(t, cname, unsafe.Pointer(&v))
		cfree(cname)
		if r < 0 {
			C.H5Tclose(t)
			return -1, h5error("building the bool enum")
		}
	}
	return t, nil
}

// fixedString is a fixed-length NULLPAD ASCII string type of n bytes, as
// h5py stores numpy's S<n>.
func fixedString(n int) (hid, error) {
	t := C.H5Tcopy(C.h5fuel_type(C.H5FUEL_C_S1))
	if t < 0 {
		return -1, h5error("creating a string type")
	}
	if C.H5Tset_size(t, C.size_t(max(n, 1))) < 0 || C.H5Tset_strpad(t, C.H5T_STR_NULLPAD) < 0 {
		C.H5Tclose(t)
		return -1, h5error("sizing a string type")
	}
	return t, nil
}

func (w *Writer) checkNew(name string) error {
	if w.done {
		return w.errorf("the writer is closed")
	}
	if name == "" {
		return w.errorf("a source needs a name")
	}
	if w.sources[name] {
		return w.errorf("source %q is already written", name)
	}
	return nil
}

// CreateSource creates the dataset of a source of fixed shape (shape[0]
// examples), filled with zeros until WriteRows writes its rows, with
// its axis labels (one per axis, "" for none; nil for none at all).
func (w *Writer) CreateSource(name string, dt nd.DType, shape []int, axisLabels []string) error {
	if err := w.checkNew(name); err != nil {
		return err
	}
	if len(shape) == 0 {
		return w.errorf("source %q: a source needs an example axis (shape %v)", name, shape)
	}
	if axisLabels != nil && len(axisLabels) != len(shape) {
		return w.errorf("source %q: %d axis labels %q for %d axes", name, len(axisLabels), axisLabels, len(shape))
	}
	lock()
	defer unlock()
	ft, owned, err := fileType(dt)
	if err != nil {
		return w.wrap(fmt.Sprintf("source %q", name), err)
	}
	if owned {
		defer C.H5Tclose(ft)
	}
	return w.addDataset(fmt.Sprintf("source %q", name), name, ft, shape, axisLabels)
}

// addDataset creates the dataset of a new source, of file type ft and the
// given shape, labels its axes and records the source; what names the
// source in errors. Lock held.
func (w *Writer) addDataset(what, name string, ft hid, shape []int, axisLabels []string) error {
	ds, err := w.createDataset(name, ft, shape)
	if err != nil {
		return w.wrap(what, err)
	}
	defer C.H5Dclose(ds)
	if err := setLabels(ds, axisLabels); err != nil {
		return w.wrap(what, err)
	}
	w.addSource(name)
	return nil
}

// addSource records a source the file now holds.
func (w *Writer) addSource(name string) {
	w.sources[name] = true
	w.order = append(w.order, name)
}

// createDataset creates a contiguous dataset. Lock held.
func (w *Writer) createDataset(name string, ft hid, shape []int) (hid, error) {
	dims := make([]C.hsize_t, len(shape))
	for i, n := range shape {
		if n < 0 {
			return -1, fmt.Errorf("negative dimension in shape %v", shape)
		}
		dims[i] = C.hsize_t(n)
	}
	var space hid
	if len(dims) == 0 {
		space = C.H5Screate(C.H5S_SCALAR)
	} else {
		space = C.H5Screate_simple(C.int(len(dims)), &dims[0], nil)
	}
	if space < 0 {
		return -1, h5error("creating a dataspace")
	}
	defer C.H5Sclose(space)
	cname := cstring(name)
	defer cfree(cname)
	ds := C.H5Dcreate2(w.file, cname, ft, space, C.H5P_DEFAULT, C.H5P_DEFAULT, C.H5P_DEFAULT)
	if ds < 0 {
		return -1, h5error(fmt.Sprintf("creating dataset %q", name))
	}
	return ds, nil
}

// setLabels writes H5DS dimension labels. Lock held.
func setLabels(ds hid, labels []string) error {
	for i, l := range labels {
		if l == "" {
			continue
		}
		cl := cstring(l)
		r := C.H5DSset_label(ds, C.uint(i), cl)
		cfree(cl)
		if r < 0 {
			return h5error(fmt.Sprintf("labelling axis %d %q", i, l))
		}
	}
	return nil
}

// WriteRows writes rows (an array whose trailing shape is the source's)
// into a source created by CreateSource, starting at example start: one
// hyperslab write, so a large file can be written a part at a time.
func (w *Writer) WriteRows(name string, start int, rows *nd.Array) error {
	lock()
	defer unlock()
	ds, shape, err := w.openWritten(name, "CreateSource")
	if err != nil {
		return err
	}
	defer C.H5Dclose(ds)
	et, err := datasetType(ds)
	if err != nil {
		return w.wrap(fmt.Sprintf("source %q", name), err)
	}
	if et.vlen {
		return w.errorf("source %q is variable-length: AddVlenSource writes it", name)
	}
	if rows.DType() != et.dtype {
		return w.errorf("source %q holds %s, the rows are %s", name, et.dtype, rows.DType())
	}
	if len(rows.Shape) != len(shape) || !slices.Equal(rows.Shape[1:], shape[1:]) {
		return w.errorf("source %q has shape %v, the rows have shape %v (want (n, %v))", name, shape, rows.Shape, shape[1:])
	}
	if start < 0 || start+rows.Shape[0] > shape[0] {
		return w.errorf("source %q: rows [%d, %d) past its %d examples", name, start, start+rows.Shape[0], shape[0])
	}
	if rows.Size() == 0 {
		return nil
	}
	var mt hid
	var p unsafe.Pointer
	if b, ok := rows.Data.([]bool); ok {
		bt, err := boolType()
		if err != nil {
			return w.wrap(name, err)
		}
		defer C.H5Tclose(bt)
		buf := make([]int8, len(b))
		for i, v := range b {
			if v {
				buf[i] = 1
			}
		}
		mt, p = bt, unsafe.Pointer(&buf[0])
	} else {
		if mt, err = nativeType(rows.DType()); err != nil {
			return w.wrap(name, err)
		}
		if p, err = dataPointer(rows); err != nil {
			return w.wrap(name, err)
		}
	}
	off := make([]C.hsize_t, len(shape))
	count := make([]C.hsize_t, len(shape))
	for i := range shape {
		count[i] = C.hsize_t(rows.Shape[i])
	}
	off[0] = C.hsize_t(start)
	if err := writeSlab(ds, mt, off, count, p, "rows"); err != nil {
		return w.wrap(name, err)
	}
	return nil
}

// openWritten opens the dataset of source name, which maker (named in the
// error when there is none) made, and reads its shape; the caller closes
// it. Lock held.
func (w *Writer) openWritten(name, maker string) (hid, []int, error) {
	if w.done {
		return -1, nil, w.errorf("the writer is closed")
	}
	if !w.sources[name] {
		return -1, nil, w.errorf("no source %q (%s makes one)", name, maker)
	}
	ds, err := openDataset(w.file, name)
	if err != nil {
		return -1, nil, w.wrap(fmt.Sprintf("source %q", name), err)
	}
	shape, err := datasetShape(ds)
	if err != nil {
		C.H5Dclose(ds)
		return -1, nil, w.wrap(fmt.Sprintf("source %q", name), err)
	}
	return ds, shape, nil
}

// AddSource writes a whole source: data's first axis indexes examples.
func (w *Writer) AddSource(name string, data *nd.Array, axisLabels []string) error {
	if err := w.CreateSource(name, data.DType(), data.Shape, axisLabels); err != nil {
		return err
	}
	return w.WriteRows(name, 0, data)
}

// AddVlenSource writes a variable-length source as Fuel's documented
// recipe does: a 1-D vlen dataset of each example's elements (flattened),
// `<name>_shapes` (int32, one row of each example's shape) attached to
// axis 0 as the dimension scale `shapes`, and `<name>_shape_labels` (the
// labels of the examples' axes) attached as `shape_labels`. axisLabels
// are Fuel's: the batch axis first ("batch"), then one per example axis.
// Every example must have the dtype and number of axes of the first.
func (w *Writer) AddVlenSource(name string, examples []*nd.Array, axisLabels []string) error {
	if err := w.checkNew(name); err != nil {
		return err
	}
	if len(examples) == 0 {
		return w.errorf("vlen source %q: no examples", name)
	}
	dt, ndim := examples[0].DType(), len(examples[0].Shape)
	if dt == nd.Bool || dt == nd.Object {
		return w.errorf("vlen source %q: dtype %s cannot be a vlen element", name, dt)
	}
	for i, e := range examples {
		if e.DType() != dt || len(e.Shape) != ndim {
			return w.errorf("vlen source %q: example %d is %s with %d axes, example 0 %s with %d", name, i, e.DType(), len(e.Shape), dt, ndim)
		}
	}
	if len(axisLabels) != ndim+1 {
		return w.errorf("vlen source %q: %d axis labels %q, want %d (the batch axis, then %d example axes)", name, len(axisLabels), axisLabels, ndim+1, ndim)
	}
	for _, s := range []string{name + "_shapes", name + "_shape_labels"} {
		if w.sources[s] {
			return w.errorf("vlen source %q: a source is already called %q", name, s)
		}
	}
	lock()
	defer unlock()
	if err := w.addVlen(name, dt, examples, axisLabels); err != nil {
		return w.wrap(fmt.Sprintf("vlen source %q", name), err)
	}
	w.addSource(name)
	return nil
}

// addVlen does AddVlenSource's HDF5 work. Lock held.
func (w *Writer) addVlen(name string, dt nd.DType, examples []*nd.Array, labels []string) error {
	ds, err := w.createVlenDataset(name, dt, len(examples))
	if err != nil {
		return err
	}
	defer C.H5Dclose(ds)
	mt, err := vlenMemType(dt)
	if err != nil {
		return err
	}
	defer C.H5Tclose(mt)
	buf, free, err := vlenRows(examples, dt)
	defer free()
	if err != nil {
		return err
	}
	if C.H5Dwrite(ds, mt, C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, buf) < 0 {
		return h5error("writing examples")
	}
	if err := setLabels(ds, labels[:1]); err != nil {
		return err
	}

	// The shapes scale: int32 (n, ndim).
	n := len(examples)
	ndim := len(examples[0].Shape)
	shapes := make([]int32, n*ndim)
	for i, e := range examples {
		for j, s := range e.Shape {
			shapes[i*ndim+j] = int32(s)
		}
	}
	sds, err := w.createDataset(name+"_shapes", C.h5fuel_type(C.H5FUEL_STD_I32LE), []int{n, ndim})
	if err != nil {
		return err
	}
	defer C.H5Dclose(sds)
	if len(shapes) > 0 && C.H5Dwrite(sds, C.h5fuel_type(C.H5FUEL_NATIVE_INT32), C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&shapes[0])) < 0 {
		return h5error("writing shapes")
	}

	lds, err := w.createShapeLabels(name+"_shape_labels", labels[1:])
	if err != nil {
		return err
	}
	defer C.H5Dclose(lds)
	return attachShapeScales(ds, sds, lds)
}

// createVlenDataset creates the 1-D dataset of n variable-length examples
// whose elements are dt. Lock held.
func (w *Writer) createVlenDataset(name string, dt nd.DType, n int) (hid, error) {
	base, _, err := fileType(dt)
	if err != nil {
		return -1, err
	}
	ft := C.H5Tvlen_create(base)
	if ft < 0 {
		return -1, h5error("creating a vlen type")
	}
	defer C.H5Tclose(ft)
	return w.createDataset(name, ft, []int{n})
}

// vlenRows copies the examples' elements into C memory (an hvl_t holds
// pointers): the rows of a vlen write whose memory type is
// vlenMemType(dt). free releases it all, whatever the error.
func vlenRows(examples []*nd.Array, dt nd.DType) (_ unsafe.Pointer, free func(), _ error) {
	n := len(examples)
	buf := (*C.hvl_t)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.hvl_t{}))))
	if buf == nil {
		return nil, func() {}, fmt.Errorf("out of memory")
	}
	vls := unsafe.Slice(buf, n)
	free = func() {
		for _, v := range vls {
			C.free(v.p)
		}
		C.free(unsafe.Pointer(buf))
	}
	for i, e := range examples {
		size := e.Size()
		vls[i].len = C.size_t(size)
		if size == 0 {
			continue
		}
		vls[i].p = C.malloc(C.size_t(size * dt.Size()))
		if vls[i].p == nil {
			return nil, free, fmt.Errorf("out of memory")
		}
		p, err := dataPointer(e)
		if err != nil {
			return nil, free, err
		}
		C.memcpy(vls[i].p, p, C.size_t(size*dt.Size()))
	}
	return unsafe.Pointer(buf), free, nil
}

// createShapeLabels creates and writes a vlen source's shape_labels
// scale, S<longest label> (len(labels),): the labels of its examples'
// axes. The caller closes it. Lock held.
func (w *Writer) createShapeLabels(name string, labels []string) (hid, error) {
	width := 1
	for _, l := range labels {
		width = max(width, len(l))
	}
	st, err := fixedString(width)
	if err != nil {
		return -1, err
	}
	defer C.H5Tclose(st)
	ndim := len(labels)
	lds, err := w.createDataset(name, st, []int{ndim})
	if err != nil {
		return -1, err
	}
	if ndim > 0 {
		lb := make([]byte, ndim*width)
		for j, l := range labels {
			copy(lb[j*width:], l)
		}
		if C.H5Dwrite(lds, st, C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&lb[0])) < 0 {
			C.H5Dclose(lds)
			return -1, h5error("writing shape labels")
		}
	}
	return lds, nil
}

// AddSplit declares a split. Splits are written in the order added, each
// with one row per source (sorted by name), as Fuel's create_split_array.
func (w *Writer) AddSplit(s SplitDef) error {
	if w.done {
		return w.errorf("the writer is closed")
	}
	if s.Name == "" {
		return w.errorf("a split needs a name")
	}
	for _, o := range w.splits {
		if o.Name == s.Name {
			return w.errorf("split %q is declared twice", s.Name)
		}
	}
	if s.Indices != nil {
		if len(s.Indices) == 0 {
			return w.errorf("split %q: an empty index list", s.Name)
		}
		for i := 1; i < len(s.Indices); i++ {
			if s.Indices[i] <= s.Indices[i-1] {
				return w.errorf("split %q: indices must be strictly increasing (Fuel sorts and de-duplicates them), got %v", s.Name, s.Indices)
			}
		}
		if s.Indices[0] < 0 {
			return w.errorf("split %q: negative index %d", s.Name, s.Indices[0])
		}
	} else if s.Start < 0 || s.Stop < s.Start {
		return w.errorf("split %q: bad range [%d, %d)", s.Name, s.Start, s.Stop)
	}
	for src, r := range s.Ranges {
		if r[0] < 0 || r[1] < r[0] {
			return w.errorf("split %q: bad range [%d, %d) for source %q", s.Name, r[0], r[1], src)
		}
	}
	s.Indices = slices.Clone(s.Indices)
	s.Sources = slices.Clone(s.Sources)
	s.Comments = maps.Clone(s.Comments)
	if s.Ranges != nil {
		r := make(map[string][2]int, len(s.Ranges))
		for k, v := range s.Ranges {
			r[k] = v
		}
		s.Ranges = r
	}
	w.splits = append(w.splits, s)
	return nil
}

// SetAttribute sets a string attribute of the root group, stored as h5py
// stores Python bytes (a fixed-length string scalar); fuel-convert writes
// h5py_interface_version, fuel_convert_version and fuel_convert_command.
func (w *Writer) SetAttribute(name, value string) error {
	if w.done {
		return w.errorf("the writer is closed")
	}
	if name == "split" {
		return w.errorf("the split attribute is written from AddSplit")
	}
	for i, a := range w.attrs {
		if a[0] == name {
			w.attrs[i][1] = value
			return nil
		}
	}
	w.attrs = append(w.attrs, [2]string{name, value})
	return nil
}

// Abort gives up the file: nothing is left at the path, nor the temporary
// file.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	lock()
	C.H5Fclose(w.file)
	unlock()
	os.Remove(w.tmp)
}

// Close writes the split attribute and the attributes, closes the file
// and moves it to its path. On error the file is removed.
func (w *Writer) Close() error {
	if w.done {
		return w.errorf("the writer is already closed")
	}
	if err := w.flushAllVlen(); err != nil {
		w.Abort()
		return err
	}
	if err := w.finish(); err != nil {
		w.Abort()
		return err
	}
	w.done = true
	lock()
	r := C.H5Fclose(w.file)
	var err error
	if r < 0 {
		err = h5error("closing the file")
	}
	unlock()
	if err != nil {
		os.Remove(w.tmp)
		return w.wrap("closing", err)
	}
	// os.CreateTemp made the file 0600; a dataset is as readable as any
	// file h5py creates (0666 less the usual umask).
	if err := os.Chmod(w.tmp, 0o644); err != nil {
		os.Remove(w.tmp)
		return fmt.Errorf("h5: writing %s: %w", w.path, err)
	}
	if err := os.Rename(w.tmp, w.path); err != nil {
		os.Remove(w.tmp)
		return fmt.Errorf("h5: writing %s: %w", w.path, err)
	}
	return nil
}

// finish writes the split attribute and the string attributes.
func (w *Writer) finish() error {
	if len(w.order) == 0 {
		return w.errorf("no source written")
	}
	if len(w.splits) == 0 {
		return w.errorf("no split declared (AddSplit)")
	}
	lock()
	defer unlock()
	sources := slices.Sorted(slices.Values(w.order))
	// Index datasets, and the checks every split must pass.
	refs := make([]C.hobj_ref_t, len(w.splits))
	for k, s := range w.splits {
		for _, src := range s.Sources {
			if !w.sources[src] {
				return w.errorf("split %q: no source %q in the file (sources: %v)", s.Name, src, sources)
			}
		}
		for src := range s.Ranges {
			if !w.sources[src] {
				return w.errorf("split %q: no source %q in the file (sources: %v)", s.Name, src, sources)
			}
		}
		for _, src := range sources {
			_, stop, ok := s.provides(src)
			if !ok {
				continue
			}
			ds, err := openDataset(w.file, src)
			if err != nil {
				return w.wrap("split "+s.Name, err)
			}
			shape, err := datasetShape(ds)
			C.H5Dclose(ds)
			if err != nil {
				return w.wrap("split "+s.Name, err)
			}
			last := stop
			if s.Indices != nil {
				last = s.Indices[len(s.Indices)-1] + 1
			}
			if last > shape[0] {
				return w.errorf("split %q reaches example %d of source %q, which has %d", s.Name, last-1, src, shape[0])
			}
		}
		if s.Indices == nil {
			continue
		}
		iname := s.Name + "_indices"
		if w.sources[iname] {
			return w.errorf("split %q: its index dataset %q would replace a source", s.Name, iname)
		}
		ds, err := w.createDataset(iname, C.h5fuel_type(C.H5FUEL_STD_I64LE), []int{len(s.Indices)})
		if err != nil {
			return w.wrap("split "+s.Name, err)
		}
		idx := make([]int64, len(s.Indices))
		for i, v := range s.Indices {
			idx[i] = int64(v)
		}
		r := C.H5Dwrite(ds, C.h5fuel_type(C.H5FUEL_NATIVE_INT64), C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&idx[0]))
		C.H5Dclose(ds)
		if r < 0 {
			return w.wrap("split "+s.Name, h5error("writing indices"))
		}
		cn := cstring("/" + iname)
		r = C.h5fuel_ref_create(&refs[k], w.file, cn)
		cfree(cn)
		if r < 0 {
			return w.wrap("split "+s.Name, h5error("referencing the indices"))
		}
	}
	if err := w.writeSplit(sources, refs); err != nil {
		return w.wrap("the split attribute", err)
	}
	for _, a := range w.attrs {
		if err := writeStringAttr(w.file, a[0], a[1]); err != nil {
			return w.wrap("attribute "+a[0], err)
		}
	}
	if n := C.H5Fget_obj_count(w.file, C.H5F_OBJ_ALL); n != 1 {
		return w.errorf("%d HDF5 objects still open in the file (it would not be flushed)", n-1)
	}
	return nil
}

// writeSplit writes the split attribute: a packed compound, as numpy
// packs create_split_array's dtype. Lock held.
func (w *Writer) writeSplit(sources []string, refs []C.hobj_ref_t) error {
	splitLen, sourceLen, commentLen := 1, 1, 1
	for _, s := range w.splits {
		splitLen = max(splitLen, len(s.Name))
		commentLen = max(commentLen, len(s.Comment))
		for _, c := range s.Comments {
			commentLen = max(commentLen, len(c))
		}
		if !utf8.ValidString(s.Name) || !utf8.ValidString(s.Comment) {
			return fmt.Errorf("split %q: names and comments must be UTF-8", s.Name)
		}
	}
	for _, s := range sources {
		sourceLen = max(sourceLen, len(s))
	}
	offStart := splitLen + sourceLen
	offRef := offStart + 16
	offAvail := offRef + int(unsafe.Sizeof(C.hobj_ref_t(0)))
	offComment := offAvail + 1
	size := offComment + commentLen

	ct := C.H5Tcreate(C.H5T_COMPOUND, C.size_t(size))
	if ct < 0 {
		return h5error("creating the compound type")
	}
	defer C.H5Tclose(ct)
	var owned []hid
	defer func() {
		for _, t := range owned {
			C.H5Tclose(t)
		}
	}()
	splitT, err := fixedString(splitLen)
	if err != nil {
		return err
	}
	owned = append(owned, splitT)
	sourceT, err := fixedString(sourceLen)
	if err != nil {
		return err
	}
	owned = append(owned, sourceT)
	commentT, err := fixedString(commentLen)
	if err != nil {
		return err
	}
	owned = append(owned, commentT)
	boolT, err := boolType()
	if err != nil {
		return err
	}
	owned = append(owned, boolT)
	i64 := C.h5fuel_type(C.H5FUEL_STD_I64LE)
	for _, m := range []struct {
		name string
		off  int
		t    hid
	}{
		{"split", 0, splitT}, {"source", splitLen, sourceT},
		{"start", offStart, i64}, {"stop", offStart + 8, i64},
		{"indices", offRef, C.h5fuel_type(C.H5FUEL_STD_REF_OBJ)},
		{"available", offAvail, boolT}, {"comment", offComment, commentT},
	} {
		cn := cstring(m.name)
		r := C.H5Tinsert(ct, cn, C.size_t(m.off), m.t)
		cfree(cn)
		if r < 0 {
			return h5error("building the compound type")
		}
	}
	n := len(w.splits) * len(sources)
	buf := make([]byte, n*size)
	i := 0
	for k, s := range w.splits {
		for _, src := range sources {
			row := buf[i*size : (i+1)*size]
			i++
			copy(row, s.Name)
			copy(row[splitLen:], src)
			start, stop, ok := s.provides(src)
			if !ok {
				row[offComment] = '.'
				continue
			}
			if s.Indices != nil {
				// Fuel's recipe keeps start/stop alongside the reference;
				// readers use the reference.
				start, stop = 0, 0
				C.memcpy(unsafe.Pointer(&row[offRef]), unsafe.Pointer(&refs[k]), C.size_t(unsafe.Sizeof(refs[k])))
			}
			putInt64(row[offStart:], int64(start))
			putInt64(row[offStart+8:], int64(stop))
			row[offAvail] = 1
			comment := s.Comment
			if c, ok := s.Comments[src]; ok {
				comment = c
			}
			if comment == "" {
				comment = "."
			}
			copy(row[offComment:], comment)
		}
	}
	dim := C.hsize_t(n)
	space := C.H5Screate_simple(1, &dim, nil)
	if space < 0 {
		return h5error("creating a dataspace")
	}
	defer C.H5Sclose(space)
	cn := cstring("split")
	defer cfree(cn)
	attr := C.H5Acreate2(w.file, cn, ct, space, C.H5P_DEFAULT, C.H5P_DEFAULT)
	if attr < 0 {
		return h5error("creating the attribute")
	}
	defer C.H5Aclose(attr)
	if C.H5Awrite(attr, ct, unsafe.Pointer(&buf[0])) < 0 {
		return h5error("writing the attribute")
	}
	return nil
}

// putInt64 stores v little-endian (the compound's start/stop are I64LE).
func putInt64(b []byte, v int64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// writeStringAttr writes a fixed-length string scalar attribute. Lock
// held.
func writeStringAttr(loc hid, name, value string) error {
	st, err := fixedString(len(value))
	if err != nil {
		return err
	}
	defer C.H5Tclose(st)
	space := C.H5Screate(C.H5S_SCALAR)
	if space < 0 {
		return h5error("creating a dataspace")
	}
	defer C.H5Sclose(space)
	cn := cstring(name)
	defer cfree(cn)
	if ok, err := attrExists(loc, name); err != nil {
		return err
	} else if ok {
		C.H5Adelete(loc, cn)
	}
	attr := C.H5Acreate2(loc, cn, st, space, C.H5P_DEFAULT, C.H5P_DEFAULT)
	if attr < 0 {
		return h5error("creating the attribute")
	}
	defer C.H5Aclose(attr)
	buf := make([]byte, max(len(value), 1))
	copy(buf, value)
	if C.H5Awrite(attr, st, unsafe.Pointer(&buf[0])) < 0 {
		return h5error("writing the attribute")
	}
	return nil
}

// attachShapeScales makes sds and lds the "shapes" and "shape_labels"
// dimension scales of a variable-length source's dataset ds, as Fuel's
// files have them.
func attachShapeScales(ds, sds, lds hid) error {
	for _, sc := range []struct {
		id   hid
		name string
	}{{sds, "shapes"}, {lds, "shape_labels"}} {
		cn := cstring(sc.name)
		r := C.H5DSset_scale(sc.id, cn)
		cfree(cn)
		if r < 0 {
			return h5error(fmt.Sprintf("making %s a dimension scale", sc.name))
		}
		if C.H5DSattach_scale(ds, sc.id, 0) < 0 {
			return h5error(fmt.Sprintf("attaching the %s scale", sc.name))
		}
	}
	return nil
}
