//go:build cgo

package h5

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
)

// pyHostile writes a Fuel file (a split `train` of 4 rows of the uint8
// source `features`, shape (4, 8)) whose `features` gets its data from
// target, by kind:
//
//	external     HDF5 external storage (h5py's external=) on the file target
//	elink        an external link to target:/features
//	elink-group  a plain features, and an external link in a group /g
//	vds          a virtual dataset whose source is target:/features
//	userblock    a plain features after a 512-byte user block
//	plain        a plain features
const pyHostile = `
import h5py, numpy as np, sys
kind, path, target = sys.argv[1:4]
ref = h5py.special_dtype(ref=h5py.Reference)
split = np.array([(b'train', b'features', 0, 4, h5py.Reference(), True, b'.')],
                 dtype=[('split', 'S5'), ('source', 'S8'), ('start', '<i8'), ('stop', '<i8'),
                        ('indices', ref), ('available', '?'), ('comment', 'S1')])
with h5py.File(path, 'w', userblock_size=512 if kind == 'userblock' else 0) as f:
    if kind == 'external':
        f.create_dataset('features', shape=(4, 8), dtype='u1', external=[(target, 0, 32)])
    elif kind == 'elink':
        f['features'] = h5py.ExternalLink(target, '/features')
    elif kind == 'vds':
        layout = h5py.VirtualLayout(shape=(4, 8), dtype='u1')
        layout[:] = h5py.VirtualSource(target, 'features', shape=(4, 8))
        f.create_virtual_dataset('features', layout)
    else:
        f['features'] = np.arange(32, dtype='u1').reshape(4, 8)
        if kind == 'elink-group':
            f.create_group('g')['x'] = h5py.ExternalLink(target, '/features')
    f.attrs['split'] = split
`

// secretBytes is what the targets hold: 32 bytes that must never come
// back.
const secretBytes = "SECRET-SECRET-SECRET-SECRET-32b!"

// hostileFiles writes the target files (a raw file of secretBytes for
// external storage, an HDF5 file holding them as /features for links and
// virtual datasets) and one file per kind; it returns the kinds' paths.
func hostileFiles(t *testing.T) map[string]string {
	t.Helper()
	py := pythonH5py(t)
	dir := t.TempDir()
	raw := filepath.Join(dir, "secret.bin")
	if err := os.WriteFile(raw, []byte(secretBytes), 0o644); err != nil {
		t.Fatal(err)
	}
	h5 := filepath.Join(dir, "secret.h5")
	mk := `import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'w') as f:
    f['features'] = np.frombuffer(sys.argv[2].encode(), dtype='u1').reshape(4, 8)
`
	if out, err := exec.Command(py, "-c", mk, h5, secretBytes).CombinedOutput(); err != nil {
		t.Fatalf("h5py: %v\n%s", err, out)
	}
	paths := map[string]string{}
	for _, kind := range []string{"external", "elink", "elink-group", "vds", "userblock", "plain"} {
		target := h5
		if kind == "external" {
			target = raw
		}
		p := filepath.Join(dir, kind+".hdf5")
		if out, err := exec.Command(py, "-c", pyHostile, kind, p, target).CombinedOutput(); err != nil {
			t.Fatalf("h5py (%s): %v\n%s", kind, err, out)
		}
		paths[kind] = p
	}
	return paths
}

// TestFilesNamingOtherFilesRefused: an HDF5 file whose dataset used
// external storage (on /proc/self/environ, in the issue), an external
// link or a virtual dataset made libhdf5 open that other file itself,
// past every read check, and its bytes came back as the dataset's. Every
// reader now refuses such a file, and a file whose HDF5 data follows a
// user block (an .npy can be one), with an error that says what the file
// points to; no byte of the target comes back. h5py reads the same files'
// secret (the check that the files do what they claim).
func TestFilesNamingOtherFilesRefused(t *testing.T) {
	checkNoOpenObjects(t)
	paths := hostileFiles(t)
	py := pythonH5py(t)
	for kind, p := range paths {
		if kind == "plain" || kind == "userblock" || kind == "elink-group" {
			continue
		}
		out, err := exec.Command(py, "-c", "import h5py, sys; print(bytes(h5py.File(sys.argv[1], 'r')['features'][...].tobytes()).decode())", p).CombinedOutput()
		if err != nil || !strings.Contains(string(out), secretBytes) {
			t.Fatalf("%s: h5py does not read the target through it: %v %s", kind, err, out)
		}
	}
	wants := map[string]string{
		"external":    "its data lies outside the file, in " + filepath.Join(filepath.Dir(paths["plain"]), "secret.bin") + " (HDF5 external storage, 1 file)",
		"elink":       "/features is an external link to " + filepath.Join(filepath.Dir(paths["plain"]), "secret.h5") + ":/features",
		"elink-group": "/g/x is an external link to ",
		"vds":         "it is a virtual dataset, its data mapped from " + filepath.Join(filepath.Dir(paths["plain"]), "secret.h5") + ":features (1 source)",
		"userblock":   "the HDF5 data starts 512 bytes into the file, after a user block",
	}
	type reader struct {
		name string
		read func(p string) (any, error)
	}
	readers := []reader{
		{"Open", func(p string) (any, error) {
			d, err := Open(p, []string{"train"}, Options{})
			if err != nil {
				return nil, err
			}
			defer d.Close()
			return d.GetData(fuel.Request{Start: 0, Stop: 4})
		}},
		{"Open(load_in_memory)", func(p string) (any, error) {
			d, err := Open(p, []string{"train"}, Options{LoadInMemory: true})
			if err != nil {
				return nil, err
			}
			defer d.Close()
			return d.GetData(fuel.Request{Start: 0, Stop: 4})
		}},
		{"Open(driver=core)", func(p string) (any, error) {
			d, err := Open(p, []string{"train"}, Options{Driver: "core"})
			if err != nil {
				return nil, err
			}
			defer d.Close()
			return d.GetData(fuel.Request{Start: 0, Stop: 4})
		}},
		{"ReadAll", func(p string) (any, error) { return ReadAll(p, "features") }},
		{"Describe", func(p string) (any, error) { return Describe(p) }},
	}
	for kind, want := range wants {
		for _, r := range readers {
			got, err := r.read(paths[kind])
			if err == nil || !errors.Is(err, ErrNotSelfContained) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), paths[kind]) {
				t.Errorf("%s of %s: %v, %v; want an error saying %q", r.name, kind, got, err, want)
			}
			if err != nil && strings.Contains(err.Error(), secretBytes[:6]) {
				t.Errorf("%s of %s: the error carries the target's data: %v", r.name, kind, err)
			}
		}
	}
	// The same readers read the plain file.
	for _, r := range readers {
		if _, err := r.read(paths["plain"]); err != nil {
			t.Errorf("%s of the plain file: %v", r.name, err)
		}
	}
}
