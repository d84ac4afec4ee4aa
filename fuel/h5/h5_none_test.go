//go:build !cgo

package h5

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// The pure-Go build refuses every HDF5 file operation with an error that
// names the build and the file.
func TestPureGoRefusesHDF5(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.hdf5")
	_, e1 := Open(path, []string{"train"}, Options{})
	_, e2 := ReadSplit(path)
	_, e3 := Describe(path)
	_, e4 := Create(path)
	for i, err := range []error{e1, e2, e3, e4} {
		if !errors.Is(err, ErrNoHDF5) || !strings.Contains(err.Error(), "pure-Go build") || !strings.Contains(err.Error(), path) {
			t.Errorf("call %d: error %v, want ErrNoHDF5 naming the build and %s", i+1, err, path)
		}
	}
}
