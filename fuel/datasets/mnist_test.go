package datasets

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/nd"
)

// manifest is the part of fixtures' fuel-h5/mnist-small.hdf5.json
// used here: what Python Fuel reads from mnist-small.hdf5, a file that
// fuel.converters.mnist made from MNIST's train[0:1000] and t10k[0:200].
type manifest struct {
	Splits map[string]struct {
		NumExamples int `json:"num_examples"`
		Sources     map[string]struct {
			AxisLabels []string `json:"axis_labels"`
			DType      string   `json:"dtype"`
			BatchShape []int    `json:"batch_shape"`
			SHA256     string   `json:"sha256"`
			Sum        float64  `json:"sum_float64"`
			Elements   []struct {
				Example int   `json:"example"`
				Index   []int `json:"index"`
				Value   float64
			} `json:"elements"`
		} `json:"sources"`
	} `json:"splits"`
	ExtraQueries []struct {
		WhichSets []string        `json:"which_sets"`
		Subset    json.RawMessage `json:"subset"`
		Request   json.RawMessage `json:"request"`
		Result    map[string]struct {
			Shape  []int  `json:"shape"`
			DType  string `json:"dtype"`
			SHA256 string `json:"sha256"`
		} `json:"result"`
	} `json:"extra_queries"`
}

func loadManifest(t *testing.T) *manifest {
	t.Helper()
	b, err := fixtures.Read("fuel-h5/mnist-small.hdf5.json")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// smallSizes are mnist-small.hdf5's splits: the first examples of MNIST's.
var smallSizes = map[string]int{"train": 1000, "test": 200}

// checkAgainstManifest compares the first examples of each split of a
// dataset constructor with what Fuel read from mnist-small.hdf5.
func checkAgainstManifest(t *testing.T, m *manifest, open func(split string) (*MNISTDataset, error)) {
	for split, n := range smallSizes {
		ds, err := open(split)
		if err != nil {
			t.Fatal(err)
		}
		ref := m.Splits[split]
		if ref.NumExamples != n {
			t.Fatalf("manifest: %s has %d examples, expected %d", split, ref.NumExamples, n)
		}
		data := must(ds.GetData(fuel.Request{Start: 0, Stop: n}))
		for k, src := range ds.Sources() {
			want := ref.Sources[src]
			got := data[k]
			if got.DType().String() != want.DType || !nd.SameShape(got.Shape, want.BatchShape) {
				t.Errorf("%s %s: %s%v, Fuel read %s%v", split, src, got.DType(), got.Shape, want.DType, want.BatchShape)
			}
			if h := sha256Hex(got); h != want.SHA256 {
				t.Errorf("%s %s: sha256 %s, Fuel's %s", split, src, h, want.SHA256)
			}
			if s := sumU8(got); s != want.Sum {
				t.Errorf("%s %s: sum %v, Fuel's %v", split, src, s, want.Sum)
			}
			if labels := ds.AxisLabels()[src]; !slices.Equal(labels, want.AxisLabels) {
				t.Errorf("%s %s: axis labels %v, Fuel's %v", split, src, labels, want.AxisLabels)
			}
			for _, e := range want.Elements {
				idx := append([]int{e.Example}, e.Index...)
				off, err := got.Index(idx...)
				if err != nil {
					t.Fatal(err)
				}
				if v := got.Flat(off); v != e.Value {
					t.Errorf("%s %s%v = %v, Fuel's %v", split, src, idx, v, e.Value)
				}
			}
		}
	}
}

func TestMNISTAgainstFuel(t *testing.T) {
	useDataPath(t, mnistDir(t))
	m := loadManifest(t)
	checkAgainstManifest(t, m, func(split string) (*MNISTDataset, error) {
		return MNIST([]string{split}, MNISTOptions{})
	})
}

func TestEmbeddedMNISTAgainstFuel(t *testing.T) {
	m := loadManifest(t)
	checkAgainstManifest(t, m, func(split string) (*MNISTDataset, error) {
		return EmbeddedMNIST([]string{split}, MNISTOptions{})
	})
}

// Fuel's extra queries on mnist-small.hdf5 (whose test split is MNIST's
// t10k[0:200]): list and integer requests and a subset, on the full test
// split; and which_sets=('train', 'test'), whose order is checked on the
// full data by joining the rows Fuel's small file holds.
func TestMNISTQueriesAgainstFuel(t *testing.T) {
	useDataPath(t, mnistDir(t))
	m := loadManifest(t)
	check := func(what string, got []*nd.Array, want map[string]struct {
		Shape  []int  `json:"shape"`
		DType  string `json:"dtype"`
		SHA256 string `json:"sha256"`
	}) {
		for k, src := range []string{"features", "targets"} {
			w := want[src]
			if !nd.SameShape(got[k].Shape, w.Shape) || got[k].DType().String() != w.DType || sha256Hex(got[k]) != w.SHA256 {
				t.Errorf("%s %s: %s%v sha %s; Fuel: %s%v sha %s", what, src, got[k].DType(), got[k].Shape, sha256Hex(got[k]), w.DType, w.Shape, w.SHA256)
			}
		}
	}
	seen := 0
	for _, q := range m.ExtraQueries {
		switch {
		case slices.Equal(q.WhichSets, []string{"test"}) && string(q.Subset) == "null":
			ds := must(MNIST([]string{"test"}, MNISTOptions{}))
			var req fuel.Request
			var list []int
			var single int
			if json.Unmarshal(q.Request, &list) == nil {
				req = fuel.Request{Indices: list}
			} else if json.Unmarshal(q.Request, &single) == nil {
				req = fuel.Request{Indices: []int{single}, Single: true}
			} else {
				t.Fatalf("unknown request %s", q.Request)
			}
			check("test request "+string(q.Request), must(ds.GetData(req)), q.Result)
			seen++
		case slices.Equal(q.WhichSets, []string{"test"}):
			var sub, req struct{ Slice [2]int }
			if json.Unmarshal(q.Subset, &sub) != nil || json.Unmarshal(q.Request, &req) != nil {
				t.Fatalf("unknown subset query %s %s", q.Subset, q.Request)
			}
			ds := must(MNIST([]string{"test"}, MNISTOptions{Subset: SliceSubset(sub.Slice[0], sub.Slice[1])}))
			if ds.NumExamples() != sub.Slice[1]-sub.Slice[0] {
				t.Errorf("subset %v: %d examples", sub.Slice, ds.NumExamples())
			}
			check("subset "+string(q.Subset), must(ds.GetData(fuel.Request{Start: req.Slice[0], Stop: req.Slice[1]})), q.Result)
			seen++
		case slices.Equal(q.WhichSets, []string{"train", "test"}):
			// Fuel's file holds train[0:1000] then test[0:200]; on the full
			// data those are rows [0, 1000) and [60000, 60200). Fuel gives
			// the same union for ('test', 'train').
			for _, which := range [][]string{{"train", "test"}, {"test", "train"}, {"test", "train", "test"}} {
				ds := must(MNIST(which, MNISTOptions{}))
				if ds.NumExamples() != 70000 {
					t.Fatalf("%v: %d examples", which, ds.NumExamples())
				}
				rows := make([]int, 0, 1200)
				for i := range 1000 {
					rows = append(rows, i)
				}
				for i := range 200 {
					rows = append(rows, 60000+i)
				}
				check(strings.Join(which, "+"), must(ds.GetData(fuel.Request{Indices: rows})), q.Result)
			}
			seen++
		}
	}
	if seen != 4 {
		t.Errorf("used %d of the manifest's extra queries, want 4", seen)
	}
}

func TestMNISTFacts(t *testing.T) {
	useDataPath(t, mnistDir(t))
	train := must(MNIST([]string{"train"}, MNISTOptions{}))
	test := must(MNIST([]string{"test"}, MNISTOptions{}))
	if train.NumExamples() != 60000 || test.NumExamples() != 10000 {
		t.Errorf("sizes %d %d", train.NumExamples(), test.NumExamples())
	}
	if !slices.Equal(train.Sources(), []string{"features", "targets"}) {
		t.Errorf("sources %v", train.Sources())
	}
	first := must(train.GetData(fuel.Request{Indices: []int{0}, Single: true}))
	if !nd.SameShape(first[0].Shape, []int{1, 28, 28}) || !nd.SameShape(first[1].Shape, []int{1}) {
		t.Errorf("single example shapes %v %v", first[0].Shape, first[1].Shape)
	}
	if sumU8(first[0]) != 27525 || first[1].Flat(0) != 5 {
		t.Errorf("first training example: pixel sum %v label %v, want 27525 and 5", sumU8(first[0]), first[1].Flat(0))
	}
	if l := must(test.GetData(fuel.Request{Start: 0, Stop: 1}))[1]; !nd.SameShape(l.Shape, []int{1, 1}) || l.Flat(0) != 7 {
		t.Errorf("first test target %v, want [[7]]", l)
	}
	if train.Embedded() || train.DefaultTransformers()[0].Name != "ScaleAndShift" {
		t.Error("MNIST's flags or default transformers")
	}

	// sources= keeps the order given.
	ds := must(MNIST([]string{"test"}, MNISTOptions{Sources: []string{"targets", "features"}}))
	got := must(ds.GetData(fuel.Request{Start: 0, Stop: 2}))
	if !slices.Equal(ds.Sources(), []string{"targets", "features"}) || got[0].Flat(0) != 7 || got[1].NDim() != 4 {
		t.Errorf("sources=(targets, features): %v, %v", ds.Sources(), got[0])
	}
	// A list subset is sorted and de-duplicated, as Fuel's Subset does.
	ds = must(MNIST([]string{"test"}, MNISTOptions{Subset: ListSubset([]int{5, 0, 5, 1})}))
	got = must(ds.GetData(fuel.Request{Start: 0, Stop: 3}))
	want := must(test.GetData(fuel.Request{Indices: []int{0, 1, 5}}))
	if ds.NumExamples() != 3 || !nd.Equal(got[0], want[0]) || !nd.Equal(got[1], want[1]) {
		t.Errorf("subset [5, 0, 5, 1]: %d examples, targets %v, want %v", ds.NumExamples(), got[1], want[1])
	}
}

func TestMNISTFilesInSubdirectory(t *testing.T) {
	src := mnistDir(t)
	root := t.TempDir()
	// In <dir>/mnist: the test images gzipped, the test labels plain.
	if err := os.Mkdir(filepath.Join(root, "mnist"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(filepath.Join(src, "t10k-images-idx3-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(src, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "mnist", "t10k-images-idx3-ubyte.gz"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "mnist", "t10k-labels-idx1-ubyte"), labels, 0o644); err != nil {
		t.Fatal(err)
	}
	useDataPath(t, t.TempDir()+string(os.PathListSeparator)+root)
	ds := must(MNIST([]string{"test"}, MNISTOptions{}))
	if d := must(ds.GetData(fuel.Request{Start: 0, Stop: 1})); ds.NumExamples() != 10000 || d[1].Flat(0) != 7 {
		t.Errorf("%d examples, first label %v", ds.NumExamples(), d[1].Flat(0))
	}
	// The train files are missing: the error says where it looked and how
	// to get them.
	_, err = MNIST([]string{"train"}, MNISTOptions{})
	var nf *config.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), "blocks-repl fuel download mnist") ||
		!strings.Contains(err.Error(), "train-images-idx3-ubyte") {
		t.Errorf("missing train files: %v", err)
	}
}

func TestMNISTErrors(t *testing.T) {
	useDataPath(t, t.TempDir())
	for _, c := range []struct {
		which []string
		opts  MNISTOptions
		want  string
	}{
		{nil, MNISTOptions{}, "which_sets is empty"},
		{[]string{"valid"}, MNISTOptions{}, "'valid' split is not provided"},
		{[]string{"train"}, MNISTOptions{}, "not found in Fuel's data path"},
	} {
		_, err := MNIST(c.which, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("MNIST(%v): %v, want %q", c.which, err, c.want)
		}
	}
	t.Setenv("FUEL_DATA_PATH", "")
	if _, err := MNIST([]string{"test"}, MNISTOptions{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty data path: %v", err)
	}
	os.Unsetenv("FUEL_DATA_PATH")
	if _, err := MNIST([]string{"test"}, MNISTOptions{}); err == nil || !strings.Contains(err.Error(), "FUEL_DATA_PATH is not set") {
		t.Errorf("no data path: %v", err)
	}
	for _, c := range []struct {
		sub  *Subset
		want string
	}{
		{SliceSubset(0, 1001), "stops past"},
		{SliceSubset(1000, 1000), "starts past"},
		{SliceSubset(5, 5), "empty"},
		{SliceSubset(-1, 5), "negative"},
		{ListSubset([]int{1000}), "out of range"},
		{ListSubset([]int{-1, 2}), "negative"},
		{&Subset{Stop: Int(3)}, ""},
		{&Subset{Indices: []int{}}, ""},
	} {
		ds, err := EmbeddedMNIST([]string{"test"}, MNISTOptions{Subset: c.sub})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("subset %v: %v", c.sub, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("subset %v: %v, want %q", c.sub, err, c.want)
		case c.want == "" && c.sub.Stop != nil && ds.NumExamples() != 3:
			t.Errorf("subset %v: %d examples", c.sub, ds.NumExamples())
		case c.want == "" && c.sub.Stop == nil && ds.NumExamples() != 1000:
			t.Errorf("empty list subset (Fuel: no subset): %d examples", ds.NumExamples())
		}
	}
	if _, err := EmbeddedMNIST([]string{"test"}, MNISTOptions{Sources: []string{"labels"}}); err == nil || !strings.Contains(err.Error(), `"labels"`) {
		t.Errorf("unknown source: %v", err)
	}
}

func TestEmbeddedMNIST(t *testing.T) {
	ds := must(EmbeddedMNIST([]string{"test", "train"}, MNISTOptions{}))
	if ds.NumExamples() != 6000 {
		t.Fatalf("%d examples", ds.NumExamples())
	}
	// Train first (Fuel's file order), then test.
	d := must(ds.GetData(fuel.Request{Indices: []int{0, 5000}}))
	if d[1].Flat(0) != 5 || d[1].Flat(1) != 7 || sumU8(d[0].Slice(0, 1)) != 27525 {
		t.Errorf("first train / first test targets %v, pixel sum %v", d[1], sumU8(d[0].Slice(0, 1)))
	}
	if !reflect.DeepEqual(ds.WhichSets(), []string{"test", "train"}) {
		t.Errorf("which_sets %v", ds.WhichSets())
	}
	if !strings.Contains(ds.Name(), "EmbeddedMNIST") {
		t.Errorf("name %q", ds.Name())
	}
	_, err := ds.GetData(fuel.Request{Indices: []int{6000}})
	if err == nil || !strings.Contains(err.Error(), "6000 examples") || !strings.Contains(err.Error(), "EmbeddedMNIST") {
		t.Errorf("out of range: %v", err)
	}
}
