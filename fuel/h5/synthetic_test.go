//go:build cgo

package h5

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"gonum.org/v1/hdf5"
)

// makeSyntheticPy writes a Fuel-format file with every supported dtype,
// an index-list split (through an object reference), unavailable
// (split, source) pairs, a compressed chunked source, a big-endian source
// and an unsupported one (float16). Its split attribute is built as
// Fuel's H5PYDataset.create_split_array builds it, then stored with its
// rows reversed. Values follow simple
// formulas of the row r, which synthSources mirrors.
const makeSyntheticPy = `
import sys
from itertools import product
import h5py, numpy

N = 20
r = numpy.arange(N)
with h5py.File(sys.argv[1], 'w') as f:
    d = f.create_dataset('features', data=(r[:, None] * 10 + numpy.arange(3) + 0.5).astype('f4'),
                         chunks=(4, 3), compression='gzip')
    d.dims[0].label = 'batch'; d.dims[1].label = 'feature'
    d = f.create_dataset('targets', data=(r * r - 50).astype('i8')[:, None])
    d.dims[0].label = 'batch'; d.dims[1].label = 'index'
    f.create_dataset('weights', data=(r / 4).astype('f8'))
    d = f.create_dataset('counts', data=-(r[:, None] * 4 + numpy.arange(4)).astype('i4').reshape(N, 2, 2))
    d.dims[0].label = 'batch'; d.dims[1].label = 'row'
    d = f.create_dataset('mask', data=(r % 3 == 0))
    d.dims[0].label = 'batch'
    f.create_dataset('bigend', data=(r * 1.5).astype('>f4'))
    f.create_dataset('halfs', data=r.astype('f2'))
    idx = f.create_dataset('valid_indices', data=numpy.array([17, 11, 15, 13], dtype='i8'))

    all_sources = ['features', 'targets', 'weights', 'counts', 'mask', 'bigend', 'halfs']
    split_dict = {
        'train': {s: (0, 10) for s in all_sources},
        'valid': {s: (0, 0, idx.ref, 'held out') for s in all_sources if s not in ('mask', 'halfs')},
        'test': {s: (15, 20) for s in all_sources if s != 'halfs'},
    }
    # Fuel's H5PYDataset.create_split_array, verbatim in substance.
    split_len = max(len(split) for split in split_dict)
    sources = set()
    comment_len = 1
    for split in split_dict.values():
        sources |= set(split.keys())
        for val in split.values():
            if len(val) == 4:
                comment_len = max([comment_len, len(val[-1])])
    sources = sorted(list(sources))
    source_len = max(len(source) for source in sources)
    split_array = numpy.empty(
        len(split_dict) * len(sources),
        dtype=numpy.dtype([
            ('split', 'a', split_len),
            ('source', 'a', source_len),
            ('start', numpy.int64, 1),
            ('stop', numpy.int64, 1),
            ('indices', h5py.special_dtype(ref=h5py.Reference)),
            ('available', numpy.bool_, 1),
            ('comment', 'a', comment_len)]))
    for i, (split, source) in enumerate(product(split_dict, sources)):
        if source in split_dict[split]:
            start, stop = split_dict[split][source][:2]
            available = True
            indices = h5py.Reference()
            comment = '.'
            if len(split_dict[split][source]) > 2:
                indices = split_dict[split][source][2]
            if len(split_dict[split][source]) > 3:
                comment = split_dict[split][source][3]
                if not comment:
                    comment = '.'
        else:
            (start, stop, indices, available, comment) = (0, 0, h5py.Reference(), False, '.')
        split_array[i]['split'] = split.encode('utf8')
        split_array[i]['source'] = source.encode('utf8')
        split_array[i]['start'] = start
        split_array[i]['stop'] = stop
        split_array[i]['indices'] = indices
        split_array[i]['available'] = available
        split_array[i]['comment'] = comment.encode('utf8')
    # Stored in reverse (still valid): the reader must not rely on the
    # writer's sorted order.
    f.attrs['split'] = split_array[::-1]
`

// synthSource describes a source of the synthetic file: its dtype, the
// shape of one example and its k-th value in row r.
type synthSource struct {
	dtype  nd.DType
	row    []int
	labels []string
	value  func(r, k int) float64
}

var synthSources = map[string]synthSource{
	"features": {nd.Float32, []int{3}, []string{"batch", "feature"}, func(r, k int) float64 { return float64(r*10+k) + 0.5 }},
	"targets":  {nd.Int64, []int{1}, []string{"batch", "index"}, func(r, k int) float64 { return float64(r*r - 50) }},
	"weights":  {nd.Float64, []int{}, []string{""}, func(r, k int) float64 { return float64(r) / 4 }},
	"counts":   {nd.Int32, []int{2, 2}, []string{"batch", "row", ""}, func(r, k int) float64 { return -float64(r*4 + k) }},
	"mask": {nd.Bool, []int{}, []string{"batch"}, func(r, k int) float64 {
		if r%3 == 0 {
			return 1
		}
		return 0
	}},
	"bigend": {nd.Float32, []int{}, []string{""}, func(r, k int) float64 { return float64(r) * 1.5 }},
	"halfs":  {0, nil, []string{""}, nil},
}

// synthetic writes the synthetic file into a temporary directory, with
// Debian's h5py (/usr/bin/python3, not the python3 first on PATH).
func synthetic(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py, numpy").Run(); err != nil {
		t.Skipf("%s with h5py and numpy is needed to write the test file (apt-get install python3-h5py): %v", py, err)
	}
	path := filepath.Join(t.TempDir(), "synthetic.hdf5")
	if out, err := exec.Command(py, "-c", makeSyntheticPy, path).CombinedOutput(); err != nil {
		t.Fatalf("writing the test file: %v\n%s", err, out)
	}
	return path
}

// expected builds what GetData must return for a source when the
// dataset's examples are the file rows `rows`.
func expected(name string, rows []int, req fuel.Request) *nd.Array {
	s := synthSources[name]
	var pick []int
	switch {
	case req.Indices != nil:
		for _, i := range req.Indices {
			pick = append(pick, rows[i])
		}
	default:
		pick = rows[req.Start:req.Stop]
	}
	shape := append([]int{len(pick)}, s.row...)
	if req.Single {
		shape = s.row
	}
	a := nd.New(s.dtype, shape...)
	per := nd.Prod(s.row)
	for n, r := range pick {
		for k := 0; k < per; k++ {
			a.SetFlat(n*per+k, s.value(r, k))
		}
	}
	return a
}

// unsortedRefused: with sort_indices=False, out of core, a list request
// that is not strictly increasing is refused as h5py refuses it (Fuel hands
// h5py the list). It reports whether req is such a request, failing t
// unless err is that refusal.
func unsortedRefused(t *testing.T, o Options, req fuel.Request, err error) bool {
	t.Helper()
	if !o.NoSortIndices || o.LoadInMemory || req.Single || req.Indices == nil {
		return false
	}
	sorted := true
	for i := 1; i < len(req.Indices); i++ {
		sorted = sorted && req.Indices[i] > req.Indices[i-1]
	}
	if sorted {
		return false
	}
	if err == nil || !strings.Contains(err.Error(), "TypeError: Indexing elements must be in increasing order") {
		t.Errorf("unsorted request %v with sort_indices=False: got %v, want h5py's TypeError", req.Indices, err)
	}
	return true
}

// randomRequests returns slice, list (unsorted, with repeats) and single
// requests over n examples, and every single example.
func randomRequests(rng *rand.Rand, n int) []fuel.Request {
	reqs := []fuel.Request{{Start: 0, Stop: n}, {Start: n - 1, Stop: n}}
	for i := 0; i < n; i++ {
		reqs = append(reqs, fuel.Request{Indices: []int{i}, Single: true})
	}
	for k := 0; k < 30; k++ {
		a := rng.Intn(n)
		b := a + 1 + rng.Intn(n-a)
		reqs = append(reqs, fuel.Request{Start: a, Stop: b})
		list := make([]int, 1+rng.Intn(2*n))
		for i := range list {
			list[i] = rng.Intn(n)
		}
		reqs = append(reqs, fuel.Request{Indices: list})
	}
	reqs = append(reqs, fuel.Request{Indices: []int{n - 1, 0, n / 2, 1}})
	return reqs
}

// checkAgainstFormulas opens whichSets in every mode and checks all kinds
// of request against the formulas, given the file rows the dataset's
// examples must be.
func checkAgainstFormulas(t *testing.T, path string, whichSets []string, opts Options, rows []int) {
	t.Helper()
	for _, mode := range modes {
		o := opts
		o.LoadInMemory, o.NoSortIndices = mode.opts.LoadInMemory, mode.opts.NoSortIndices
		d, err := Open(path, whichSets, o)
		if err != nil {
			t.Fatalf("%s: %v", mode.name, err)
		}
		if d.NumExamples() != len(rows) {
			t.Fatalf("%s: %d examples, want %d", mode.name, d.NumExamples(), len(rows))
		}
		rng := rand.New(rand.NewSource(1))
		for _, req := range randomRequests(rng, len(rows)) {
			out, err := d.GetData(req)
			if unsortedRefused(t, o, req, err) {
				continue
			}
			if err != nil {
				t.Fatalf("%s: %+v: %v", mode.name, req, err)
			}
			for i, src := range d.Sources() {
				if want := expected(src, rows, req); !nd.Equal(out[i], want) {
					t.Fatalf("%s: source %s, request %+v:\n got %s%v %v\nwant %s%v %v",
						mode.name, src, req, out[i].DType(), out[i].Shape, out[i], want.DType(), want.Shape, want)
				}
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSynthetic(t *testing.T) {
	checkNoOpenObjects(t)
	path := synthetic(t)
	supported := []string{"weights", "features", "mask", "counts", "targets", "bigend"}

	t.Run("split attribute", func(t *testing.T) {
		s, err := ReadSplit(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 21 {
			t.Fatalf("%d rows, want 3 splits x 7 sources", len(s))
		}
		if got := s.Splits(); !slices.Equal(got, []string{"test", "train", "valid"}) {
			t.Errorf("splits %v", got)
		}
		// Rows come in file order: reversed Fuel order.
		if s[0].Split != "test" || s[0].Source != "weights" || s[7].Split != "valid" || s[20].Split != "train" || s[20].Source != "bigend" {
			t.Errorf("rows out of order: %+v ... %+v", s[0], s[20])
		}
		for _, r := range s {
			switch {
			case r.Split == "valid" && (r.Source == "mask" || r.Source == "halfs"),
				r.Split == "test" && r.Source == "halfs":
				if r.Available || r.Start != 0 || r.Stop != 0 || r.IndicesPath != "" || r.Comment != "." {
					t.Errorf("unavailable pair: %+v", r)
				}
			case r.Split == "valid":
				if !r.Available || r.IndicesPath != "/valid_indices" || !slices.Equal(r.Indices, []int{17, 11, 15, 13}) || r.Comment != "held out" {
					t.Errorf("index-list pair: %+v", r)
				}
			case r.Split == "train":
				if !r.Available || r.Start != 0 || r.Stop != 10 || r.Indices != nil || r.Comment != "." {
					t.Errorf("train pair: %+v", r)
				}
			case r.Split == "test":
				if !r.Available || r.Start != 15 || r.Stop != 20 || r.Indices != nil {
					t.Errorf("test pair: %+v", r)
				}
			}
		}
		if got := s.ProvidedSources("valid"); !slices.Equal(got, []string{"weights", "targets", "features", "counts", "bigend"}) {
			t.Errorf("valid provides %v", got)
		}
	})

	t.Run("unsupported dtype", func(t *testing.T) {
		_, err := Open(path, []string{"train"}, Options{})
		if err == nil || !strings.Contains(err.Error(), `"halfs"`) || !strings.Contains(err.Error(), "float16") {
			t.Errorf("error %v, want one naming source halfs and dtype float16", err)
		}
	})

	t.Run("one split", func(t *testing.T) {
		d, err := Open(path, []string{"train"}, Options{Sources: supported})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if !slices.Equal(d.Sources(), supported) {
			t.Errorf("Sources %v, want the given order %v", d.Sources(), supported)
		}
		labels := d.AxisLabels()
		for name, s := range synthSources {
			if !slices.Equal(labels[name], s.labels) {
				t.Errorf("AxisLabels[%s] = %q, want %q", name, labels[name], s.labels)
			}
		}
		out, err := d.GetData(fuel.Request{Start: 0, Stop: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range supported {
			if out[i].DType() != synthSources[name].dtype {
				t.Errorf("%s: dtype %s, want %s", name, out[i].DType(), synthSources[name].dtype)
			}
		}
		checkAgainstFormulas(t, path, []string{"train"}, Options{Sources: supported}, span(0, 10))
	})

	t.Run("index-list split", func(t *testing.T) {
		checkAgainstFormulas(t, path, []string{"valid"}, Options{}, []int{11, 13, 15, 17})
	})

	t.Run("union of splits", func(t *testing.T) {
		d, err := Open(path, []string{"train", "valid"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"bigend", "counts", "features", "targets", "weights"}
		if !slices.Equal(d.Sources(), want) || !slices.Equal(d.ProvidesSources(), want) {
			t.Errorf("Sources %v, ProvidesSources %v, want the intersection %v", d.Sources(), d.ProvidesSources(), want)
		}
		d.Close()
		checkAgainstFormulas(t, path, []string{"train", "valid"}, Options{}, append(span(0, 10), 11, 13, 15, 17))
		checkAgainstFormulas(t, path, []string{"valid", "test"}, Options{}, []int{11, 13, 15, 16, 17, 18, 19})
		checkAgainstFormulas(t, path, []string{"test", "train"}, Options{Sources: []string{"mask"}}, append(span(0, 10), span(15, 20)...))
	})

	t.Run("subset", func(t *testing.T) {
		both := []string{"train", "test"}
		checkAgainstFormulas(t, path, both, Options{Subset: Range(8, End), Sources: []string{"targets"}}, []int{8, 9, 15, 16, 17, 18, 19})
		checkAgainstFormulas(t, path, both, Options{Subset: Range(2, 5)}, []int{2, 3, 4})
		checkAgainstFormulas(t, path, both, Options{Subset: Indices(12, 1, 1, 3)}, []int{1, 3, 17})
		checkAgainstFormulas(t, path, []string{"valid"}, Options{Subset: Range(1, 3)}, []int{13, 15})
		for _, sub := range []*Subset{Range(0, 0), Range(5, 3), Range(0, 16), Range(15, End), Range(-1, 2), Indices(), Indices(15), Indices(-1)} {
			if _, err := Open(path, both, Options{Subset: sub}); err == nil {
				t.Errorf("subset %v of 15 examples: no error", sub)
			}
		}
	})

	t.Run("unknown split and source", func(t *testing.T) {
		_, err := Open(path, []string{"train", "nope"}, Options{})
		if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "test, train, valid") || !strings.Contains(err.Error(), path) {
			t.Errorf("unknown split: %v", err)
		}
		_, err = Open(path, []string{"valid", "test"}, Options{Sources: []string{"features", "mask"}})
		if err == nil || !strings.Contains(err.Error(), `"mask"`) || !strings.Contains(err.Error(), "bigend, counts, features, targets, weights") {
			t.Errorf("unavailable source: %v", err)
		}
		_, err = Open(path, []string{"train"}, Options{Sources: []string{"nope"}})
		if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "available sources") {
			t.Errorf("unknown source: %v", err)
		}
		if _, err = Open(path, nil, Options{}); err == nil {
			t.Error("no split: no error")
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		for _, mem := range []bool{false, true} {
			d, err := Open(path, []string{"valid"}, Options{LoadInMemory: mem})
			if err != nil {
				t.Fatal(err)
			}
			for _, req := range []fuel.Request{
				{Start: 0, Stop: 0}, {Start: 3, Stop: 2}, {Start: 0, Stop: 5}, {Start: -1, Stop: 2}, {Start: 4, Stop: 4},
				{Indices: []int{}}, {Indices: []int{0, 4}}, {Indices: []int{-1}},
				{Indices: []int{4}, Single: true}, {Indices: []int{0, 1}, Single: true}, {Single: true},
			} {
				if _, err := d.GetData(req); err == nil {
					t.Errorf("LoadInMemory %v: request %+v over 4 examples: no error", mem, req)
				}
			}
			d.Close()
			if _, err := d.GetData(fuel.Request{Start: 0, Stop: 1}); err == nil {
				t.Error("GetData after Close: no error")
			}
			if err := d.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		d, err := Open(path, []string{"train", "valid"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		rows := append(span(0, 10), 11, 13, 15, 17)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed))
				for _, req := range randomRequests(rng, len(rows)) {
					out, err := d.GetData(req)
					if err != nil {
						errs <- err
						return
					}
					for i, src := range d.Sources() {
						if !nd.Equal(out[i], expected(src, rows, req)) {
							errs <- fmt.Errorf("%s: wrong data for %+v", src, req)
							return
						}
					}
				}
			}(int64(g))
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// TestNotFuel checks the errors for files that are not Fuel HDF5 files.
func TestNotFuel(t *testing.T) {
	dir := t.TempDir()

	// An HDF5 file with a dataset but no split attribute, written with
	// gonum's hdf5 package (under this package's lock).
	plain := filepath.Join(dir, "plain.h5")
	lock()
	err := func() error {
		f, err := hdf5.CreateFile(plain, hdf5.F_ACC_TRUNC)
		if err != nil {
			return err
		}
		defer f.Close()
		space, err := hdf5.CreateSimpleDataspace([]uint{4}, nil)
		if err != nil {
			return err
		}
		defer space.Close()
		ds, err := f.CreateDataset("features", hdf5.T_NATIVE_FLOAT, space)
		if err != nil {
			return err
		}
		defer ds.Close()
		return ds.Write(&[]float32{1, 2, 3, 4})
	}()
	unlock()
	if err != nil {
		t.Fatalf("writing %s: %v", plain, err)
	}
	// Counted from here: gonum's Dataset.Close leaves open the copy of the
	// datatype CreateDataset makes.
	checkNoOpenObjects(t)
	_, err = Open(plain, []string{"train"}, Options{})
	if !errors.Is(err, ErrNotFuel) || !strings.Contains(err.Error(), plain) {
		t.Errorf("Open of an HDF5 file without split: %v", err)
	}
	if _, err := ReadSplit(plain); !errors.Is(err, ErrNotFuel) {
		t.Errorf("ReadSplit of an HDF5 file without split: %v", err)
	}

	text := filepath.Join(dir, "text.hdf5")
	if err := os.WriteFile(text, []byte("not HDF5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(text, []string{"train"}, Options{})
	if !errors.Is(err, ErrNotHDF5) || !strings.Contains(err.Error(), text) {
		t.Errorf("Open of a text file: %v", err)
	}

	missing := filepath.Join(dir, "missing.hdf5")
	_, err = Open(missing, []string{"train"}, Options{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Open of a missing file: %v", err)
	}
	if _, err := ReadSplit(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadSplit of a missing file: %v", err)
	}
	if _, err := Open(dir, []string{"train"}, Options{}); err == nil {
		t.Error("Open of a directory: no error")
	}
}

// TestDirectReads: out of core, the synthetic file's contiguous sources
// stored in the memory layout are read straight from the file (pread,
// direct.go) and the others through libhdf5: the chunked, compressed
// features, the big-endian source and the bool mask; with the core driver
// (the file in memory) none is. TestSynthetic checks every source's values
// in every mode, so both paths give the formulas' values.
func TestDirectReads(t *testing.T) {
	path := synthetic(t)
	sources := []string{"bigend", "counts", "features", "mask", "targets", "weights"}
	for _, c := range []struct {
		opts   Options
		direct []string
	}{
		{Options{Sources: sources}, []string{"counts", "targets", "weights"}},
		{Options{Sources: sources, Driver: "sec2"}, []string{"counts", "targets", "weights"}},
		{Options{Sources: sources, Driver: "core"}, nil},
		{Options{Sources: sources, LoadInMemory: true}, nil},
	} {
		d, err := Open(path, []string{"train"}, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		var direct []string
		for _, s := range d.srcs {
			if s.raw >= 0 && s.file != nil {
				direct = append(direct, s.name)
			}
		}
		if !slices.Equal(direct, c.direct) {
			t.Errorf("driver %q, in memory %v: direct reads for %v, want %v", c.opts.Driver, c.opts.LoadInMemory, direct, c.direct)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		for _, s := range d.srcs {
			if s.file != nil {
				t.Errorf("source %s keeps its file after Close", s.name)
			}
		}
	}
}

// TestGetDataLent: GetDataLent gives GetData's values in every mode for
// every kind of request, its float32 batches in buffers the Recycler
// lends (reused once released; the other dtypes and single examples are
// ordinary arrays), as a DataStream reads it for a consumer that
// releases its batches (fuel.LendingDataset).
func TestGetDataLent(t *testing.T) {
	path := synthetic(t)
	for _, mode := range modes {
		o := mode.opts
		o.Sources = []string{"features", "targets", "counts", "weights"}
		d, err := Open(path, []string{"train"}, o)
		if err != nil {
			t.Fatal(err)
		}
		var rec nd.Recycler
		seen := map[*float32]int{}
		rng := rand.New(rand.NewSource(2))
		for _, req := range randomRequests(rng, d.NumExamples()) {
			want, err := d.GetData(req)
			if unsortedRefused(t, o, req, err) {
				_, err := d.GetDataLent(req, &rec)
				unsortedRefused(t, o, req, err)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.GetDataLent(req, &rec)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if !nd.Equal(got[i], want[i]) {
					t.Fatalf("%s: %+v source %d: %v, want %v", mode.name, req, i, got[i], want[i])
				}
			}
			if f := got[0].Data.([]float32); len(f) > 0 && !req.Single {
				seen[&f[0]]++
			}
			for _, a := range got {
				a.Release()
			}
			if !req.Single && got[0].Size() != 0 {
				t.Fatalf("%s: %+v: the float32 batch was not lent", mode.name, req)
			}
			if got[1].Size() == 0 && want[1].Size() != 0 {
				t.Fatalf("%s: an int64 batch was lent", mode.name)
			}
		}
		batches := 0
		for _, n := range seen {
			batches += n
		}
		// Batches of many sizes: a buffer is reused by any batch it holds.
		if len(seen) > batches/4 {
			t.Errorf("%s: %d float32 buffers for %d batches, want a few reused", mode.name, len(seen), batches)
		}
		d.Close()
	}
}
