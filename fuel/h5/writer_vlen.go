//go:build cgo

package h5

// #include <stdlib.h>
// #include <string.h>
// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/blocks-go/blocks/nd"
)

// CreateVlenSource creates a variable-length source of n examples whose
// elements are dt, to be written one example at a time by
// WriteVlenExample (a converter of a large dataset never holds it whole).
// axisLabels are Fuel's: "batch", then one label per example axis. Until
// written, an example is empty with shape zeros.
func (w *Writer) CreateVlenSource(name string, dt nd.DType, n int, axisLabels []string, layout VlenLayout) error {
	if err := w.checkNew(name); err != nil {
		return err
	}
	if dt == nd.Bool || dt == nd.Object {
		return w.errorf("vlen source %q: dtype %s cannot be a vlen element", name, dt)
	}
	if n < 0 {
		return w.errorf("vlen source %q: %d examples", name, n)
	}
	if layout.Flat {
		return w.createFlatVlen(name, dt, n, axisLabels)
	}
	if len(axisLabels) < 2 {
		return w.errorf("vlen source %q: axis labels %q: want the batch axis, then one per example axis", name, axisLabels)
	}
	sdt := layout.ShapesDType
	if sdt == 0 {
		sdt = nd.Int32
	}
	if sdt != nd.Int32 && sdt != nd.Uint16 {
		return w.errorf("vlen source %q: shapes dtype %s (want int32 or uint16)", name, sdt)
	}
	lname := layout.LabelsName
	if lname == "" {
		lname = name + "_shape_labels"
	}
	for _, s := range []string{name + "_shapes", lname} {
		if w.sources[s] {
			return w.errorf("vlen source %q: a source is already called %q", name, s)
		}
	}
	lock()
	defer unlock()
	if err := w.createVlen(name, dt, n, axisLabels, sdt, lname); err != nil {
		return w.wrap(fmt.Sprintf("vlen source %q", name), err)
	}
	w.addSource(name)
	if w.vlenRank == nil {
		w.vlenRank = map[string]int{}
	}
	w.vlenRank[name] = len(axisLabels) - 1
	return nil
}

// createFlatVlen is CreateVlenSource for layout.Flat.
func (w *Writer) createFlatVlen(name string, dt nd.DType, n int, axisLabels []string) error {
	if len(axisLabels) > 1 {
		return w.errorf("flat vlen source %q: axis labels %q: want at most the batch axis's", name, axisLabels)
	}
	lock()
	defer unlock()
	ds, err := w.createVlenDataset(name, dt, n)
	if err != nil {
		return w.wrap(fmt.Sprintf("vlen source %q", name), err)
	}
	defer C.H5Dclose(ds)
	if err := setLabels(ds, axisLabels); err != nil {
		return w.wrap(fmt.Sprintf("vlen source %q", name), err)
	}
	w.addSource(name)
	if w.vlenRank == nil {
		w.vlenRank = map[string]int{}
	}
	if w.vlenFlat == nil {
		w.vlenFlat = map[string]bool{}
	}
	w.vlenRank[name] = 1
	w.vlenFlat[name] = true
	return nil
}

// createVlen does CreateVlenSource's HDF5 work. Lock held.
func (w *Writer) createVlen(name string, dt nd.DType, n int, labels []string, sdt nd.DType, lname string) error {
	ds, err := w.createVlenDataset(name, dt, n)
	if err != nil {
		return err
	}
	defer C.H5Dclose(ds)
	if err := setLabels(ds, labels[:1]); err != nil {
		return err
	}
	ndim := len(labels) - 1
	sft, _, err := fileType(sdt)
	if err != nil {
		return err
	}
	sds, err := w.createDataset(name+"_shapes", sft, []int{n, ndim})
	if err != nil {
		return err
	}
	defer C.H5Dclose(sds)
	lds, err := w.createShapeLabels(lname, labels[1:])
	if err != nil {
		return err
	}
	defer C.H5Dclose(lds)
	return attachShapeScales(ds, sds, lds)
}

// WriteVlenExample writes example i of a source made by
// CreateVlenSource: its elements (flattened, converted to the source's
// dtype by HDF5) and its shape. Consecutive examples are buffered and
// written together (one HDF5 write per few thousand examples); Close
// writes what is left. The writer keeps example until then: do not
// modify it after the call.
func (w *Writer) WriteVlenExample(name string, i int, example *nd.Array) error {
	if w.done {
		return w.errorf("the writer is closed")
	}
	rank, ok := w.vlenRank[name]
	if !ok {
		return w.errorf("no variable-length source %q (CreateVlenSource makes one)", name)
	}
	if len(example.Shape) != rank {
		return w.errorf("vlen source %q: an example of shape %v, want %d axes", name, example.Shape, rank)
	}
	if _, err := nativeType(example.DType()); err != nil {
		return w.errorf("vlen source %q: an example of dtype %s", name, example.DType())
	}
	if w.vlenBuf == nil {
		w.vlenBuf = map[string]*vlenRun{}
	}
	b := w.vlenBuf[name]
	if b != nil && (i != b.start+len(b.examples) || example.DType() != b.examples[0].DType()) {
		if err := w.flushVlen(name); err != nil {
			return err
		}
		b = nil
	}
	if b == nil {
		b = &vlenRun{start: i}
		w.vlenBuf[name] = b
	}
	b.examples = append(b.examples, example)
	b.bytes += example.Size() * example.DType().Size()
	if len(b.examples) >= 4096 || b.bytes >= 64<<20 {
		return w.flushVlen(name)
	}
	return nil
}

// vlenRun is a run of consecutive examples of a vlen source not yet
// written.
type vlenRun struct {
	start    int
	examples []*nd.Array
	bytes    int
}

// flushVlen writes the buffered examples of a vlen source.
func (w *Writer) flushVlen(name string) error {
	b := w.vlenBuf[name]
	delete(w.vlenBuf, name)
	if b == nil || len(b.examples) == 0 {
		return nil
	}
	lock()
	defer unlock()
	if err := w.writeVlenRun(name, b); err != nil {
		return w.wrap(fmt.Sprintf("vlen source %q, examples [%d, %d)", name, b.start, b.start+len(b.examples)), err)
	}
	return nil
}

// flushAllVlen writes every buffered run (Close calls it).
func (w *Writer) flushAllVlen() error {
	for _, name := range w.order {
		if err := w.flushVlen(name); err != nil {
			return err
		}
	}
	return nil
}

// writeVlenRun does flushVlen's HDF5 work. Lock held.
func (w *Writer) writeVlenRun(name string, b *vlenRun) error {
	ds, err := openDataset(w.file, name)
	if err != nil {
		return err
	}
	defer C.H5Dclose(ds)
	shape, err := datasetShape(ds)
	if err != nil {
		return err
	}
	n := len(b.examples)
	if b.start < 0 || b.start+n > shape[0] {
		return fmt.Errorf("examples past the source's %d", shape[0])
	}
	dt := b.examples[0].DType()
	mt, err := vlenMemType(dt)
	if err != nil {
		return err
	}
	defer C.H5Tclose(mt)
	buf, free, err := vlenRows(b.examples, dt)
	defer free()
	if err != nil {
		return err
	}
	if err := writeSlab(ds, mt, []C.hsize_t{C.hsize_t(b.start)}, []C.hsize_t{C.hsize_t(n)}, buf, "a row"); err != nil {
		return err
	}
	rank := w.vlenRank[name]
	if rank == 0 || w.vlenFlat[name] {
		return nil
	}
	sds, err := openDataset(w.file, name+"_shapes")
	if err != nil {
		return err
	}
	defer C.H5Dclose(sds)
	rows := make([]int64, 0, n*rank)
	for _, e := range b.examples {
		for _, s := range e.Shape {
			rows = append(rows, int64(s))
		}
	}
	return writeSlab(sds, C.h5fuel_type(C.H5FUEL_NATIVE_INT64), []C.hsize_t{C.hsize_t(b.start), 0},
		[]C.hsize_t{C.hsize_t(n), C.hsize_t(rank)}, unsafe.Pointer(&rows[0]), "a row")
}

// writeSlab writes buf (memory type mt) into the hyperslab off/count of
// ds; what ("rows", "a row") names what is written in errors. Lock held.
func writeSlab(ds, mt hid, off, count []C.hsize_t, buf unsafe.Pointer, what string) error {
	fspace := C.H5Dget_space(ds)
	if fspace < 0 {
		return h5error("getting a dataspace")
	}
	defer C.H5Sclose(fspace)
	if C.H5Sselect_hyperslab(fspace, C.H5S_SELECT_SET, &off[0], nil, &count[0], nil) < 0 {
		return h5error("selecting " + what)
	}
	mspace := C.H5Screate_simple(C.int(len(count)), &count[0], nil)
	if mspace < 0 {
		return h5error("creating a dataspace")
	}
	defer C.H5Sclose(mspace)
	if C.H5Dwrite(ds, mt, mspace, fspace, C.H5P_DEFAULT, buf) < 0 {
		return h5error("writing " + what)
	}
	return nil
}
