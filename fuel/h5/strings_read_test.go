//go:build cgo

package h5

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// makeILSVRCLikePy writes, with h5py, a file in the layout of Fuel's
// ILSVRC converters: `encoded_images` a 1-D vlen uint8 dataset with no
// shapes scale, `filenames` numpy S12 of shape (N, 1) (with an empty
// name, a full-width one, one with an inner NUL and one with trailing
// NUL bytes that numpy drops), `targets` int16 (N, 1). Splits: train
// [0, 12), valid [12, 16), test through an index dataset [16, 18, 19].
// It prints, as JSON, every value as h5py reads it back.
const makeILSVRCLikePy = `
import sys, json
from itertools import product
import h5py, numpy

N = 20
rng = numpy.random.RandomState(7)
names = [('n%02d_%d.JPEG' % (i, i * 37)).encode() for i in range(N)]
names[3] = b''
names[4] = b'abcdefghijkl'
names[5] = b'a\x00b'
names[6] = b'xy\x00\x00'
with h5py.File(sys.argv[1], 'w') as f:
    im = f.create_dataset('encoded_images', shape=(N,), dtype=h5py.special_dtype(vlen=numpy.dtype('uint8')))
    for i in range(N):
        im[i] = rng.randint(0, 256, size=(0 if i == 2 else int(rng.randint(1, 40)),)).astype('uint8')
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
    arr = numpy.empty(len(split_dict) * len(sources), dtype=numpy.dtype([
        ('split', 'a', 5), ('source', 'a', 14), ('start', numpy.int64), ('stop', numpy.int64),
        ('indices', h5py.special_dtype(ref=h5py.Reference)), ('available', numpy.bool_), ('comment', 'a', 1)]))
    for i, (split, source) in enumerate(product(split_dict, sources)):
        start, stop, ref = split_dict[split]
        arr[i] = (split.encode(), source.encode(), start, stop, ref, True, b'.')
    f.attrs['split'] = arr
with h5py.File(sys.argv[1], 'r') as f:
    print(json.dumps(dict(
        Names=[[list(bytes(x)) for x in row] for row in f['filenames'][:]],
        NameDtype=str(f['filenames'].dtype),
        Images=[[int(v) for v in x] for x in f['encoded_images'][:]],
        ImageDtype=str(f['encoded_images'][0].dtype),
        Targets=[int(r[0]) for r in f['targets'][:]])))
`

type ilsvrcLike struct {
	Names      [][][]byte
	NameDtype  string
	Images     [][]int
	ImageDtype string
	Targets    []int
}

func writeILSVRCLike(t *testing.T) (string, ilsvrcLike) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ilsvrc_like.hdf5")
	var raw struct {
		Names      [][][]int
		NameDtype  string
		Images     [][]int
		ImageDtype string
		Targets    []int
	}
	pyH5(t, makeILSVRCLikePy, &raw, path)
	ref := ilsvrcLike{NameDtype: raw.NameDtype, Images: raw.Images, ImageDtype: raw.ImageDtype, Targets: raw.Targets}
	for _, row := range raw.Names {
		var r [][]byte
		for _, b := range row {
			x := make([]byte, len(b))
			for i, v := range b {
				x[i] = byte(v)
			}
			r = append(r, x)
		}
		ref.Names = append(ref.Names, r)
	}
	if ref.NameDtype != "|S12" || ref.ImageDtype != "uint8" || len(ref.Names) != 20 {
		t.Fatalf("reference file: %+v", raw)
	}
	// The reference itself shows numpy's handling: trailing NULs dropped,
	// an inner one kept.
	if !bytes.Equal(ref.Names[5][0], []byte("a\x00b")) || !bytes.Equal(ref.Names[6][0], []byte("xy")) {
		t.Fatalf("h5py read names 5, 6 as %q, %q", ref.Names[5][0], ref.Names[6][0])
	}
	return path, ref
}

// checkBatch compares one GetData result for the file rows given with
// what h5py read.
func checkBatch(t *testing.T, what string, got []*nd.Array, sources []string, rows []int, single bool, ref ilsvrcLike) {
	t.Helper()
	for k, src := range sources {
		a := got[k]
		switch src {
		case "filenames":
			want := nd.New(nd.ByteStr, len(rows), 1)
			for i, r := range rows {
				want.Data.([][]byte)[i] = ref.Names[r][0]
			}
			if single {
				want = &nd.Array{Shape: []int{1}, Data: want.Data}
			}
			if !nd.Equal(a, want) {
				t.Errorf("%s: filenames = %v, want %v (h5py)", what, a, want)
			}
		case "encoded_images":
			var parts []*nd.Array
			for _, r := range rows {
				e := make([]uint8, len(ref.Images[r]))
				for i, v := range ref.Images[r] {
					e[i] = uint8(v)
				}
				parts = append(parts, nd.FromSlice(e))
			}
			want := nd.Objects(parts)
			if single {
				want = parts[0]
			}
			if !nd.Equal(a, want) {
				t.Errorf("%s: encoded_images = %v, want %v (h5py)", what, a, want)
			}
		case "targets":
			want := nd.New(nd.Int16, len(rows), 1)
			for i, r := range rows {
				want.Data.([]int16)[i] = int16(ref.Targets[r])
			}
			if single {
				want = &nd.Array{Shape: []int{1}, Data: want.Data}
			}
			if !nd.Equal(a, want) {
				t.Errorf("%s: targets = %v, want %v (h5py)", what, a, want)
			}
		}
	}
}

// TestStringAndFlatVlenSourcesMatchH5py: H5PYDataset reads a file in
// Fuel's ILSVRC layout written by h5py (fixed-length S12 strings, a flat
// vlen uint8 source with no shapes scale) as h5py reads it: byte strings
// with numpy's trailing-NUL trimming, one flat uint8 array per example,
// for slice, list (unsorted, repeated), single requests, splits given
// by range and by index dataset, a subset, in and out of memory, with
// sorted and unsorted reads.
func TestStringAndFlatVlenSourcesMatchH5py(t *testing.T) {
	path, ref := writeILSVRCLike(t)
	all := []string{"encoded_images", "filenames", "targets"}
	type req struct {
		name   string
		req    fuel.Request
		within []int // the request as positions within the dataset
	}
	reqs := []req{
		{"slice", fuel.Request{Start: 1, Stop: 3}, []int{1, 2}},
		{"list", fuel.Request{Indices: []int{2, 0, 1, 0}}, []int{2, 0, 1, 0}},
		{"single", fuel.Request{Indices: []int{2}, Single: true}, []int{2}},
	}
	cases := []struct {
		name  string
		which []string
		opts  Options
		rows  []int // the file rows of the dataset's examples
	}{
		{"train", []string{"train"}, Options{}, seq(0, 12)},
		{"valid+test", []string{"valid", "test"}, Options{}, []int{12, 13, 14, 15, 16, 18, 19}},
		{"test by indices", []string{"test"}, Options{}, []int{16, 18, 19}},
		{"subset", []string{"train"}, Options{Subset: Range(5, 11)}, seq(5, 11)},
		{"index subset", []string{"train"}, Options{Subset: Indices(2, 3, 5, 6, 9)}, []int{2, 3, 5, 6, 9}},
		{"in memory", []string{"train", "valid"}, Options{LoadInMemory: true}, seq(0, 16)},
		{"in memory subset", []string{"train"}, Options{LoadInMemory: true, Subset: Range(2, 9)}, seq(2, 9)},
		{"unsorted reads", []string{"valid", "test"}, Options{NoSortIndices: true}, []int{12, 13, 14, 15, 16, 18, 19}},
		{"sources", []string{"train"}, Options{Sources: []string{"filenames", "encoded_images"}}, seq(0, 12)},
	}
	for _, c := range cases {
		d, err := Open(path, c.which, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		srcs := d.Sources()
		want := all
		if c.opts.Sources != nil {
			want = c.opts.Sources
		}
		if !slices.Equal(srcs, want) || d.NumExamples() != len(c.rows) {
			t.Errorf("%s: sources %v, %d examples; want %v, %d", c.name, srcs, d.NumExamples(), want, len(c.rows))
		}
		// Fuel's vlen_sources are those with a shapes scale: not the flat one.
		if v := d.VlenSources(); len(v) != 0 {
			t.Errorf("%s: vlen sources %v, want none", c.name, v)
		}
		for _, r := range reqs {
			got, err := d.GetData(r.req)
			if unsortedRefused(t, c.opts, r.req, err) {
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, r.name, err)
			}
			rows := make([]int, len(r.within))
			for i, p := range r.within {
				rows[i] = c.rows[p]
			}
			checkBatch(t, c.name+" "+r.name, got, srcs, rows, r.req.Single, ref)
		}
		whole, err := d.GetData(fuel.Request{Start: 0, Stop: d.NumExamples()})
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, c.name+" whole", whole, srcs, c.rows, false, ref)
		if labels := d.AxisLabels(); !slices.Equal(labels["filenames"], []string{"batch", "index"}) || !slices.Equal(labels["encoded_images"], []string{"batch"}) {
			t.Errorf("%s: axis labels %v", c.name, labels)
		}
		d.Close()
	}
	checkNoOpenObjects(t)
}

func seq(a, b int) []int {
	out := make([]int, b-a)
	for i := range out {
		out[i] = a + i
	}
	return out
}

// TestStringSourceBadDatasets: string and flat vlen datasets that are not
// Fuel sources give errors naming the source, not a crash.
func TestStringSourceBadDatasets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.hdf5")
	var out struct{ OK bool }
	pyH5(t, `
import sys, json, h5py, numpy
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('vstr', data=numpy.array(['a', 'bc'], dtype=object), dtype=h5py.special_dtype(vlen=str))
    v2 = f.create_dataset('vlen2d', shape=(2, 2), dtype=h5py.special_dtype(vlen=numpy.dtype('uint8')))
    f.create_dataset('ok', data=numpy.zeros((2, 1), 'S4'))
    arr = numpy.empty(3, dtype=numpy.dtype([('split', 'a', 5), ('source', 'a', 6), ('start', numpy.int64), ('stop', numpy.int64),
        ('indices', h5py.special_dtype(ref=h5py.Reference)), ('available', numpy.bool_), ('comment', 'a', 1)]))
    for i, s in enumerate(['vstr', 'vlen2d', 'ok']):
        arr[i] = (b'train', s.encode(), 0, 2, h5py.Reference(), True, b'.')
    f.attrs['split'] = arr
print(json.dumps(dict(OK=True)))
`, &out, path)
	for src, want := range map[string]string{
		"vstr":   "variable-length string is not supported",
		"vlen2d": "must be 1-D",
	} {
		_, err := Open(path, []string{"train"}, Options{Sources: []string{src}})
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) || !bytes.Contains([]byte(err.Error()), []byte(fmt.Sprintf("%q", src))) {
			t.Errorf("source %s: err %v, want one naming it and saying %q", src, err, want)
		}
	}
	d, err := Open(path, []string{"train"}, Options{Sources: []string{"ok"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.GetData(fuel.Request{Start: 0, Stop: 2})
	if err != nil || !nd.Equal(got[0], nd.ByteStrings([][]byte{{}, {}}, 2, 1)) {
		t.Errorf("zeros S4: %v, %v", got, err)
	}
	d.Close()
	checkNoOpenObjects(t)
}
