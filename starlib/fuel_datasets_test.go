package starlib_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

func TestFuelDatasetsScript(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FUEL_CONFIG", filepath.Join(dir, "no-fuelrc"))
	t.Setenv("FUEL_DATA_PATH", dir)
	// A variable-length file, for H5PYDataset from a script.
	w, err := h5.Create(filepath.Join(dir, "vlen.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	w.AddVlenSource("seq", []*nd.Array{nd.FromSlice([]float32{1, 2, 3, 4}, 2, 2), nd.FromSlice([]float32{5, 6}, 1, 2)}, []string{"batch", "time", "feature"})
	w.AddSplit(h5.SplitDef{Name: "train", Start: 0, Stop: 2})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	src := `
load("fuel.converters.base", "fill_hdf5_file")
load("fuel.datasets", "CIFAR10", "Iris", "H5PYDataset")
load("fuel.datasets.toy", "Spiral", "SwissRoll")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("numpy", "zeros", "array")

path = DIR + "/cifar10.hdf5"
train = zeros((4, 3, 32, 32), dtype="uint8") + 255
test = zeros((2, 3, 32, 32), dtype="uint8")
fill_hdf5_file(path, [
    ("train", "features", train), ("train", "targets", array([[1], [2], [3], [4]], dtype="uint8")),
    ("test", "features", test), ("test", "targets", array([[5], [6]], dtype="uint8"), "two"),
], axis_labels = {"features": ("batch", "channel", "height", "width"), "targets": ("batch", "index")},
   attributes = {"fuel_convert_version": "0.2"})
c = CIFAR10(("train",))
print(c.num_examples, c.sources, c.axis_labels["features"])
s = DataStream.default_stream(c, iteration_scheme = SequentialScheme(c.num_examples, 3))
for f, t in s.get_epoch_iterator():
    print(f.dtype, f.shape, f.max(), t.tolist())
test = CIFAR10(("test",), load_in_memory = False, sources = ("targets",))
print(test.get_data(request = [1, 0]))
sp = Spiral(num_examples = 4, classes = 2, seed = 3)
print(sp.sources, sp.num_examples)
print(SwissRoll(num_examples = 2).get_data(request = [0, 1])[1].dtype)
v = H5PYDataset(DIR + "/vlen.hdf5", ("train",))
seqs = v.get_data(request = [1, 0])[0]
print(len(seqs), seqs[0].shape, seqs[1].tolist())
fill_hdf5_file(DIR + "/v2.hdf5", [("train", "words", [[1, 2, 3], [4]]), ("train", "y", [[0], [1]])],
               axis_labels = {"words": ("batch", "time")})
w = H5PYDataset(DIR + "/v2.hdf5", ("train",), load_in_memory = True)
print(w.get_data(request = [0, 1]), w.axis_labels["words"])
`
	var out bytes.Buffer
	src = strings.Replace(src, "DIR", `"`+dir+`"`, -1)
	if _, err := starlib.ExecFile("datasets.star", []byte(src), starlib.Options{Stdout: &out, Library: all.Library()}); err != nil {
		t.Fatalf("%v\n%s", starlib.Backtrace(err), out.String())
	}
	want := `4 ("features", "targets") ("batch", "channel", "height", "width")
float32 (3, 3, 32, 32) 1.0 [[1], [2], [3]]
float32 (1, 3, 32, 32) 1.0 [[4]]
([[6],
 [5]],)
("features", "position", "label") 4
float32
2 (1, 2) [[1.0, 2.0], [3.0, 4.0]]
([[1, 2, 3], [4]], [[0],
 [1]]) ("batch", "time")
`
	if out.String() != want {
		t.Errorf("script printed\n%s\nwant\n%s", out.String(), want)
	}
	// Errors name the script line and what is wrong.
	_, err = starlib.ExecFile("bad.star", []byte("load('fuel.datasets', 'Iris')\nIris(('all',))\n"), starlib.Options{Stdout: &out, Library: all.Library()})
	if err == nil || !strings.Contains(starlib.Backtrace(err), "bad.star:2") || !strings.Contains(err.Error(), "iris.hdf5 not found") {
		t.Errorf("missing iris: %v", err)
	}
}

func TestIterableDatasetsScript(t *testing.T) {
	dir := t.TempDir()
	src := `
load("fuel.datasets", "IterableDataset", "TextFile")
load("fuel.streams", "DataStream")
d = IterableDataset({"words": [[1, 2], [3], [4, 5, 6]], "label": [0, 1, 0]}, sources = ("words",))
print(d.num_examples, d.sources)
for (w,) in DataStream(d).get_epoch_iterator():
    print(w.tolist())
t = TextFile([DIR + "/a.txt"], {"<S>": 0, "</S>": 1, "<UNK>": 2, "hello": 3}, preprocess = lambda s: s.lower())
print(t.num_examples, [x[0].tolist() for x in DataStream(t).get_epoch_iterator()])
`
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("Hello world\nHELLO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	src = strings.Replace(src, "DIR", `"`+dir+`"`, -1)
	if _, err := starlib.ExecFile("iterable.star", []byte(src), starlib.Options{Stdout: &out, Library: all.Library()}); err != nil {
		t.Fatalf("%v\n%s", starlib.Backtrace(err), out.String())
	}
	want := "3 (\"words\",)\n[1, 2]\n[3]\n[4, 5, 6]\nNone [[0, 3, 2, 1], [0, 3, 1]]\n"
	if out.String() != want {
		t.Errorf("script printed\n%s\nwant\n%s", out.String(), want)
	}
}
