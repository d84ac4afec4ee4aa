package starlib_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// A file built with the h5py module, read by Python's h5py (Debian's
// /usr/bin/python3): the datasets, their dimension labels, the vlen
// source's shapes and shape_labels scales, the split rows (an index split
// and a range split) and a string attribute are what the script wrote.
func TestH5pyModuleReadByH5py(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import h5py, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 with h5py and numpy is needed: %v", err)
	}
	path := filepath.Join(t.TempDir(), "f.hdf5")
	_, err := starlib.ExecFile("w.star", []byte(`
load("h5py", "File", "special_dtype")
load("fuel.datasets", "H5PYDataset")
load("numpy", "arange", "array")
f = File(PATH, mode = "w")
x = f.create_dataset("x", (4, 2), dtype = "int32")
x[slice(0, 2)] = [[1, 2], [3, 4]]
x[2] = [5, 6]
x.dims[0].label = "batch"
x.dims[1].label = "feature"
v = f.create_dataset("v", (4,), dtype = special_dtype(vlen = "uint8"))
v[slice(None)] = [arange(2 * k + 2).astype("uint8") for k in range(4)]
v.dims[0].label = "batch"
shapes = f.create_dataset("v_shapes", (4, 2), dtype = "int64")
shapes[slice(None)] = array([[1, 2], [2, 2], [2, 3], [4, 2]])
labels = f.create_dataset("v_shape_labels", (2,), dtype = "S6")
labels[slice(None)] = [b"height", b"width"]
v.dims.create_scale(shapes, "shapes")
v.dims[0].attach_scale(shapes)
v.dims.create_scale(labels, "shape_labels")
v.dims[0].attach_scale(labels)
f["odd_indices"] = array([1, 3])
f.attrs["split"] = H5PYDataset.create_split_array({
    "odd": {"x": (-1, -1, f["odd_indices"].ref), "v": (-1, -1, f["odd_indices"].ref, "odd ones")},
    "first": {"x": (0, 2)},
})
f.attrs["note"] = "made by h5py_module_test"
f.close()
`), starlib.Options{Library: all.Library(), Predeclared: starlark.StringDict{"PATH": starlark.String(path)}})
	if err != nil {
		t.Fatal(err)
	}
	const py = `
import sys, json, h5py
f = h5py.File(sys.argv[1], 'r')
out = {'keys': sorted(f.keys()), 'x': f['x'][...].tolist(), 'x_labels': [d.label for d in f['x'].dims],
       'v': [r.tolist() for r in f['v'][...]], 'v_shapes': f['v'].dims[0]['shapes'][...].tolist(),
       'v_shape_labels': [s.decode() for s in f['v'].dims[0]['shape_labels'][...]],
       'note': f.attrs['note'].decode(), 'rows': []}
for r in f.attrs['split']:
    out['rows'].append([r['split'].decode(), r['source'].decode(), int(r['start']), int(r['stop']),
                        f[r['indices']][...].tolist() if r['indices'] else None, bool(r['available']), r['comment'].decode()])
json.dump(out, sys.stdout)
`
	b, err := exec.Command("/usr/bin/python3", "-c", py, path).Output()
	if err != nil {
		t.Fatalf("h5py: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(`{
	"keys": ["odd_indices", "v", "v_shape_labels", "v_shapes", "x"],
	"x": [[1, 2], [3, 4], [5, 6], [0, 0]], "x_labels": ["batch", "feature"],
	"v": [[0, 1], [0, 1, 2, 3], [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5, 6, 7]],
	"v_shapes": [[1, 2], [2, 2], [2, 3], [4, 2]], "v_shape_labels": ["height", "width"],
	"note": "made by h5py_module_test",
	"rows": [["odd", "v", 0, 0, [1, 3], true, "odd ones"], ["odd", "x", 0, 0, [1, 3], true, "."],
	         ["first", "v", 0, 0, null, false, "."], ["first", "x", 0, 2, null, true, "."]]}`), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		t.Errorf("h5py reads\n%s\nwant\n%s", gb, b)
	}
}

// The h5py module's refusals: each a clear error naming what is wrong.
func TestH5pyModuleErrors(t *testing.T) {
	dir := t.TempDir()
	for src, want := range map[string]string{
		`f = File(D + "/a.h5", "w"); f.create_dataset("x", (2,)); f.close()`:                                                                                        "needs its split attribute",
		`f = File(D + "/a.h5", "q")`:                                                                                                                                `invalid mode "q"`,
		`f = File(D + "/none.h5", "r")`:                                                                                                                             "none.h5",
		`f = File(D + "/a.h5", "w"); f.create_dataset("x", (2,)); f.create_dataset("x", (3,))`:                                                                      "name already exists",
		`f = File(D + "/a.h5", "w"); d = f.create_dataset("x", (2, 3)); d[slice(0, 1)] = [[1, 2]]`:                                                                  "can't broadcast",
		`f = File(D + "/a.h5", "w"); d = f.create_dataset("x", (2, 3)); d[5] = [1, 2, 3]`:                                                                           "out of range",
		`f = File(D + "/a.h5", "w"); d = f.create_dataset("x", (2,)); d.dims[0].attach_scale(d)`:                                                                    "not a dimension scale",
		`f = File(D + "/a.h5", "w"); f.create_dataset("v", (2, 2), dtype = special_dtype(vlen = "uint8"))`:                                                          "is 1-D",
		`f = File(D + "/b.h5", "w"); f["x"] = [1, 2]; f.attrs["split"] = H5PYDataset.create_split_array({"a": {"x": (0, 2)}}); f.close(); f["x"]`:                   "is closed",
		`f = File(D + "/a.h5", "w"); f.attrs["split"] = [("a", "b")]`:                                                                                               "want a tuple (split, source",
		`f = File(D + "/a.h5", "w"); f.attrs["n"] = 3`:                                                                                                              "only string attributes",
		`f = File(D + "/a.h5", "w"); f.create_dataset("g/x", (2,))`:                                                                                                 "only datasets in the root group",
		`f = File(D + "/a.h5", "w"); f.create_dataset("x", (1 << 40, 1 << 40))`:                                                                                     "bad shape",
		`special_dtype(vlen = "str")`:                                                                                                                               "cannot be a variable-length element type",
		`f = File(D + "/a.h5", "w"); v = f.create_dataset("v", (1,), dtype = special_dtype(vlen = "uint8")); v[0] = [[1]]`:                                          "is 1-D",
		`f = File(D + "/a.h5", "w"); f["v"] = 3`:                                                                                                                    "scalar dataset",
		`f = File(D + "/a.h5", "w"); f.create_dataset("s", (2,), dtype = "S3"); f.attrs["split"] = H5PYDataset.create_split_array({"a": {"s": (0, 2)}}); f.close()`: "a string dataset is written only",
		`f = File(D + "/a.h5", "w"); v = f.create_dataset("v", (1,), dtype = special_dtype(vlen = "uint8")); f.attrs["split"] = H5PYDataset.create_split_array({"a": {"v": (0, 1)}}); f.close()`: "needs the dimension scales",
	} {
		_, err := starlib.ExecFile(filepath.Join(dir, "e.star"), []byte(`load("h5py", "File", "special_dtype")
load("fuel.datasets", "H5PYDataset")
`+src+"\n"), starlib.Options{Library: all.Library(), Predeclared: starlark.StringDict{"D": starlark.String(dir)}, Modules: map[string]*starlarkstruct.Module{}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant an error containing %q", src, err, want)
		}
	}
}
