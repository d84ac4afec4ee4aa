// Package h5 reads Fuel's HDF5 dataset format: H5PYDataset, the Go
// counterpart of fuel.datasets.hdf5.H5PYDataset, for files converted by
// Python Fuel (fuel-convert) or written by h5py following Fuel's layout.
//
// The layout (see shared/reference/fuel-hdf5-format.md): every source is
// a dataset in the root group, named after the source, whose first axis
// indexes examples; the root attribute `split` is a compound array with
// one row per (split, source) pair giving the split's examples as a range
// [start, stop) or through an object reference to an index dataset; axis
// labels are H5DS dimension labels.
//
// Opening follows Fuel:
//
//	d, err := h5.Open(path, []string{"train"}, h5.Options{})
//	batch, err := d.GetData(fuel.Request{Start: 0, Stop: 100})
//
// Several splits give the union of their examples and the intersection of
// their sources; the sources come back sorted by name unless
// Options.Sources lists them; Options.Subset selects examples within the
// splits; list requests may be unsorted and repeat examples (read in
// sorted order and put back in request order). Arrays come back with the
// dtype the file stores: uint8, int8, int16, uint16, int32, int64, float32, float64 or
// bool (h5py's bool enum), in any byte order. A variable-length source
// (the `shapes` / `shape_labels` dimension-scale recipe) comes back as an
// nd.Object array of examples, each reshaped to its row of `shapes`, as
// Fuel's numpy object arrays; a single-example request gives the example.
// A 1-D vlen dataset with no shapes scale (Fuel's ILSVRC encoded_images)
// gives one flat array per example, as h5py. Fixed-length string sources
// (numpy's S<n>, ILSVRC's filenames) come back as nd.ByteStr arrays, each
// element without its trailing NULs, as numpy reads them. Other dtypes
// are reported as not supported, naming the source; a file's other
// sources remain usable through Options.Sources.
//
// Reads are out of core: a request reads its rows by hyperslab selection
// (one H5Dread per source and request), so a file larger than memory
// streams; LoadInMemory reads the dataset's rows once instead.
//
// Create writes files in the same format (see Writer).
//
// HDF5 is reached through cgo (libhdf5 and libhdf5_hl); the #cgo
// directives find Debian's and Ubuntu's serial build (libhdf5-dev) with
// no environment. Every HDF5 call of the package is made under one
// package-level lock, since the library is not safe to call from two
// threads at once; every object opened is closed again (HDF5 keeps a file
// open while any object in it is open).
package h5
