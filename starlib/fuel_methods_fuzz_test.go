package starlib_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// fuelMethodsSetup builds one of each kind of Fuel object a script can
// hold (datasets, schemes, streams, transformers, subsets, iterators)
// and the argument values FuzzFuelMethods draws from: every Starlark
// type, strings, nested and empty lists, mixed lists, dicts, huge and
// negative ints, slices, ranges, arrays and the Fuel objects themselves.
// DIR is the directory of upstream's HDF5 test files.
const fuelMethodsSetup = `
load("fuel.datasets", "IterableDataset", "IndexableDataset", "H5PYDataset", "PytablesDataset", "TextFile")
load("fuel.datasets.toy", "Spiral", "SwissRoll")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ConstantScheme", "SequentialScheme", "ShuffledScheme", "SequentialExampleScheme",
     "ShuffledExampleScheme", "ConcatenatedScheme", "cross_validation")
load("fuel.transformers", "Batch", "Padding", "Mapping", "Filter", "Merge", "Unpack", "Cache", "Flatten",
     "ScaleAndShift", "Cast", "SortMapping", "MultiProcessing", "ForceFloatX", "Rename", "FilterSources")
load("fuel.transformers.sequences", "NGrams", "Window")
load("fuel.transformers.image", "ImagesFromBytes", "MinimumImageDimensions", "Random2DRotation", "RandomFixedSizeCrop")
load("fuel.transformers.defaults", "ToBytes")
load("fuel.utils", "Subset")
load("fuel.config", "config")
load("fuel.config_parser", "Configuration")
load("numpy", "arange", "zeros", "ones")
load("numpy.random", "RandomState")

iterable = IterableDataset({"features": [[1, 2], [3, 4], [5, 6]], "targets": [0, 1, 0]})
strings = IterableDataset(["Hello world!", "", "é"])
indexable = IndexableDataset({"features": arange(24).reshape((6, 4)), "targets": arange(6)})
ragged = IndexableDataset({"words": [[1, 2, 3], [4], [], [5, 6]]})
images = IndexableDataset({"features": zeros((4, 3, 5, 5), dtype = "uint8")})
h5 = H5PYDataset(DIR + "file.hdf5", which_sets = ("train",))
h5out = H5PYDataset(DIR + "file.hdf5", which_sets = ("train", "test"), load_in_memory = False)
vl = H5PYDataset(DIR + "test_vl.hdf5", which_sets = ("train",))
tables = PytablesDataset(DIR + "tmp.h5", ("y",), 0, 10)
text = TextFile(files = [TEXT], dictionary = {"<UNK>": 0, "</S>": 1, "<S>": 2, "this": 3})
spiral = Spiral(num_examples = 10)
roll = SwissRoll(num_examples = 10)

constant = ConstantScheme(2, num_examples = 5)
sequential = SequentialScheme(6, 4)
shuffled = ShuffledScheme(6, 4, rng = RandomState(3))
example = SequentialExampleScheme(range(4))
shuffled_example = ShuffledExampleScheme(4)
concatenated = ConcatenatedScheme([sequential, shuffled])
folds = cross_validation(SequentialScheme, 6, 3, batch_size = 2)

stream = DataStream(indexable, iteration_scheme = sequential)
examples = DataStream(iterable)
batches = Batch(DataStream(iterable), ConstantScheme(2))
padded = Padding(DataStream(ragged, iteration_scheme = SequentialScheme(4, 3)))
mapped = Mapping(examples, lambda x: x)
filtered = Filter(examples, lambda x: True)
merged = Merge([DataStream(iterable), DataStream(strings)], ("a", "b", "c"))
unpacked = Unpack(stream)
cached = Cache(stream, ConstantScheme(3))
flat = Flatten(stream)
scaled = ScaleAndShift(stream, 2.0, -1.0)
cast = Cast(stream, "float32")
sorted_ = Mapping(stream, SortMapping(lambda e: e[1]))
prefetched = MultiProcessing(examples, max_store = 2)
forced = ForceFloatX(stream)
renamed = Rename(stream, {"features": "x"})
kept = FilterSources(stream, ("targets",))
ngrams = NGrams(2, DataStream(IterableDataset([[1, 2, 3, 4]])))
window = Window(0, 2, 2, True, DataStream(IterableDataset([[1, 2, 3, 4, 5]])))
image_stream = DataStream(images, iteration_scheme = SequentialScheme(4, 2))
bytes_ = ImagesFromBytes(DataStream(IterableDataset([[137, 80, 78, 71]])), which_sources = ("data",))
minimum = MinimumImageDimensions(image_stream, (7, 7))
rotated = Random2DRotation(image_stream, 0.5, rng = RandomState(1))
cropped = RandomFixedSizeCrop(image_stream, (3, 3), rng = RandomState(1))
to_bytes = ToBytes(DataStream(IterableDataset([[1, 2, 3]])))
subset = Subset([1, 3, 4], 10)
subset_slice = Subset(slice(2, 8), 10)
epoch = stream.get_epoch_iterator()
load("h5py", "File", "special_dtype", "Reference")
load("hashlib", "md5")
load("fuel.datasets", "H5PYDataset")
h5w = File(TMP + "/fuzz.hdf5", "w")
h5x = h5w.create_dataset("x", (4, 2), dtype = "int32")
h5v = h5w.create_dataset("v", (2,), dtype = special_dtype(vlen = "uint8"))
h5s = h5w.create_dataset("s", (2,), dtype = "S5")
h5w.attrs["split"] = H5PYDataset.create_split_array({"a": {"x": (0, 4)}})
h5r = File(DIR + "file.hdf5", "r")
hashed = md5(b"abc")
requests = shuffled.get_request_iterator()
configuration = Configuration()
configuration.add_config("n", int, default = 3, env_var = "FUZZ_NO_SUCH_VAR")
configuration.add_config("s", str)

objects = [
    iterable, strings, indexable, ragged, images, h5, h5out, vl, tables, text, spiral, roll,
    constant, sequential, shuffled, example, shuffled_example, concatenated, folds,
    stream, examples, batches, padded, mapped, filtered, merged, unpacked, cached, flat, scaled, cast,
    sorted_, prefetched, forced, renamed, kept, ngrams, window, bytes_, minimum, rotated, cropped, to_bytes,
    subset, subset_slice, epoch, requests, config, configuration, Subset, H5PYDataset,
    h5w, h5x, h5v, h5s, h5x.dims, h5x.dims[0], h5w.attrs, h5r, h5r["features"], hashed, Reference(),
]

values = [
    None, True, False, 0, 1, -1, 2, 3, -3, 7, 1 << 70, -(1 << 70), 1 << 63, -(1 << 63), 1 << 31, -(1 << 31) - 1,
    0.0, 0.5, -2.5, float("nan"), float("inf"), 1e300,
    "", "x", "features", "targets", "words", "data", "train", "test", "float32", "int64", "floatX", "Hello world!", "é",
    [], [[]], [0], [1, 2], [2, 1, 1], [-1, 5], [1 << 70], [[1, 2], [3]], [[[1]]], [None], ["a", "b"], [1, "a", None],
    [0.5, [1]], (), (1,), (2, 2), (-1, 3), ("train",), ("features", "targets"), ("nope",),
    {}, {"features": [[1, 2]]}, {"data": ["Hello"]}, {1: 2}, {"features": "x"}, {"x": []},
    slice(None), slice(1, 3), slice(-3, 100), slice(5, 2), range(0), range(3), range(-5, 5, 2),
    zeros((0,)), zeros((2, 3)), arange(5), ones((1, 1, 2, 2)), zeros((3,), dtype = "uint8"),
    lambda *a, **k: None, lambda x: x, RandomState(1),
    iterable, indexable, stream, sequential, constant, subset, epoch,
]
`

// FuzzFuelMethods calls the methods and attributes of Fuel's objects
// (datasets, schemes, streams, transformers, subsets, iterators, the
// configuration) with arguments of every kind, sets their settable
// attributes, and reads what an iterator or a call returns. A method may
// refuse its arguments with a Starlark error; it must never panic, crash
// the process or hang. FuzzBuiltins covers the module-level constructors.
func FuzzFuelMethods(f *testing.F) {
	dir, err := filepath.Abs("testdata/upstream/fuel/data/hdf5")
	if err != nil {
		f.Fatal(err)
	}
	text, err := filepath.Abs("testdata/upstream/fuel/data/sentences1.txt")
	if err != nil {
		f.Fatal(err)
	}
	setup := fmt.Sprintf("DIR = %q\nTEXT = %q\nTMP = %q\n%s", dir+"/", text, f.TempDir(), fuelMethodsSetup)
	// Every object and every one of its attributes once, with no, one and
	// two arguments.
	globals, err := starlib.ExecFile("setup.star", []byte(setup), starlib.Options{Library: all.Library(), FloatX: "float32", Stdout: discard{}})
	if err != nil {
		f.Fatal(err)
	}
	objects := globals["objects"].(*starlark.List)
	for i := 0; i < objects.Len(); i++ {
		for j := range attrNames(objects.Index(i)) {
			f.Add(uint8(i), uint8(j), []byte{})
			f.Add(uint8(i), uint8(j), []byte{byte(3*i + j)})
			f.Add(uint8(i), uint8(j), []byte{byte(i + 5*j), 0x80 | byte(j)})
		}
		f.Add(uint8(i), uint8(255), []byte{byte(i), 0x40})
	}
	f.Fuzz(func(t *testing.T, which, attr uint8, plan []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		in, err := starlib.NewInterp(starlib.Options{Library: all.Library(), FloatX: "float32", Context: ctx, Stdout: discard{}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() { done <- fuzzFuelMethod(in, setup, which, attr, plan) }()
		select {
		case failure := <-done:
			if failure != "" {
				t.Fatal(failure)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("object %d attribute %d with %v did not return in 30s", which, attr, plan)
		}
	})
}

// attrNames are v's attribute names, sorted.
func attrNames(v starlark.Value) []string {
	ha, ok := v.(starlark.HasAttrs)
	if !ok {
		return nil
	}
	names := append([]string(nil), ha.AttrNames()...)
	sort.Strings(names)
	return names
}

// fuzzFuelMethod runs the setup on in, then one step of the plan: an
// object's attribute read, called or set (attribute 255 and past the
// last: the object itself called, indexed or iterated). It returns ""
// or the description of an internal error.
func fuzzFuelMethod(in *starlib.Interp, setup string, which, attr uint8, plan []byte) string {
	globals, err := in.ExecFile("setup.star", []byte(setup))
	if err != nil {
		return "setup: " + err.Error()
	}
	objects := globals["objects"].(*starlark.List)
	values := globals["values"].(*starlark.List)
	obj := objects.Index(int(which) % objects.Len())
	var args starlark.Tuple
	var kwargs []starlark.Tuple
	seen := map[string]bool{}
	for i, b := range plan {
		if i >= 6 {
			break
		}
		v := values.Index(int(b&0x7f) % values.Len())
		if b&0x80 == 0 {
			args = append(args, v)
			continue
		}
		k := fuelFuzzKwargs[(int(b)*7+i)%len(fuelFuzzKwargs)]
		if !seen[k] {
			seen[k] = true
			kwargs = append(kwargs, starlark.Tuple{starlark.String(k), v})
		}
	}
	names := attrNames(obj)
	what := obj.Type()
	var out starlark.Value
	switch {
	case int(attr) < len(names):
		name := names[attr]
		what += "." + name
		if len(plan) > 0 && plan[0]&0x40 != 0 && len(args) > 0 {
			if sf, ok := obj.(starlark.HasSetField); ok {
				err = sf.SetField(name, args[0])
				out = obj
				break
			}
		}
		out, err = obj.(starlark.HasAttrs).Attr(name)
		if c, ok := out.(starlark.Callable); ok && err == nil {
			out, err = starlark.Call(in.Thread, c, args, kwargs)
		}
	default:
		if c, ok := obj.(starlark.Callable); ok {
			what += "()"
			out, err = starlark.Call(in.Thread, c, args, kwargs)
		} else if ix, ok := obj.(starlark.Indexable); ok && len(args) > 0 {
			// Index's contract is a valid index: the caller checks it.
			if i, err := starlark.AsInt32(args[0]); err == nil && i >= 0 && i < ix.Len() {
				what += "[i]"
				out = ix.Index(i)
			}
		} else if m, ok := obj.(starlark.Mapping); ok && len(args) > 0 {
			what += "[k]"
			out, _, err = m.Get(args[0])
		}
	}
	if err != nil {
		if strings.Contains(err.Error(), "internal error") {
			return fmt.Sprintf("%s(%v, %v): %v", what, args, kwargs, err)
		}
		return ""
	}
	// Read what came back: an iterator or an iterable, a few items; its
	// string form.
	if out != nil {
		_ = out.String()
		if it, ok := out.(starlark.Iterable); ok {
			iter := it.Iterate()
			var x starlark.Value
			for n := 0; n < 50 && iter.Next(&x); n++ {
				_ = x.String()
			}
			iter.Done()
		}
	}
	return ""
}

var fuelFuzzKwargs = []string{"request", "state", "as_dict", "which_sources", "source_name", "example", "batch",
	"sources", "axis_labels", "subset_request", "indexable", "sort_indices", "list_or_slice", "num_examples",
	"batch_size", "rng", "iteration_scheme", "data_stream", "path", "which_sets", "subset", "load_in_memory",
	"slice_", "original_num_examples", "split_dict", "bogus"}
