//go:build cgo

package h5

// #include <stdlib.h>
// #include <string.h>
// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// CreateStringSource creates a source of fixed-length byte strings of
// width bytes (numpy's S<width>, as h5py stores it: a NULLPAD C string
// type) and of the given shape (shape[0] examples), empty strings until
// WriteStringRows writes its rows. Fuel's ILSVRC converters store image
// file names so (`filenames`, S32, shape (n, 1)).
func (w *Writer) CreateStringSource(name string, width int, shape []int, axisLabels []string) error {
	if err := w.checkNew(name); err != nil {
		return err
	}
	if width < 1 {
		return w.errorf("string source %q: width %d (want at least 1 byte)", name, width)
	}
	if len(shape) == 0 {
		return w.errorf("string source %q: a source needs an example axis (shape %v)", name, shape)
	}
	if axisLabels != nil && len(axisLabels) != len(shape) {
		return w.errorf("string source %q: %d axis labels %q for %d axes", name, len(axisLabels), axisLabels, len(shape))
	}
	lock()
	defer unlock()
	st, err := fixedString(width)
	if err != nil {
		return w.wrap(fmt.Sprintf("string source %q", name), err)
	}
	defer C.H5Tclose(st)
	return w.addDataset(fmt.Sprintf("string source %q", name), name, st, shape, axisLabels)
}

// WriteStringRows writes values, the rows of a string source made by
// CreateStringSource flattened in C order, starting at example start.
// A value longer than the source's width is an error (numpy would cut it
// short silently; a truncated file name is a wrong file name).
func (w *Writer) WriteStringRows(name string, start int, values []string) error {
	lock()
	defer unlock()
	ds, shape, err := w.openWritten(name, "CreateStringSource")
	if err != nil {
		return err
	}
	defer C.H5Dclose(ds)
	ft := C.H5Dget_type(ds)
	if ft < 0 {
		return w.wrap(name, h5error("getting a dataset's type"))
	}
	defer C.H5Tclose(ft)
	if C.H5Tget_class(ft) != C.H5T_STRING || C.H5Tis_variable_str(ft) > 0 {
		return w.errorf("source %q does not hold fixed-length strings", name)
	}
	width := int(C.H5Tget_size(ft))
	row := 1
	for _, n := range shape[1:] {
		row *= n
	}
	if row == 0 || len(values)%row != 0 {
		return w.errorf("string source %q has shape %v: %d values are not whole rows", name, shape, len(values))
	}
	n := len(values) / row
	if start < 0 || start+n > shape[0] {
		return w.errorf("string source %q: rows [%d, %d) past its %d examples", name, start, start+n, shape[0])
	}
	if n == 0 {
		return nil
	}
	buf := make([]byte, len(values)*width)
	for i, v := range values {
		if len(v) > width {
			return w.errorf("string source %q: %q is %d bytes, longer than the source's %d", name, v, len(v), width)
		}
		copy(buf[i*width:], v)
	}
	off := make([]C.hsize_t, len(shape))
	count := make([]C.hsize_t, len(shape))
	off[0], count[0] = C.hsize_t(start), C.hsize_t(n)
	for i := 1; i < len(shape); i++ {
		count[i] = C.hsize_t(shape[i])
	}
	if err := writeSlab(ds, ft, off, count, unsafe.Pointer(&buf[0]), "a row"); err != nil {
		return w.wrap(fmt.Sprintf("string source %q", name), err)
	}
	return nil
}

// ReadStringSource reads a whole dataset of fixed-length byte strings
// (numpy's S<n>, as Fuel's ILSVRC converters write `filenames`) from the
// HDF5 file at path: its values flattened in C order, NUL padding
// removed, and its shape, whether or not the file is in Fuel's format.
// H5PYDataset reads a string source of a Fuel file too, as nd.ByteStr.
func ReadStringSource(path, name string) (values []string, shape []int, err error) {
	lock()
	defer unlock()
	f, err := openFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("h5: %s: %w", path, err)
	}
	defer C.H5Fclose(f)
	ds, err := openDataset(f, name)
	if err != nil {
		return nil, nil, fmt.Errorf("h5: %s: %w", path, err)
	}
	defer C.H5Dclose(ds)
	shape, err = datasetShape(ds)
	if err != nil {
		return nil, nil, fmt.Errorf("h5: %s: dataset %q: %w", path, name, err)
	}
	ft := C.H5Dget_type(ds)
	if ft < 0 {
		return nil, nil, fmt.Errorf("h5: %s: dataset %q: %w", path, name, h5error("getting a dataset's type"))
	}
	defer C.H5Tclose(ft)
	if C.H5Tget_class(ft) != C.H5T_STRING || C.H5Tis_variable_str(ft) > 0 {
		return nil, nil, fmt.Errorf("h5: %s: dataset %q does not hold fixed-length strings", path, name)
	}
	size := int(C.H5Tget_size(ft))
	n := 1
	for _, d := range shape {
		n *= d
	}
	if size <= 0 || (n > 0 && size > (1<<31)/n) {
		return nil, nil, fmt.Errorf("h5: %s: dataset %q: %d strings of %d bytes is too large", path, name, n, size)
	}
	if n == 0 {
		return []string{}, shape, nil
	}
	mt := C.H5Tcopy(ft)
	if mt < 0 {
		return nil, nil, fmt.Errorf("h5: %s: %w", path, h5error("copying a string type"))
	}
	defer C.H5Tclose(mt)
	buf := make([]byte, n*size)
	if C.H5Dread(ds, mt, C.H5S_ALL, C.H5S_ALL, C.H5P_DEFAULT, unsafe.Pointer(&buf[0])) < 0 {
		return nil, nil, fmt.Errorf("h5: %s: dataset %q: %w", path, name, h5error("reading strings"))
	}
	values, err = fixedStrings(buf, size, n)
	if err != nil {
		return nil, nil, fmt.Errorf("h5: %s: dataset %q: %w", path, name, err)
	}
	return values, shape, nil
}
