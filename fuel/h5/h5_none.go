//go:build !cgo

package h5

import (
	"errors"
	"fmt"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// ErrNoHDF5 is wrapped by every file operation of the pure-Go build
// (CGO_ENABLED=0), which has no libhdf5.
var ErrNoHDF5 = errors.New("HDF5 files need libhdf5 (through cgo), and this is the pure-Go build of blocks-repl (built with CGO_ENABLED=0); use the cgo build (make build), or a dataset read without HDF5 (MNIST from its IDX files, the embedded demo subset)")

func refuse(path string) error { return fmt.Errorf("h5: %s: %w", path, ErrNoHDF5) }

// H5PYDataset is never opened in the pure-Go build.
type H5PYDataset struct{ path string }

// Open refuses: no HDF5 in this build.
func Open(path string, whichSets []string, opts Options) (*H5PYDataset, error) {
	return nil, refuse(path)
}

// ReadSplit refuses: no HDF5 in this build.
func ReadSplit(path string) (Split, error) { return nil, refuse(path) }

// Describe refuses: no HDF5 in this build.
func Describe(path string) (*FileInfo, error) { return nil, refuse(path) }

// The methods of a dataset that cannot be opened here.

func (d *H5PYDataset) Close() error                              { return nil }
func (d *H5PYDataset) Path() string                              { return d.path }
func (d *H5PYDataset) WhichSets() []string                       { return nil }
func (d *H5PYDataset) Sources() []string                         { return nil }
func (d *H5PYDataset) ProvidesSources() []string                 { return nil }
func (d *H5PYDataset) VlenSources() []string                     { return nil }
func (d *H5PYDataset) AxisLabels() map[string][]string           { return nil }
func (d *H5PYDataset) NumExamples() int                          { return 0 }
func (d *H5PYDataset) Split() Split                              { return nil }
func (d *H5PYDataset) GetData(fuel.Request) ([]*nd.Array, error) { return nil, refuse(d.path) }

// Writer is never created in the pure-Go build.
type Writer struct{ path string }

// Create refuses: no HDF5 in this build.
func Create(path string) (*Writer, error) { return nil, refuse(path) }

// The methods of a writer that cannot be created here.

func (w *Writer) Path() string { return w.path }
func (w *Writer) Fill(data []SplitData, axisLabels map[string][]string) error {
	return refuse(w.path)
}
func (w *Writer) CreateSource(name string, dt nd.DType, shape []int, axisLabels []string) error {
	return refuse(w.path)
}
func (w *Writer) WriteRows(name string, start int, rows *nd.Array) error { return refuse(w.path) }
func (w *Writer) AddSource(name string, data *nd.Array, axisLabels []string) error {
	return refuse(w.path)
}
func (w *Writer) AddVlenSource(name string, examples []*nd.Array, axisLabels []string) error {
	return refuse(w.path)
}
func (w *Writer) AddSplit(s SplitDef) error             { return refuse(w.path) }
func (w *Writer) SetAttribute(name, value string) error { return refuse(w.path) }
func (w *Writer) Abort()                                {}
func (w *Writer) Close() error                          { return refuse(w.path) }

// InMemoryData is nil: no dataset opens in this build.
func (d *H5PYDataset) InMemoryData() []*nd.Array { return nil }

// LoadInMemory is false: no dataset opens in this build.
func (d *H5PYDataset) LoadInMemory() bool { return false }

// PytablesDataset is never opened in the pure-Go build.
type PytablesDataset struct{ path string }

// OpenPytables refuses: no HDF5 in this build.
func OpenPytables(path string, sources []string, opts PytablesOptions) (*PytablesDataset, error) {
	return nil, refuse(path)
}

// The methods of a dataset that cannot be opened here.

func (d *PytablesDataset) Close() error                    { return nil }
func (d *PytablesDataset) Sources() []string               { return nil }
func (d *PytablesDataset) AxisLabels() map[string][]string { return nil }
func (d *PytablesDataset) NumExamples() int                { return 0 }
func (d *PytablesDataset) Start() int                      { return 0 }
func (d *PytablesDataset) Stop() int                       { return 0 }
func (d *PytablesDataset) GetData(req fuel.Request) ([]*nd.Array, error) {
	return nil, refuse(d.path)
}
