//go:build !cgo

package h5

import "github.com/blocks-go/blocks/nd"

func (w *Writer) CreateVlenSource(name string, dt nd.DType, n int, axisLabels []string, layout VlenLayout) error {
	return refuse(w.path)
}
func (w *Writer) WriteVlenExample(name string, i int, example *nd.Array) error { return refuse(w.path) }

// ReadDigitStruct refuses: no HDF5 in this build.
func ReadDigitStruct(path string) ([]DigitBoxes, error) { return nil, refuse(path) }

func (w *Writer) CreateStringSource(name string, width int, shape []int, axisLabels []string) error {
	return refuse(w.path)
}
func (w *Writer) WriteStringRows(name string, start int, values []string) error {
	return refuse(w.path)
}

// ReadStringSource refuses: no HDF5 in this build.
func ReadStringSource(path, name string) ([]string, []int, error) { return nil, nil, refuse(path) }
