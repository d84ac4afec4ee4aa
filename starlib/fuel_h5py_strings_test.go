package starlib_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// ilsvrcLikePy writes, with h5py, a file in the layout of Fuel's ILSVRC
// converters (a 1-D vlen uint8 `encoded_images` with no shapes scale, an
// S12 `filenames` of shape (N, 1), an int16 `targets`), splits train
// [0, 12), valid [12, 16) and test by index dataset [16, 18, 19], and
// prints what h5py reads back.
const ilsvrcLikePy = `
import sys, json
from itertools import product
import h5py, numpy
N = 20
rng = numpy.random.RandomState(11)
names = [('n%02d_%d.JPEG' % (i, i * 37)).encode() for i in range(N)]
names[3] = b''
names[4] = b'abcdefghijkl'
names[5] = b'a\x00b\xff'
with h5py.File(sys.argv[1], 'w') as f:
    im = f.create_dataset('encoded_images', shape=(N,), dtype=h5py.special_dtype(vlen=numpy.dtype('uint8')))
    for i in range(N):
        im[i] = rng.randint(0, 256, size=(0 if i == 2 else int(rng.randint(1, 30)),)).astype('uint8')
    fn = f.create_dataset('filenames', shape=(N, 1), dtype='S12')
    fn[...] = numpy.array(names, dtype='S12')[:, None]
    tg = f.create_dataset('targets', data=(numpy.arange(N) * 7 % 11 - 3).astype('int16')[:, None])
    for d in (im, fn, tg):
        d.dims[0].label = 'batch'
    fn.dims[1].label = 'index'
    tg.dims[1].label = 'index'
    idx = f.create_dataset('test_indices', data=numpy.array([16, 18, 19], dtype='i8'))
    sources = ['encoded_images', 'filenames', 'targets']
    split_dict = {'train': (0, 12, h5py.Reference()), 'valid': (12, 16, h5py.Reference()), 'test': (0, 0, idx.ref)}
    arr = numpy.empty(9, dtype=numpy.dtype([
        ('split', 'a', 5), ('source', 'a', 14), ('start', numpy.int64), ('stop', numpy.int64),
        ('indices', h5py.special_dtype(ref=h5py.Reference)), ('available', numpy.bool_), ('comment', 'a', 1)]))
    for i, (split, source) in enumerate(product(split_dict, sources)):
        start, stop, ref = split_dict[split]
        arr[i] = (split.encode(), source.encode(), start, stop, ref, True, b'.')
    f.attrs['split'] = arr
with h5py.File(sys.argv[1], 'r') as f:
    json.dump(dict(names=[list(bytes(r[0])) for r in f['filenames'][:]],
                   images=[x.tolist() for x in f['encoded_images'][:]],
                   targets=[int(r[0]) for r in f['targets'][:]]), sys.stdout)
`

// TestH5PYDatasetStringSourcesMatchH5py: fuel.datasets.H5PYDataset reads
// an ILSVRC-layout file h5py wrote as Fuel does: filenames as rows of
// bytes (numpy's S12 elements), encoded_images as a list of uint8 arrays,
// in get_data (slice, list, single), through a DataStream with a scheme,
// with a subset, and in memory (data_sources).
func TestH5PYDatasetStringSourcesMatchH5py(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import h5py, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 with h5py and numpy is needed: %v", err)
	}
	path := filepath.Join(t.TempDir(), "ilsvrc_like.hdf5")
	out, err := exec.Command("/usr/bin/python3", "-c", ilsvrcLikePy, path).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var ref struct {
		Names   [][]byte `json:"-"`
		RawName [][]int  `json:"names"`
		Images  [][]int  `json:"images"`
		Targets []int    `json:"targets"`
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	var names, images, targets []starlark.Value
	for i, n := range ref.RawName {
		b := make([]byte, len(n))
		for j, v := range n {
			b[j] = byte(v)
		}
		names = append(names, starlark.Bytes(b))
		var im []starlark.Value
		for _, v := range ref.Images[i] {
			im = append(im, starlark.MakeInt(v))
		}
		images = append(images, starlark.NewList(im))
		targets = append(targets, starlark.MakeInt(ref.Targets[i]))
	}
	if string(names[5].(starlark.Bytes)) != "a\x00b\xff" || len(ref.Images[2]) != 0 {
		t.Fatalf("reference: %q, %v", names[5], ref.Images[2])
	}
	_, err = starlib.ExecFile("strings.star", []byte(`
load("fuel.datasets", "H5PYDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme", "ShuffledScheme")
load("numpy.random", "RandomState")

def eq(a, b):
    if a != b:
        fail("%r != %r" % (a, b))

def check(batch, rows, single = False):
    im, fn, tg = batch
    if single:
        eq(fn, [NAMES[rows[0]]])
        eq(im.tolist(), IMAGES[rows[0]])
        eq(str(im.dtype), "uint8")
        eq(tg.tolist(), [TARGETS[rows[0]]])
        return
    eq(fn, [[NAMES[r]] for r in rows])
    eq(type(fn[0][0]), "bytes")
    eq([x.tolist() for x in im], [IMAGES[r] for r in rows])
    eq([str(x.dtype) for x in im], ["uint8"] * len(rows))
    eq(tg.tolist(), [[TARGETS[r]] for r in rows])

# The ILSVRC file used to open only with sources=("targets",).
train = H5PYDataset(PATH, which_sets = ("train",), subset = slice(2, 10))
eq(train.sources, ("encoded_images", "filenames", "targets"))
eq(train.vlen_sources, ())
eq(train.axis_labels["filenames"], ("batch", "index"))
eq(train.axis_labels["encoded_images"], ("batch",))
eq(train.num_examples, 8)
state = train.open()
check(train.get_data(state, slice(0, 3)), [2, 3, 4])
check(train.get_data(state, [5, 1, 1, 0]), [7, 3, 3, 2])
check(train.get_data(state, 3), [5], single = True)
train.close(state)

# A data stream with a scheme (batches of 3 over valid + test).
vt = H5PYDataset(PATH, which_sets = ("valid", "test"))
rows = [12, 13, 14, 15, 16, 18, 19]
stream = DataStream(vt, iteration_scheme = SequentialScheme(vt.num_examples, 3))
seen = []
for batch in stream.get_epoch_iterator():
    check(batch, rows[len(seen):len(seen) + len(batch[1])])
    seen += batch[1]
eq(len(seen), 7)
# As a dict, one source picked, shuffled.
stream = DataStream(vt, iteration_scheme = ShuffledScheme(vt.num_examples, 4, rng = RandomState(3)))
got = []
for b in stream.get_epoch_iterator(as_dict = True):
    got += [row[0] for row in b["filenames"]]
eq(sorted(got), sorted([NAMES[r] for r in rows]))

# In memory: data_sources holds the loaded subset.
mem = H5PYDataset(PATH, which_sets = ("test",), load_in_memory = True, sources = ("filenames", "encoded_images"))
fn, im = mem.data_sources
eq(fn, [[NAMES[16]], [NAMES[18]], [NAMES[19]]])
eq([x.tolist() for x in im], [IMAGES[16], IMAGES[18], IMAGES[19]])
fn2, im2 = mem.get_data(None, [2, 0])
eq(fn2, [[NAMES[19]], [NAMES[16]]])
eq(im2[0].tolist(), IMAGES[19])
`), starlib.Options{Library: all.Library(), Predeclared: starlark.StringDict{
		"PATH":    starlark.String(path),
		"NAMES":   starlark.NewList(names),
		"IMAGES":  starlark.NewList(images),
		"TARGETS": starlark.NewList(targets),
	}})
	if err != nil {
		if e, ok := err.(*starlark.EvalError); ok {
			t.Fatal(e.Backtrace())
		}
		t.Fatal(err)
	}
}

// TestConvertILSVRCFromStarlark: fuel.converters.ilsvrc2010's
// convert_ilsvrc2010 and ilsvrc2012's convert_ilsvrc2012 convert the small
// stand-in inputs (make_standin_devkit.py --small; their contents are
// checked against h5py in fuel/converters' TestConvertILSVRC), return
// (output_path,) as Fuel's, and H5PYDataset reads every split of the
// result: 2012's test split has no targets.
func TestConvertILSVRCFromStarlark(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import scipy.io, PIL, numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 with scipy and PIL writes the stand-in inputs: %v", err)
	}
	in, out := t.TempDir(), t.TempDir()
	if b, err := exec.Command("/usr/bin/python3", "../fuel/converters/testdata/make_standin_devkit.py", "--small", in).Output(); err != nil {
		t.Fatalf("make_standin_devkit.py: %v %s", err, b)
	}
	_, err := starlib.ExecFile("convert.star", []byte(`
load("fuel.converters.ilsvrc2010", "convert_ilsvrc2010")
load("fuel.converters.ilsvrc2012", "convert_ilsvrc2012")
load("fuel.datasets", "H5PYDataset")

def eq(a, b):
    if a != b:
        fail("%r != %r" % (a, b))

p10 = convert_ilsvrc2010(IN + "/2010", OUT, shuffle_seed = 4294967295)  # numpy's largest seed
eq(p10, (OUT + "/ilsvrc2010.hdf5",))
p12 = convert_ilsvrc2012(IN + "/2012", OUT, output_filename = "i12.hdf5")
eq(p12, (OUT + "/i12.hdf5",))
for path, year in [(p10[0], 2010), (p12[0], 2012)]:
    sizes = {}
    for split in ["train", "valid", "test"]:
        d = H5PYDataset(path, which_sets = (split,))
        sizes[split] = d.num_examples
        want = ("encoded_images", "filenames", "targets")
        if year == 2012 and split == "test":
            want = ("encoded_images", "filenames")
        eq(d.sources, want)
        batch = d.get_data(None, list(range(d.num_examples)))
        names = [row[0] for row in batch[1]]
        prefix = bytes({"train": "n0000", "valid": "ILSVRC%d_val_" % year, "test": "ILSVRC%d_test_" % year}[split])
        eq([n[:len(prefix)] for n in names], [prefix] * len(names))
        # JPEG bytes: each starts with the SOI marker (gzipped ones were gunzipped).
        eq([x.tolist()[:2] for x in batch[0]], [[255, 216]] * len(names))
        if split != "train":
            eq(names, sorted(names))
    eq(sizes, {"train": 18, "valid": 7, "test": 5})

# Fuel's dataset classes over the converted files, found in the data path,
# with their default transformer (the JPEGs decoded to RGB).
load("fuel.config", "config")
load("fuel.datasets", "ILSVRC2010")
load("fuel.datasets.imagenet", "ILSVRC2012")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
config.data_path = OUT
ds = ILSVRC2010(("valid",))
eq((ds.num_examples, ds.sources), (7, ("encoded_images", "filenames", "targets")))
n = 0
for images, filenames, targets in DataStream.default_stream(ds, iteration_scheme = SequentialScheme(7, 3)).get_epoch_iterator():
    for im in images:
        eq((im.shape, str(im.dtype)), ((3, 8, 8), "uint8"))
        eq(im[0].tolist(), im[2].tolist())  # a gray image
        n += 1
eq(n, 7)
raw = DataStream(ds, iteration_scheme = SequentialScheme(7, 7)).get_epoch_iterator().next()
eq(raw[0][0].tolist()[:2], [255, 216])
`), starlib.Options{Library: all.Library(), Predeclared: starlark.StringDict{
		"IN":  starlark.String(in),
		"OUT": starlark.String(out),
	}})
	if err != nil {
		if e, ok := err.(*starlark.EvalError); ok {
			t.Fatal(e.Backtrace())
		}
		t.Fatal(err)
	}
}
