package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// isolate points the configuration at a file in a fresh directory (not
// written yet) and clears the environment variables.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rc := filepath.Join(dir, "fuelrc")
	t.Setenv(EnvConfig, rc)
	t.Setenv(EnvDataPath, "")
	os.Unsetenv(EnvDataPath)
	t.Setenv(EnvFloatX, "")
	t.Setenv(EnvLocalDataPath, "")
	os.Unsetenv(EnvLocalDataPath)
	return rc
}

func TestDefaults(t *testing.T) {
	isolate(t)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.DataPath != nil || c.DataPathSource != "" || c.FloatX != nd.Float32 || c.DefaultSeed != 1 || c.File != "" {
		t.Errorf("defaults: %+v", c)
	}
}

func TestFileAndEnvPrecedence(t *testing.T) {
	rc := isolate(t)
	text := "# Fuel config\n" +
		"data_path: /a" + string(os.PathListSeparator) + "/b  # two dirs\n" +
		"floatX: 'float64'\n" +
		"default_seed: 7\n"
	if err := os.WriteFile(rc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/a", "/b"}; !reflect.DeepEqual(c.DataPath, want) || c.DataPathSource != rc {
		t.Errorf("data path from file: %q from %q, want %q", c.DataPath, c.DataPathSource, want)
	}
	if c.FloatX != nd.Float64 || c.DefaultSeed != 7 {
		t.Errorf("floatX %s seed %d, want float64 7", c.FloatX, c.DefaultSeed)
	}

	t.Setenv(EnvDataPath, "/x"+string(os.PathListSeparator)+string(os.PathListSeparator)+"$FUELTEST_DIR/y")
	t.Setenv("FUELTEST_DIR", "/z")
	t.Setenv(EnvFloatX, "float32")
	if got, want := DataPath(), []string{"/x", "/z/y"}; !reflect.DeepEqual(got, want) {
		t.Errorf("FUEL_DATA_PATH: %q, want %q", got, want)
	}
	if FloatX() != nd.Float32 {
		t.Errorf("FUEL_FLOATX=float32 gave %s", FloatX())
	}
}

func TestYAMLLists(t *testing.T) {
	rc := isolate(t)
	for _, text := range []string{
		"data_path:\n  - /a\n  - \"/b\"\n",
		"data_path: [/a, '/b']\n",
	} {
		if err := os.WriteFile(rc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, want := DataPath(), []string{"/a", "/b"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%q: data path %q, want %q", text, got, want)
		}
	}
}

func TestBadConfig(t *testing.T) {
	rc := isolate(t)
	for text, want := range map[string]string{
		"data_dir: /a\n":                     "unrecognized config in YAML: data_dir",
		"floatX: int64\n":                    "floatX must be float32 or float64",
		"floatX: float16\n":                  "unknown dtype",
		"default_seed: one\n":                "not an integer",
		"data_path /a\n":                     "want `key: value`",
		"  data_path: /a\n":                  "unexpected indentation",
		"data_path: [/a\n":                   "unterminated list",
		"floatX: float32\nfloatX: float64\n": "given twice",
	} {
		if err := os.WriteFile(rc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", text, err, want)
		}
	}
	isolate(t)
	t.Setenv(EnvFloatX, "int32")
	if _, err := Load(); err == nil || !strings.Contains(err.Error(), EnvFloatX) {
		t.Errorf("FUEL_FLOATX=int32: error %v", err)
	}
}

func TestFindFile(t *testing.T) {
	isolate(t)
	_, err := FindFile("mnist.hdf5")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("no data path: got %v, want a *NotFoundError", err)
	}
	for _, want := range []string{"mnist.hdf5", "FUEL_DATA_PATH is not set", "blocks-repl fuel download mnist"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	d1, d2 := t.TempDir(), t.TempDir()
	t.Setenv(EnvDataPath, d1+string(os.PathListSeparator)+d2)
	_, err = FindFile("data.bin")
	if err == nil || !strings.Contains(err.Error(), d1+", "+d2) || !strings.Contains(err.Error(), "FUEL_DATA_PATH") {
		t.Errorf("missing file: error %v should list %s and %s", err, d1, d2)
	}
	if err := os.MkdirAll(filepath.Join(d2, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(d2, "data.bin"), filepath.Join(d2, "sub", "x"), filepath.Join(d1, "sub", "x")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := FindFile("data.bin"); err != nil || got != filepath.Join(d2, "data.bin") {
		t.Errorf("FindFile = %q, %v; want the file in the second directory", got, err)
	}
	// A directory of the same name is not a file.
	if _, err := FindFile("sub"); err == nil {
		t.Error("FindFile found a directory")
	}
	// Every name is tried in the first directory before the second.
	if got, _ := FindFirst("data.bin", "sub/x"); got != filepath.Join(d1, "sub", "x") {
		t.Errorf("FindFirst = %q, want %q", got, filepath.Join(d1, "sub", "x"))
	}
}
