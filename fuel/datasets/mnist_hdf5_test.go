package datasets

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/nd"
)

// TestMNISTPrefersFuelHDF5 puts Fuel's converted mnist-small.hdf5 (train
// 0:1000, test 0:200 of MNIST) on the data path as mnist.hdf5 and checks
// that MNIST reads it rather than the idx files, with the same first
// examples as the idx files give.
func TestMNISTPrefersFuelHDF5(t *testing.T) {
	src, err := fixtures.Read("fuel-h5/mnist-small.hdf5")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mnist.hdf5"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUEL_DATA_PATH", dir)
	ds, err := MNIST([]string{"train"}, MNISTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.NumExamples() != 1000 {
		t.Fatalf("read %d training examples, want the file's 1000", ds.NumExamples())
	}
	t.Setenv("FUEL_DATA_PATH", mnistDir(t))
	full, err := MNIST([]string{"train"}, MNISTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ds.GetData(fuel.Request{Start: 0, Stop: 1000})
	if err != nil {
		t.Fatal(err)
	}
	b, err := full.GetData(fuel.Request{Start: 0, Stop: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !nd.Equal(a[i], b[i]) {
			t.Errorf("source %s differs between mnist.hdf5 and the idx files", ds.Sources()[i])
		}
	}
}
