//go:build cgo

package h5

// #include "shim.h"
import "C"

import (
	"fmt"
	"slices"
	"sync"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// PytablesDataset is Fuel's fuel.datasets.hdf5.PytablesDataset: the rows
// [Start, Stop) of datasets /<data_node>/<source> of an HDF5 file written
// by PyTables (or any file so laid out), read from the file at each
// request. It implements fuel.IndexableDataset and is safe for concurrent
// use. Sources compressed with the filters libhdf5 has (deflate,
// shuffle, ...) are read; PyTables' blosc is not one of them, and reading
// a blosc-compressed source fails with libhdf5's error.
type PytablesDataset struct {
	path        string
	sources     []string
	start, stop int
	file        hid
	srcs        []*source

	mu     sync.RWMutex
	closed bool
}

var _ fuel.IndexableDataset = (*PytablesDataset)(nil)

// OpenPytables opens the sources of the file at path, as Fuel's
// PytablesDataset(path, sources, start=0, stop=None, data_node='Data',
// sources_in_file=None).
func OpenPytables(path string, sources []string, opts PytablesOptions) (*PytablesDataset, error) {
	if len(sources) == 0 {
		return nil, fmt.Errorf("h5: %s: no source given", path)
	}
	inFile := opts.SourcesInFile
	if inFile == nil {
		inFile = sources
	}
	if len(inFile) != len(sources) {
		return nil, fmt.Errorf("h5: %s: %d sources_in_file for %d sources", path, len(inFile), len(sources))
	}
	node := opts.DataNode
	if node == "" {
		node = "Data"
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	d := &PytablesDataset{path: path, sources: slices.Clone(sources), start: opts.Start, stop: opts.Stop, file: -1}
	lock()
	defer unlock()
	if err := d.open(node, inFile); err != nil {
		d.release()
		return nil, fmt.Errorf("h5: %s: %w", path, err)
	}
	return d, nil
}

// open does OpenPytables' work. Lock held.
func (d *PytablesDataset) open(node string, inFile []string) error {
	f, err := openFile(d.path)
	if err != nil {
		return err
	}
	d.file = f
	for i, name := range inFile {
		p := "/" + node + "/" + name
		ds, err := openDataset(f, p)
		if err != nil {
			return fmt.Errorf("source %q (%s): %w", d.sources[i], p, err)
		}
		s := &source{name: d.sources[i], ds: ds}
		d.srcs = append(d.srcs, s)
		if s.shape, err = datasetShape(ds); err != nil {
			return err
		}
		if len(s.shape) == 0 {
			return fmt.Errorf("%s is a scalar, not a source (it needs a row axis)", p)
		}
		et, err := datasetType(ds)
		if err != nil {
			return err
		}
		if !et.ok || et.vlen {
			return fmt.Errorf("%s: dtype %s is not supported (supported: uint8, int8, int16, uint16, int32, int64, float32, float64, bool)", p, et.name)
		}
		s.dtype = et.dtype
		if err := checkDeclared(s.dtype, s.shape, storageSize(ds)); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	if d.stop < 0 {
		d.stop = d.srcs[0].shape[0]
	}
	for _, s := range d.srcs {
		if s.rows, err = sliceSet(d.start, d.stop, s.shape[0]); err != nil {
			return fmt.Errorf("source %q: start %d, stop %d: %w", s.name, d.start, d.stop, err)
		}
	}
	return nil
}

// release closes what the dataset holds. Lock held.
func (d *PytablesDataset) release() { releaseHandles(&d.file, d.srcs) }

// Close releases the file (Fuel's close_file); closing twice is harmless.
func (d *PytablesDataset) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		lock()
		d.release()
		unlock()
	}
	return nil
}

// Sources are the source names, in order.
func (d *PytablesDataset) Sources() []string { return slices.Clone(d.sources) }

// AxisLabels is nil: PyTables files carry none for Fuel.
func (d *PytablesDataset) AxisLabels() map[string][]string { return nil }

// NumExamples is Stop - Start.
func (d *PytablesDataset) NumExamples() int { return d.stop - d.start }

// Start and Stop are the rows used, [Start, Stop).
func (d *PytablesDataset) Start() int { return d.start }

// Stop is the end of the rows used.
func (d *PytablesDataset) Stop() int { return d.stop }

// GetData reads the requested rows (counted from Start) of each source.
func (d *PytablesDataset) GetData(req fuel.Request) ([]*nd.Array, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, fmt.Errorf("h5: %s: the file is closed", d.path)
	}
	lock()
	defer unlock()
	out := make([]*nd.Array, len(d.srcs))
	for i, s := range d.srcs {
		r, err := s.rows.translate(req)
		if err != nil {
			return nil, fmt.Errorf("h5: %s: %w", d.path, err)
		}
		if out[i], err = s.read(r, true); err != nil {
			return nil, fmt.Errorf("h5: %s: source %q: %w", d.path, s.name, err)
		}
	}
	return out, nil
}
