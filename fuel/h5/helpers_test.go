//go:build cgo

package h5

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// sharedDir returns <repo root>/../shared, where the repository root is
// the nearest directory above the working directory holding go.mod (CI
// lays out <dir>/main and <dir>/shared). It skips the test when absent.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the working directory, so no ../shared to read test data from")
		}
		dir = parent
	}
	shared := filepath.Join(filepath.Dir(dir), "shared")
	if st, err := os.Stat(shared); err != nil || !st.IsDir() {
		t.Skipf("shared test data directory %s is absent (CI lays out <dir>/main and <dir>/shared)", shared)
	}
	return shared
}

// fuelFile returns the path of a file in shared/data/fuel-h5.
func fuelFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(sharedDir(t), "data", "fuel-h5", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("test data %s is absent: %v", p, err)
	}
	return p
}

// rawBytes is an array's elements in C order, little-endian, as numpy's
// tobytes() on a little-endian machine (the manifests' hash input).
func rawBytes(a *nd.Array) []byte {
	var out []byte
	switch d := a.Data.(type) {
	case []uint8:
		out = append(out, d...)
	case []bool:
		for _, v := range d {
			if v {
				out = append(out, 1)
			} else {
				out = append(out, 0)
			}
		}
	case []int16:
		for _, v := range d {
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		}
	case []uint16:
		for _, v := range d {
			out = binary.LittleEndian.AppendUint16(out, v)
		}
	case []*nd.Array:
		// Fuel's vlen hash: each example's bytes, in order.
		for _, e := range d {
			out = append(out, rawBytes(e)...)
		}
	case []int32:
		for _, v := range d {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	case []int64:
		for _, v := range d {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	case []float32:
		for _, v := range d {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	case []float64:
		for _, v := range d {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
		}
	default:
		panic("rawBytes: unexpected data")
	}
	return out
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// exactSum is the exactly rounded sum of an array's values in float64, as
// Python's math.fsum.
func exactSum(a *nd.Array) float64 {
	sum := new(big.Float).SetPrec(4096)
	for _, v := range values(a) {
		sum.Add(sum, new(big.Float).SetPrec(4096).SetFloat64(v))
	}
	f, _ := sum.Float64()
	return f
}

// values lists an array's elements as float64, those of every example of
// an object (vlen) array in turn.
func values(a *nd.Array) []float64 {
	if objs, ok := a.Data.([]*nd.Array); ok {
		var out []float64
		for _, e := range objs {
			out = append(out, e.Float64s()...)
		}
		return out
	}
	return a.Float64s()
}

// rowOf returns example i of a batch array (a copy, without the batch
// axis).
func rowOf(a *nd.Array, i int) *nd.Array {
	if objs, ok := a.Data.([]*nd.Array); ok {
		return objs[i].Copy()
	}
	r := a.Slice(i, i+1).Copy()
	r.Shape = r.Shape[1:]
	return r
}

// checkNoOpenObjects fails the test if it ends with more HDF5 objects
// open than it started with: every object opened must be closed (a file
// with an object left open stays open). The baseline is not 0: gonum's
// hdf5 package keeps datatypes open from its init.
func checkNoOpenObjects(t *testing.T) {
	before := openObjects()
	t.Cleanup(func() {
		if n := openObjects(); n != before {
			t.Errorf("%d HDF5 objects open at the end of the test, %d at the start", n, before)
		}
	})
}
