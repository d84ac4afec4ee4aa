//go:build cgo

package h5

// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/blocks-go/blocks/nd"
)

// Fill does what Fuel's fuel.converters.base.fill_hdf5_file does: each
// source is the concatenation, in data order, of its arrays (which must
// agree in dtype and trailing shape), and each split covers its part of
// every source it has; the sources of a split must have equal lengths.
// axisLabels gives the sources' labels (as the converters set
// dims[i].label afterwards). Fuel orders the split rows by a Python set
// (so by string hash, which varies between runs); here splits come in
// sorted order, which is what Fuel's own mnist.hdf5 shows (test, train).
func (w *Writer) Fill(data []SplitData, axisLabels map[string][]string) error {
	var sources, splits []string
	for _, d := range data {
		if !slices.Contains(sources, d.Source) {
			sources = append(sources, d.Source)
		}
		if !slices.Contains(splits, d.Split) {
			splits = append(splits, d.Split)
		}
	}
	for _, split := range splits {
		n := -1
		for _, d := range data {
			if d.Split != split {
				continue
			}
			if d.rows() < 0 {
				return w.errorf("split %q, source %q: a 0-d array has no examples", split, d.Source)
			}
			if n >= 0 && d.rows() != n {
				return w.errorf("split '%s' has sources that vary in length", split)
			}
			n = d.rows()
		}
	}
	ranges := map[string]map[string][2]int{}
	comments := map[string]map[string]string{}
	for _, src := range sources {
		var parts []*nd.Array
		var owners []SplitData
		var vlen []*nd.Array
		for _, d := range data {
			if d.Source == src {
				parts = append(parts, d.Data)
				owners = append(owners, d)
				vlen = append(vlen, d.Examples...)
			}
		}
		if owners[0].Data == nil {
			// A variable-length source.
			off := 0
			for _, o := range owners {
				if o.Data != nil {
					return w.errorf("source '%s' is variable-length in one split, not in another", src)
				}
				if ranges[o.Split] == nil {
					ranges[o.Split] = map[string][2]int{}
				}
				ranges[o.Split][src] = [2]int{off, off + len(o.Examples)}
				if o.Comment != "" {
					if comments[o.Split] == nil {
						comments[o.Split] = map[string]string{}
					}
					comments[o.Split][src] = o.Comment
				}
				off += len(o.Examples)
			}
			if err := w.AddVlenSource(src, vlen, axisLabels[src]); err != nil {
				return err
			}
			continue
		}
		for _, o := range owners {
			if o.Data == nil {
				return w.errorf("source '%s' is variable-length in one split, not in another", src)
			}
		}
		for _, p := range parts[1:] {
			if p.DType() != parts[0].DType() {
				return w.errorf("source '%s' has splits that vary in dtype", src)
			}
			if !slices.Equal(p.Shape[1:], parts[0].Shape[1:]) {
				return w.errorf("source '%s' has splits that vary in shapes", src)
			}
		}
		total := 0
		for _, p := range parts {
			total += p.Shape[0]
		}
		shape := append([]int{total}, parts[0].Shape[1:]...)
		if err := w.CreateSource(src, parts[0].DType(), shape, axisLabels[src]); err != nil {
			return err
		}
		off := 0
		for k, p := range parts {
			if err := w.WriteRows(src, off, p); err != nil {
				return err
			}
			o := owners[k]
			if ranges[o.Split] == nil {
				ranges[o.Split] = map[string][2]int{}
			}
			ranges[o.Split][src] = [2]int{off, off + p.Shape[0]}
			if o.Comment != "" {
				if comments[o.Split] == nil {
					comments[o.Split] = map[string]string{}
				}
				comments[o.Split][src] = o.Comment
			}
			off += p.Shape[0]
		}
	}
	slices.Sort(splits)
	for _, split := range splits {
		if err := w.AddSplit(SplitDef{Name: split, Ranges: ranges[split], Comments: comments[split]}); err != nil {
			return err
		}
	}
	return nil
}

// Describe reads what a Fuel HDF5 file holds without reading its data.
func Describe(path string) (*FileInfo, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	split, err := ReadSplit(path)
	if err != nil {
		return nil, err
	}
	info := &FileInfo{Path: path, Split: split, Attributes: map[string]string{}}
	lock()
	defer unlock()
	f, err := openFile(path)
	if err != nil {
		return nil, fmt.Errorf("h5: %s: %w", path, err)
	}
	defer C.H5Fclose(f)
	for _, name := range split.Sources() {
		si, err := describeSource(f, name)
		if err != nil {
			return nil, fmt.Errorf("h5: %s: source %q: %w", path, name, err)
		}
		info.Sources = append(info.Sources, si)
	}
	if info.Attributes, err = stringAttributes(f); err != nil {
		return nil, fmt.Errorf("h5: %s: %w", path, err)
	}
	return info, nil
}

// describeSource fills a SourceInfo. Lock held.
func describeSource(f hid, name string) (SourceInfo, error) {
	labels, vlen, err := sourceLabels(f, name)
	if err != nil {
		return SourceInfo{}, err
	}
	ds, err := openDataset(f, name)
	if err != nil {
		return SourceInfo{}, err
	}
	defer C.H5Dclose(ds)
	shape, err := datasetShape(ds)
	if err != nil {
		return SourceInfo{}, err
	}
	et, err := datasetType(ds)
	if err != nil {
		return SourceInfo{}, err
	}
	dt := et.name
	if et.ok {
		dt = et.dtype.String()
	}
	return SourceInfo{Name: name, DType: dt, Shape: shape, Vlen: vlen, AxisLabels: labels}, nil
}

// stringAttributes reads the root group's attributes other than split:
// strings as they are, other types described. Lock held.
func stringAttributes(f hid) (map[string]string, error) {
	out := map[string]string{}
	n := int(C.h5fuel_num_attrs(f))
	if n < 0 {
		return nil, h5error("counting attributes")
	}
	dot := cstring(".")
	defer cfree(dot)
	for i := 0; i < n; i++ {
		attr := C.H5Aopen_by_idx(f, dot, C.H5_INDEX_NAME, C.H5_ITER_INC, C.hsize_t(i), C.H5P_DEFAULT, C.H5P_DEFAULT)
		if attr < 0 {
			return nil, h5error("opening an attribute")
		}
		name, value, err := readAttr(attr)
		C.H5Aclose(attr)
		if err != nil {
			return nil, err
		}
		if name != "split" {
			out[name] = value
		}
	}
	return out, nil
}

// readAttr returns an attribute's name and, for a string scalar, its
// value (else a description of its type). Lock held.
func readAttr(attr hid) (string, string, error) {
	n := C.H5Aget_name(attr, 0, nil)
	if n < 0 {
		return "", "", h5error("reading an attribute's name")
	}
	buf := make([]C.char, n+1)
	C.H5Aget_name(attr, C.size_t(len(buf)), &buf[0])
	name := C.GoString(&buf[0])
	t := C.H5Aget_type(attr)
	if t < 0 {
		return "", "", h5error("reading an attribute's type")
	}
	defer C.H5Tclose(t)
	space := C.H5Aget_space(attr)
	if space < 0 {
		return "", "", h5error("reading an attribute's dataspace")
	}
	defer C.H5Sclose(space)
	if C.H5Tget_class(t) != C.H5T_STRING || C.H5Sget_simple_extent_npoints(space) != 1 {
		et, err := classifyType(t)
		if err != nil {
			return name, "", err
		}
		return name, fmt.Sprintf("<%s attribute, %d elements>", et.name, int(C.H5Sget_simple_extent_npoints(space))), nil
	}
	if C.H5Tis_variable_str(t) > 0 {
		var p *C.char
		if C.H5Aread(attr, t, unsafe.Pointer(&p)) < 0 {
			return name, "", h5error("reading attribute " + name)
		}
		v := C.GoString(p)
		C.H5free_memory(unsafe.Pointer(p))
		return name, v, nil
	}
	size := int(C.H5Tget_size(t))
	b := make([]byte, max(size, 1))
	if C.H5Aread(attr, t, unsafe.Pointer(&b[0])) < 0 {
		return name, "", h5error("reading attribute " + name)
	}
	return name, trimNul(b[:size]), nil
}
