package h5

// The types of Fuel HDF5 files that both builds share: the cgo build reads
// and writes them with libhdf5, the pure-Go build (h5_none.go) refuses.

import (
	"errors"
	"slices"

	"github.com/blocks-go/blocks/nd"
)

// SplitRow is one row of the root `split` attribute of a Fuel HDF5 file:
// where one split of one source lies.
type SplitRow struct {
	Split  string
	Source string
	// Start and Stop delimit the split, [Start, Stop), when IndicesPath is
	// empty.
	Start, Stop int
	// IndicesPath is the path of the index dataset the row's object
	// reference points to, "" for the null reference; Indices is that
	// dataset's contents (the examples of the split, in the file's order).
	IndicesPath string
	Indices     []int
	// Available is false for a (split, source) pair the split does not
	// have (the writer stores 0, 0, a null reference and '.' then).
	Available bool
	// Comment is stored as written: Fuel writes "." for no comment.
	Comment string
}

// Split is the parsed `split` attribute: one row per (split, source)
// pair, in file order.
type Split []SplitRow

// Splits returns the split names, sorted.
func (s Split) Splits() []string {
	var out []string
	for _, r := range s {
		out = append(out, r.Split)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Sources returns the source names, sorted.
func (s Split) Sources() []string {
	var out []string
	for _, r := range s {
		out = append(out, r.Source)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ProvidedSources returns the sources available in a split, in file order
// (Fuel's get_provided_sources).
func (s Split) ProvidedSources(split string) []string {
	var out []string
	for _, r := range s {
		if r.Split == split && r.Available {
			out = append(out, r.Source)
		}
	}
	return out
}

// Row returns the row of a (split, source) pair.
func (s Split) Row(split, source string) (SplitRow, bool) {
	for _, r := range s {
		if r.Split == split && r.Source == source {
			return r, true
		}
	}
	return SplitRow{}, false
}

// ErrNotFuel is wrapped by the error for an HDF5 file that has no `split`
// attribute on its root group, so is not in Fuel's format.
var ErrNotFuel = errors.New("not a Fuel HDF5 file (no `split` attribute on the root group)")

// ErrNotFuelSplit is wrapped by the error for an HDF5 file whose `split`
// attribute is not Fuel's table of (split, source, start, stop, indices,
// available, comment) rows.
var ErrNotFuelSplit = errors.New("not a Fuel HDF5 file")

// trimNul cuts a fixed-length HDF5 string at its first NUL (NULLPAD and
// NULLTERM padding; Fuel's strings are NULLPAD).
func trimNul(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Options are H5PYDataset's optional arguments. The zero value gives
// Fuel's defaults.
type Options struct {
	// Subset selects examples within the chosen splits (Fuel's subset);
	// nil means all of them.
	Subset *Subset
	// LoadInMemory reads the whole subset of every source when the dataset
	// is opened and closes the file (Fuel's load_in_memory); otherwise each
	// request is read from the file.
	LoadInMemory bool
	// NoSortIndices is Fuel's sort_indices=False. By default a list
	// request is read from the file in sorted order, in one read, and put
	// back in request order; with NoSortIndices, out of core, a list must
	// be strictly increasing (h5py's TypeError otherwise, as Fuel hands it
	// the list) and is read one read per run of consecutive examples.
	NoSortIndices bool
	// Driver is h5py's file driver (Fuel's driver): "" for the default,
	// or one of Drivers.
	Driver string
	// Sources are the sources to return, in this order (Fuel's sources);
	// nil means all the sources the splits provide, sorted by name.
	Sources []string
}

// SplitData is one element of the data of Fuel's fill_hdf5_file: the
// examples of one source in one split, with an optional comment.
type SplitData struct {
	Split, Source string
	Data          *nd.Array
	Comment       string
	// Examples, instead of Data, makes the source variable-length: one
	// array per example, shapes free (Fuel's documented vlen recipe; its
	// axis labels are the batch label, then one per example axis).
	Examples []*nd.Array
}

// rows is the number of examples of an entry.
func (d SplitData) rows() int {
	if d.Data == nil {
		return len(d.Examples)
	}
	if len(d.Data.Shape) == 0 {
		return -1
	}
	return d.Data.Shape[0]
}

// SourceInfo describes one source of a file, as stored.
type SourceInfo struct {
	Name string
	// DType is the stored element type ("uint8", ...; for a vlen source,
	// the type of its elements), Shape the dataset's shape (for a vlen
	// source, (N,)).
	DType string
	Shape []int
	Vlen  bool
	// AxisLabels as Fuel reads them (for a vlen source: the batch label,
	// then shape_labels).
	AxisLabels []string
}

// FileInfo is what a Fuel HDF5 file holds: its split table, sources and
// string attributes.
type FileInfo struct {
	Path       string
	Split      Split
	Sources    []SourceInfo
	Attributes map[string]string
}

// SplitDef is one split of a file being written: the examples [Start,
// Stop) of each of its sources, or the listed Indices (strictly
// increasing; written as an index dataset `<split>_indices` that the
// split's rows reference, as Fuel's `indices` field).
type SplitDef struct {
	Name        string
	Start, Stop int
	Indices     []int
	// Sources the split provides; nil means every source of the file.
	// The file's other sources are marked unavailable in the split (Fuel
	// stores 0, 0, a null reference, False and '.').
	Sources []string
	// Ranges, when set, gives a source its own range [start, stop) in
	// this split (fill_hdf5_file concatenates each source separately);
	// a source not in Ranges uses Start and Stop. With Sources nil and
	// Ranges set, the split provides exactly the sources of Ranges.
	Ranges map[string][2]int
	// Comment is stored for every source of the split ('.' when empty, as
	// Fuel writes).
	Comment string
	// Comments, when set, gives a source its own comment.
	Comments map[string]string
}

// provides reports whether the split provides source src, and its range.
func (s SplitDef) provides(src string) (start, stop int, ok bool) {
	if r, ok := s.Ranges[src]; ok {
		return r[0], r[1], true
	}
	if s.Sources == nil && s.Ranges != nil || s.Sources != nil && !slices.Contains(s.Sources, src) {
		return 0, 0, false
	}
	return s.Start, s.Stop, true
}

// Drivers are the file drivers H5PYDataset's driver argument may name
// (h5py's driver; "" is h5py's None, the library's default).
var Drivers = []string{"sec2", "stdio", "core"}

// PytablesOptions are PytablesDataset's optional arguments; the zero
// value is Fuel's defaults.
type PytablesOptions struct {
	// Start and Stop delimit the rows used, [Start, Stop); Stop < 0 is
	// Fuel's None, the number of rows of the first source.
	Start, Stop int
	// DataNode is the group the sources are under ("Data" when empty).
	DataNode string
	// SourcesInFile are the datasets' names under DataNode, one per
	// source (the source names when nil).
	SourcesInFile []string
}
