package converters

import (
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// An int8 matrix (mxINT8_CLASS) reads as an int8 array with its signed
// values (it was skipped as an unknown class).
func TestMatInt8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "i8.mat")
	writeMat(t, path, false, matVar{name: "x", class: 8, stored: miINT8, dims: []int{2, 2}, values: []float64{-128, -1, 0, 127}})
	vars, err := loadMat(path)
	if err != nil {
		t.Fatal(err)
	}
	x := vars["x"]
	if x == nil || x.data.DType() != nd.Int8 {
		t.Fatalf("x: %+v, want an int8 array", x)
	}
	for i, want := range []float64{-128, -1, 0, 127} {
		if got := x.data.Flat(i); got != want {
			t.Errorf("x element %d = %v, want %v", i, got, want)
		}
	}
}
