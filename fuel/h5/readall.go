//go:build cgo

package h5

// #include "shim.h"
import "C"

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// ReadAll reads the whole root dataset name of a Fuel HDF5 file, every
// row whatever the splits say: a regular source as one array, a
// variable-length one (a vlen dataset with a `shapes` dimension scale) as
// an nd.Object array of its examples, each reshaped to its row of shapes.
// It is h5py's f[name][...] for a Fuel file's sources.
func ReadAll(path, name string) (*nd.Array, error) {
	return readFile(path, func(f hid) (*nd.Array, error) {
		a, err := readAll(f, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return a, nil
	})
}

// readAll does ReadAll's work. Lock held.
func readAll(f hid, name string) (*nd.Array, error) {
	_, vlen, err := sourceLabels(f, name)
	if err != nil {
		return nil, err
	}
	ds, err := openDataset(f, name)
	if err != nil {
		return nil, err
	}
	defer C.H5Dclose(ds)
	s := &source{name: name, ds: ds}
	if s.shape, err = datasetShape(ds); err != nil {
		return nil, err
	}
	if len(s.shape) == 0 {
		return nil, fmt.Errorf("a scalar dataset is not a source (it needs an example axis)")
	}
	et, err := datasetType(ds)
	if err != nil {
		return nil, err
	}
	if !et.ok {
		return nil, fmt.Errorf("dtype %s is not supported", et.name)
	}
	s.dtype = et.dtype
	if vlen {
		if !et.vlen {
			return nil, fmt.Errorf("a variable-length source (it has a shapes dimension scale) whose type is %s, not a vlen type", et.name)
		}
		if err := s.readShapes(f); err != nil {
			return nil, err
		}
	} else if et.vlen {
		return nil, fmt.Errorf("a vlen dataset without a shapes dimension scale is not a Fuel source")
	} else if err := checkDeclared(s.dtype, s.shape, storageSize(ds)); err != nil {
		return nil, err
	}
	if s.shape[0] == 0 {
		return nd.New(s.dtype, s.shape...), nil
	}
	return s.read(request{start: 0, stop: s.shape[0]}, true)
}
