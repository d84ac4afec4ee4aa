//go:build cgo

package h5

import "github.com/blocks-go/blocks/nd"

// InMemoryData returns, with LoadInMemory, the loaded rows of every source
// in Sources order (Fuel's data_sources: a variable-length source is an
// nd.Object array of its examples); nil when the dataset reads from the
// file, as Fuel's None. The arrays are the dataset's: do not modify them.
func (d *H5PYDataset) InMemoryData() []*nd.Array {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if !d.opts.LoadInMemory || d.closed {
		return nil
	}
	out := make([]*nd.Array, len(d.srcs))
	for i, s := range d.srcs {
		out[i] = s.data
	}
	return out
}

// LoadInMemory reports whether the dataset was loaded into memory (Fuel's
// load_in_memory).
func (d *H5PYDataset) LoadInMemory() bool { return d.opts.LoadInMemory }
