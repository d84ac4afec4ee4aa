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

	"github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/nd"
)

// fuelFile writes fixtures' fuel-h5/<name> (a file Fuel wrote) and its
// manifest, <name>.json, into a new directory and returns the file's path.
func fuelFile(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{name, name + ".json"} {
		b, err := fixtures.Read("fuel-h5/" + n)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
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
