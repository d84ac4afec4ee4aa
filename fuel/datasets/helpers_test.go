package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/nd"
)

// mnistDir returns a new directory holding MNIST-shaped idx files made
// from the embedded subset (fixtures.WriteMNIST: MNIST's names and sizes,
// its first examples).
func mnistDir(t *testing.T) string {
	t.Helper()
	return fixtures.MNISTDir(t, EmbeddedMNISTFiles())
}

// useDataPath makes dir the only directory of Fuel's data path, with no
// configuration file.
func useDataPath(t *testing.T, dir string) {
	t.Helper()
	t.Setenv("FUEL_CONFIG", filepath.Join(t.TempDir(), "no-fuelrc"))
	t.Setenv("FUEL_DATA_PATH", dir)
	t.Setenv("FUEL_FLOATX", "")
}

// sha256Hex hashes a uint8 array's bytes in C order (the manifest's
// hash_definition for uint8 data).
func sha256Hex(a *nd.Array) string {
	sum := sha256.Sum256(a.Data.([]uint8))
	return hex.EncodeToString(sum[:])
}

func sumU8(a *nd.Array) float64 {
	var s float64
	for _, v := range a.Data.([]uint8) {
		s += float64(v)
	}
	return s
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
