package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// sharedDir returns <repo root>/../shared/<rel>, the project's shared test
// data (the repository root is the directory holding go.mod), or skips the
// test when it is absent.
func sharedDir(t *testing.T, rel string) string {
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
			t.Skip("no go.mod above the test directory: cannot locate ../shared")
		}
		dir = parent
	}
	p := filepath.Join(filepath.Dir(dir), "shared", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test data absent (%s): %v", p, err)
	}
	return p
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
