//go:build cgo

package h5

// #include "shim.h"
import "C"

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// H5PYDataset is Fuel's fuel.datasets.hdf5.H5PYDataset: the examples of
// some splits of a file in Fuel's HDF5 format. It implements
// fuel.IndexableDataset and is safe for concurrent use.
type H5PYDataset struct {
	path       string
	whichSets  []string
	opts       Options
	split      Split
	provides   []string
	sources    []string
	vlen       []string
	axisLabels map[string][]string
	numEx      int
	srcs       []*source
	file       hid // the open file when reading from it, else -1
	// opened is the file's size and modification time when it was
	// opened: reading out of core checks that they have not changed.
	opened fileStamp
	// rawFile is the file opened for direct reads (direct.go), nil when
	// no source allows them.
	rawFile *os.File

	mu     sync.RWMutex // guards closed and the sources' data
	closed bool
}

var _ fuel.IndexableDataset = (*H5PYDataset)(nil)

// source is one source the dataset returns.
type source struct {
	name  string
	shape []int // the whole dataset's shape
	dtype nd.DType
	rows  indexSet  // the rows of the dataset this H5PYDataset uses
	ds    hid       // the open dataset when reading from the file, else -1
	data  *nd.Array // the rows, loaded, with LoadInMemory
	// vlen marks a variable-length source: each row is a flat run of
	// elements of dtype, reshaped to its row of shapes (the `shapes`
	// dimension scale); a batch is an nd.Object array of those examples.
	vlen   bool
	shapes [][]int
	// flat marks a 1-D vlen dataset with no shapes scale (Fuel's ILSVRC
	// `encoded_images`): each example is a flat array of dtype, as h5py
	// reads it; Fuel does not count it among its vlen_sources.
	flat bool
	// width is the byte width of a fixed-length string source (numpy's
	// S<width>, dtype nd.ByteStr), 0 for any other source.
	width int
	// raw is the file offset of the rows when they are read straight
	// from the file (direct.go), -1 otherwise; rowBytes is a row's size.
	raw      int64
	rowBytes int64
	// file is the dataset's file opened for those reads (nil: none).
	file *os.File
}

// elemSize is the number of bytes of one stored element.
func (s *source) elemSize() int {
	if s.width > 0 {
		return s.width
	}
	return s.dtype.Size()
}

// Open opens the splits whichSets of the Fuel HDF5 file at path, as
// Fuel's H5PYDataset(path, which_sets, ...). Several splits give the union
// of their examples and the sources they have in common. Close releases
// the file.
func Open(path string, whichSets []string, opts Options) (*H5PYDataset, error) {
	if len(whichSets) == 0 {
		return nil, fmt.Errorf("h5: %s: no split given", path)
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	d := &H5PYDataset{
		path:      path,
		whichSets: slices.Clone(whichSets),
		opts:      opts,
		file:      -1,
	}
	d.opts.Sources = slices.Clone(opts.Sources)
	if opts.Subset != nil {
		sub := *opts.Subset
		sub.Indices = slices.Clone(sub.Indices)
		d.opts.Subset = &sub
	}
	lock()
	defer unlock()
	stamp, err := stampOf(path)
	if err != nil {
		return nil, fmt.Errorf("h5: %w", err)
	}
	if err := d.open(); err != nil {
		d.release()
		return nil, fmt.Errorf("h5: %s: %w", path, err)
	}
	d.opened = stamp
	return d, nil
}

// open does Open's work. Lock held; on error the caller releases what was
// opened.
func (d *H5PYDataset) open() error {
	f, err := openFileDriver(d.path, d.opts.Driver)
	if err != nil {
		return err
	}
	d.file = f
	if d.split, err = readSplit(f); err != nil {
		return err
	}

	// The splits and the sources they all provide (Fuel sorts these).
	all := d.split.Splits()
	var provides []string
	for i, ws := range d.whichSets {
		if !slices.Contains(all, ws) {
			return fmt.Errorf("split %q is not in the file; available splits: %s", ws, strings.Join(all, ", "))
		}
		p := d.split.ProvidedSources(ws)
		if i == 0 {
			provides = slices.Clone(p)
		} else {
			provides = slices.DeleteFunc(provides, func(s string) bool { return !slices.Contains(p, s) })
		}
	}
	slices.Sort(provides)
	provides = slices.Compact(provides)
	if len(provides) == 0 {
		return fmt.Errorf("split(s) %s have no source in common", strings.Join(d.whichSets, ", "))
	}
	d.provides = provides

	// Axis labels and variable-length sources, for every source of the
	// file (as Fuel's default_axis_labels and vlen_sources).
	d.axisLabels = map[string][]string{}
	for _, name := range d.split.Sources() {
		labels, vlen, err := sourceLabels(f, name)
		if err != nil {
			return fmt.Errorf("source %q: %w", name, err)
		}
		d.axisLabels[name] = labels
		if vlen {
			d.vlen = append(d.vlen, name)
		}
	}

	// The sources to return.
	d.sources = d.opts.Sources
	if len(d.sources) == 0 {
		d.sources = slices.Clone(provides)
	}
	for _, name := range d.sources {
		if !slices.Contains(provides, name) {
			return fmt.Errorf("source %q is not provided by split(s) %s; available sources: %s",
				name, strings.Join(d.whichSets, ", "), strings.Join(provides, ", "))
		}
	}

	for _, name := range d.sources {
		s, err := d.openSource(name)
		if err != nil {
			return fmt.Errorf("source %q: %w", name, err)
		}
		d.srcs = append(d.srcs, s)
	}
	for _, s := range d.srcs {
		if s.rows.len() != d.srcs[0].rows.len() {
			return fmt.Errorf("sources have different lengths: %q has %d examples, %q has %d",
				d.srcs[0].name, d.srcs[0].rows.len(), s.name, s.rows.len())
		}
	}
	if d.opts.Subset != nil {
		for _, s := range d.srcs {
			if s.rows, err = s.rows.subsetOf(d.opts.Subset); err != nil {
				return err
			}
		}
	}
	d.numEx = d.srcs[0].rows.len()

	if !d.opts.LoadInMemory {
		return d.openDirect()
	}
	for _, s := range d.srcs {
		if s.width > 0 {
			if err := checkLoadable(nd.Uint8, s.rows.len(), append(slices.Clone(s.shape[1:]), s.width)); err != nil {
				return fmt.Errorf("source %q: %w", s.name, err)
			}
		} else if !s.vlen && !s.flat {
			if err := checkLoadable(s.dtype, s.rows.len(), s.shape[1:]); err != nil {
				return fmt.Errorf("source %q: %w", s.name, err)
			}
		}
		req := request{start: s.rows.start, stop: s.rows.stop}
		if s.rows.isList {
			req = request{isList: true, list: s.rows.list}
		}
		if s.data, err = s.read(req, true); err != nil {
			return fmt.Errorf("source %q: %w", s.name, err)
		}
	}
	d.release()
	return nil
}

// sourceLabels returns the axis labels of a source and whether it is a
// variable-length source (Fuel's get_axis_labels, get_vlen_sources).
func sourceLabels(f hid, name string) ([]string, bool, error) {
	ds, err := openDataset(f, name)
	if err != nil {
		return nil, false, err
	}
	defer C.H5Dclose(ds)
	shape, err := datasetShape(ds)
	if err != nil {
		return nil, false, err
	}
	vlen := false
	if len(shape) > 0 {
		if _, vlen, err = findScale(ds, 0, "shapes"); err != nil {
			return nil, false, err
		}
	}
	if vlen {
		if len(shape) != 1 {
			return nil, false, fmt.Errorf("variable-length sources must have only one dimension, this one has shape %v", shape)
		}
		first, err := dimLabel(ds, 0)
		if err != nil {
			return nil, false, err
		}
		path, ok, err := findScale(ds, 0, "shape_labels")
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, false, fmt.Errorf("variable-length source has no shape_labels dimension scale")
		}
		sl, err := openDataset(f, path)
		if err != nil {
			return nil, false, err
		}
		defer C.H5Dclose(sl)
		rest, err := readStrings(sl)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return append([]string{first}, rest...), true, nil
	}
	labels := make([]string, len(shape))
	for i := range labels {
		if labels[i], err = dimLabel(ds, i); err != nil {
			return nil, false, err
		}
	}
	return labels, false, nil
}

// openSource opens a source to return and works out its rows: the union
// of its rows in the chosen splits (Fuel's get_subsets).
func (d *H5PYDataset) openSource(name string) (_ *source, err error) {
	ds, err := openDataset(d.file, name)
	if err != nil {
		return nil, err
	}
	s := &source{name: name, ds: ds, raw: -1}
	defer func() {
		if err != nil {
			C.H5Dclose(ds)
		}
	}()
	if s.shape, err = datasetShape(ds); err != nil {
		return nil, err
	}
	if len(s.shape) == 0 {
		return nil, fmt.Errorf("a scalar dataset is not a source (it needs an example axis)")
	}
	var et elemType
	if et, err = datasetType(ds); err != nil {
		return nil, err
	}
	if !et.ok && et.strWidth == 0 {
		return nil, fmt.Errorf("dtype %s is not supported yet (supported: uint8, int8, int16, uint16, int32, int64, float32, float64, bool, fixed-length strings S<n>, and vlen arrays of the numeric ones)", et.name)
	}
	s.dtype = et.dtype
	if et.strWidth > 0 {
		s.dtype, s.width = nd.ByteStr, et.strWidth
	}
	if slices.Contains(d.vlen, name) {
		if !et.vlen {
			return nil, fmt.Errorf("a variable-length source (it has a shapes dimension scale) whose type is %s, not a vlen type", et.name)
		}
		if err := s.readShapes(d.file); err != nil {
			return nil, err
		}
	} else if et.vlen {
		// h5py reads each example as a flat array (Fuel returns it so).
		if len(s.shape) != 1 {
			return nil, fmt.Errorf("a vlen dataset of shape %v: one with no shapes dimension scale must be 1-D", s.shape)
		}
		s.flat = true
	}
	switch {
	case s.width > 0:
		if err := checkDeclared(nd.Uint8, append(slices.Clone(s.shape), s.width), storageSize(ds)); err != nil {
			return nil, err
		}
	case !s.vlen && !s.flat:
		if err := checkDeclared(s.dtype, s.shape, storageSize(ds)); err != nil {
			return nil, err
		}
	}
	if s.rows, err = sourceRows(d.split, d.whichSets, name, s.shape[0]); err != nil {
		return nil, err
	}
	return s, nil
}

// readShapes reads a variable-length source's shapes: the dataset its
// `shapes` dimension scale points to, one row per example. Lock held.
func (s *source) readShapes(f hid) error {
	s.vlen = true
	path, _, err := findScale(s.ds, 0, "shapes")
	if err != nil {
		return err
	}
	sds, err := openDataset(f, path)
	if err != nil {
		return err
	}
	s.shapes, err = readInt64Matrix(sds)
	C.H5Dclose(sds)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(s.shapes) != s.shape[0] {
		return fmt.Errorf("%s has %d rows for %d examples", path, len(s.shapes), s.shape[0])
	}
	return nil
}

// release closes every HDF5 object the dataset holds. Lock held.
func (d *H5PYDataset) release() {
	releaseHandles(&d.file, d.srcs)
	if d.rawFile != nil {
		d.rawFile.Close()
		d.rawFile = nil
	}
	for _, s := range d.srcs {
		s.file = nil
	}
}

// releaseHandles closes the sources' datasets and the file, marking each
// closed (-1); H5PYDataset and PytablesDataset share it.
func releaseHandles(file *hid, srcs []*source) {
	for _, s := range srcs {
		if s.ds >= 0 {
			C.H5Dclose(s.ds)
			s.ds = -1
		}
	}
	if *file >= 0 {
		C.H5Fclose(*file)
		*file = -1
	}
}

// Close releases the file. The dataset cannot be used afterwards; closing
// twice is harmless.
func (d *H5PYDataset) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	lock()
	d.release()
	unlock()
	for _, s := range d.srcs {
		s.data = nil
	}
	return nil
}

// Path is the file's path.
func (d *H5PYDataset) Path() string { return d.path }

// WhichSets are the splits the dataset is made of.
func (d *H5PYDataset) WhichSets() []string { return slices.Clone(d.whichSets) }

// Sources are the sources GetData returns, in order.
func (d *H5PYDataset) Sources() []string { return slices.Clone(d.sources) }

// ProvidesSources are the sources the chosen splits all provide, sorted
// (Fuel's provides_sources).
func (d *H5PYDataset) ProvidesSources() []string { return slices.Clone(d.provides) }

// VlenSources are the file's variable-length sources (Fuel's
// vlen_sources), sorted.
func (d *H5PYDataset) VlenSources() []string { return slices.Clone(d.vlen) }

// AxisLabels maps every source of the file to its axis labels, from the
// H5DS dimension labels ("" for an unlabelled axis), as Fuel's
// default_axis_labels.
func (d *H5PYDataset) AxisLabels() map[string][]string {
	out := make(map[string][]string, len(d.axisLabels))
	for k, v := range d.axisLabels {
		out[k] = slices.Clone(v)
	}
	return out
}

// NumExamples is the number of examples in the dataset.
func (d *H5PYDataset) NumExamples() int { return d.numEx }

// Split is the file's parsed `split` attribute.
func (d *H5PYDataset) Split() Split {
	out := slices.Clone(d.split)
	for i := range out {
		out[i].Indices = slices.Clone(out[i].Indices)
	}
	return out
}

// GetData returns the requested examples of each source, in Sources
// order, with the dtype they are stored with. Indices in a request count
// within the dataset (0 is its first example). A slice or list request
// gives arrays with a leading batch axis; a Single request gives one
// example without it. The arrays are the caller's.
func (d *H5PYDataset) GetData(req fuel.Request) ([]*nd.Array, error) {
	return d.GetDataLent(req, nil)
}

var _ fuel.ViewingDataset = (*H5PYDataset)(nil)

// GetDataLent is GetData with the float32 and uint8 batches (not single
// examples) in buffers rec lends (fuel.LendingDataset); a nil rec lends
// nothing.
func (d *H5PYDataset) GetDataLent(req fuel.Request, rec *nd.Recycler) ([]*nd.Array, error) {
	return d.GetDataView(req, rec, nil)
}

// GetDataView is GetDataLent with the uint8 sources marked in view given
// as views of the arrays in memory (load_in_memory) for a slice request
// (fuel.ViewingDataset): the caller only reads them.
func (d *H5PYDataset) GetDataView(req fuel.Request, rec *nd.Recycler, view []bool) ([]*nd.Array, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, fmt.Errorf("h5: %s: dataset is closed", d.path)
	}
	out := make([]*nd.Array, len(d.srcs))
	if d.opts.LoadInMemory {
		all := indexSet{start: 0, stop: d.numEx, total: d.numEx}
		r, err := all.translate(req)
		if err != nil {
			return nil, fmt.Errorf("h5: %s: %w", d.path, err)
		}
		for i, s := range d.srcs {
			data := s.data
			switch {
			case r.single && (s.vlen || s.flat):
				out[i] = data.Data.([]*nd.Array)[r.list[0]].Copy()
			case r.single:
				row := data.Slice(r.list[0], r.list[0]+1).Copy()
				out[i] = &nd.Array{Shape: row.Shape[1:], Data: row.Data}
			case r.isList && lends(rec, s):
				out[i] = takeRows(rec.Lent(s.dtype, append([]int{len(r.list)}, data.Shape[1:]...)...), data, r.list)
			case r.isList:
				out[i] = data.Take(r.list)
			case lends(rec, s) && s.dtype == nd.Uint8 && i < len(view) && view[i]:
				out[i] = data.Slice(r.start, r.stop)
			case lends(rec, s):
				rows := data.Slice(r.start, r.stop)
				out[i] = rec.Lent(s.dtype, rows.Shape...)
				copyRows(out[i].Data, rows.Data)
			default:
				out[i] = data.Slice(r.start, r.stop).Copy()
			}
		}
		return out, nil
	}
	if err := d.checkUnchanged(); err != nil {
		return nil, err
	}
	lock()
	defer unlock()
	for i, s := range d.srcs {
		r, err := s.rows.translate(req)
		if err != nil {
			return nil, fmt.Errorf("h5: %s: %w", d.path, err)
		}
		if d.opts.NoSortIndices && !increasing(r) {
			// Fuel hands the list to h5py, which refuses it.
			return nil, fmt.Errorf("h5: %s: TypeError: Indexing elements must be in increasing order (h5py; sort_indices=True reads any list)", d.path)
		}
		if out[i], err = s.readLent(r, !d.opts.NoSortIndices, rec); err != nil {
			return nil, fmt.Errorf("h5: %s: source %q: %w", d.path, s.name, err)
		}
	}
	return out, nil
}

// increasing: the request is not a list, or its indices are strictly
// increasing (what h5py's fancy indexing accepts).
func increasing(r request) bool {
	if !r.isList || r.single {
		return true
	}
	for i := 1; i < len(r.list); i++ {
		if r.list[i] <= r.list[i-1] {
			return false
		}
	}
	return true
}

// read reads a translated request from the file. A list is read in
// sorted order (sorted true: one read of the distinct rows, then put in
// request order) or in request order (one read per run of consecutive
// rows). Lock held.
func (s *source) read(r request, sorted bool) (*nd.Array, error) { return s.readLent(r, sorted, nil) }

// readLent is read with a batch's array (not a single example's) lent by
// rec when it lends the source's dtype (lends).
func (s *source) readLent(r request, sorted bool, rec *nd.Recycler) (*nd.Array, error) {
	if s.vlen || s.flat {
		return s.readVlen(r)
	}
	if !lends(rec, s) {
		rec = nil
	}
	rowShape := s.shape[1:]
	if !r.isList {
		out := rec.Lent(s.dtype, append([]int{r.rows()}, rowShape...)...)
		return out, s.readInto(out, [][]run{{{r.start, r.stop}}})
	}
	if r.single {
		out := nd.New(s.dtype, rowShape...)
		return out, s.readInto(out, [][]run{{{r.list[0], r.list[0] + 1}}})
	}
	if !sorted {
		var reads [][]run
		for _, rn := range consecutiveRuns(r.list) {
			reads = append(reads, []run{rn})
		}
		out := rec.Lent(s.dtype, append([]int{r.rows()}, rowShape...)...)
		return out, s.readInto(out, reads)
	}
	uniq, runs := distinctRuns(r.list)
	buf := rec.Lent(s.dtype, append([]int{len(uniq)}, rowShape...)...)
	if err := s.readInto(buf, [][]run{runs}); err != nil {
		return nil, err
	}
	if slices.Equal(uniq, r.list) {
		return buf, nil
	}
	pos := make([]int, len(r.list))
	for k, i := range r.list {
		pos[k] = sort.SearchInts(uniq, i)
	}
	if rec == nil {
		return buf.Take(pos), nil
	}
	out := takeRows(rec.Lent(s.dtype, append([]int{len(r.list)}, rowShape...)...), buf, pos)
	buf.Release()
	return out, nil
}

// lends reports whether rec lends the batches of source s: fixed-shape
// float32 or uint8 rows.
func lends(rec *nd.Recycler, s *source) bool {
	return rec != nil && !s.vlen && !s.flat && s.width == 0 && (s.dtype == nd.Float32 || s.dtype == nd.Uint8)
}

// copyRows copies src into dst, two []float32 or two []uint8.
func copyRows(dst, src any) {
	switch d := dst.(type) {
	case []float32:
		copy(d, src.([]float32))
	case []uint8:
		copy(d, src.([]uint8))
	}
}

// takeRows copies the rows idx of a into dst, in order, and returns dst.
func takeRows(dst, a *nd.Array, idx []int) *nd.Array {
	rs := a.RowSize()
	for j, i := range idx {
		copyRows(nd.SliceData(dst.Data, j*rs, (j+1)*rs), nd.SliceData(a.Data, i*rs, (i+1)*rs))
	}
	return dst
}

// consecutiveRuns cuts a list of rows into runs of consecutive ones, in
// the list's order.
func consecutiveRuns(list []int) []run {
	var runs []run
	for i := 0; i < len(list); {
		j := i + 1
		for j < len(list) && list[j] == list[j-1]+1 {
			j++
		}
		runs = append(runs, run{list[i], list[j-1] + 1})
		i = j
	}
	return runs
}

// distinctRuns is the distinct rows of a list, sorted, and their runs of
// consecutive rows: what one read of them all selects.
func distinctRuns(list []int) (uniq []int, runs []run) {
	uniq = slices.Clone(list)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	return uniq, consecutiveRuns(uniq)
}

// readInto fills out with consecutive reads, each of a sorted list of
// runs, the rows of each read following those of the previous one. Lock
// held.
func (s *source) readInto(out *nd.Array, reads [][]run) error {
	if out.Size() == 0 {
		return nil
	}
	var base unsafe.Pointer
	var bools, raw []uint8
	switch data := out.Data.(type) {
	case []uint8:
		base = unsafe.Pointer(&data[0])
	case []int8:
		base = unsafe.Pointer(&data[0])
	case []int16:
		base = unsafe.Pointer(&data[0])
	case []uint16:
		base = unsafe.Pointer(&data[0])
	case []int32:
		base = unsafe.Pointer(&data[0])
	case []int64:
		base = unsafe.Pointer(&data[0])
	case []float32:
		base = unsafe.Pointer(&data[0])
	case []float64:
		base = unsafe.Pointer(&data[0])
	case []bool:
		bools = make([]uint8, len(data))
		base = unsafe.Pointer(&bools[0])
	case [][]byte:
		if s.width <= 0 || len(data) > math.MaxInt/s.width {
			return fmt.Errorf("%d strings of %d bytes overflow", len(data), s.width)
		}
		raw = make([]byte, len(data)*s.width)
		base = unsafe.Pointer(&raw[0])
	default:
		return fmt.Errorf("cannot read into %T", out.Data)
	}
	// Before any H5Dread writes through base: the rows asked for lie in
	// the dataset and fill out exactly (libhdf5 writes what the selection
	// holds, whatever the buffer's length).
	rowElems, ok := nd.ProdChecked(s.shape[1:])
	if !ok || rowElems > math.MaxInt/s.elemSize() {
		return fmt.Errorf("rows of shape %v overflow", s.shape[1:])
	}
	rowBytes := rowElems * s.elemSize()
	if out.DType() != s.dtype {
		return fmt.Errorf("reading %s rows into a %s array", s.dtype, out.DType())
	}
	total := 0
	for _, runs := range reads {
		for _, r := range runs {
			if r.start < 0 || r.stop < r.start || r.stop > s.shape[0] {
				return fmt.Errorf("rows [%d, %d) outside the dataset's %d", r.start, r.stop, s.shape[0])
			}
			total += r.stop - r.start
		}
	}
	if total*rowElems != out.Size() {
		return fmt.Errorf("%d rows of %d elements do not fill an array of %d", total, rowElems, out.Size())
	}
	if s.raw >= 0 && s.file != nil {
		return s.readDirect(s.file, base, reads)
	}
	off := 0
	for _, runs := range reads {
		if err := readRuns(s.ds, s.dtype, s.shape, runs, unsafe.Add(base, off*rowBytes)); err != nil {
			return err
		}
		for _, r := range runs {
			off += r.stop - r.start
		}
	}
	if bools != nil {
		data := out.Data.([]bool)
		for i, b := range bools {
			data[i] = b != 0
		}
	}
	if raw != nil {
		data := out.Data.([][]byte)
		for i := range data {
			data[i] = trimTrailingNul(raw[i*s.width : (i+1)*s.width])
		}
	}
	return nil
}

// readVlen reads a translated request of a variable-length source: the
// distinct rows in sorted order, in one read, each reshaped to its row of
// shapes, then put in request order as an nd.Object array (or, for a
// single request, the one example). Lock held.
func (s *source) readVlen(r request) (*nd.Array, error) {
	var list []int
	if r.isList {
		list = r.list
	} else {
		list = make([]int, r.stop-r.start)
		for i := range list {
			list[i] = r.start + i
		}
	}
	uniq, runs := distinctRuns(list)
	flat, err := readVlenRuns(s.ds, s.dtype, runs)
	if err != nil {
		return nil, err
	}
	for k, row := range uniq {
		if s.flat {
			break // each example stays the flat array h5py gives
		}
		ex, err := reshapeVlen(flat[k], row, s.shapes[row])
		if err != nil {
			return nil, err
		}
		flat[k] = ex
	}
	if r.single {
		return flat[0], nil
	}
	out := make([]*nd.Array, len(list))
	used := make([]bool, len(uniq))
	for k, i := range list {
		u := sort.SearchInts(uniq, i)
		out[k] = flat[u]
		if used[u] {
			out[k] = flat[u].Copy() // a repeated example gets its own array
		}
		used[u] = true
	}
	return &nd.Array{Shape: []int{len(out)}, Data: out}, nil
}
