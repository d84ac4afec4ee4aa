package datasets

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

func toy(t *testing.T, opts IndexableOptions) *IndexableDataset {
	t.Helper()
	x := nd.FromSlice([]float32{0, 1, 10, 11, 20, 21, 30, 31, 40, 41}, 5, 2)
	y := nd.FromSlice([]int64{0, 1, 2, 3, 4})
	ds, err := NewIndexableDataset([]Source{{"x", x}, {"y", y}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestIndexableDatasetGetData(t *testing.T) {
	ds := toy(t, IndexableOptions{AxisLabels: map[string][]string{"x": {"batch", "feature"}}})
	if ds.NumExamples() != 5 || ds.Sources()[0] != "x" || ds.AxisLabels()["x"][1] != "feature" {
		t.Errorf("dataset %d %v %v", ds.NumExamples(), ds.Sources(), ds.AxisLabels())
	}
	d := must(ds.GetData(fuel.Request{Start: 1, Stop: 3}))
	if !nd.Equal(d[0], nd.FromSlice([]float32{10, 11, 20, 21}, 2, 2)) || !nd.Equal(d[1], nd.FromSlice([]int64{1, 2})) {
		t.Errorf("slice [1:3]: %v %v", d[0], d[1])
	}
	d = must(ds.GetData(fuel.Request{Indices: []int{4, 0, 4}}))
	if !nd.Equal(d[0], nd.FromSlice([]float32{40, 41, 0, 1, 40, 41}, 3, 2)) || !nd.Equal(d[1], nd.FromSlice([]int64{4, 0, 4})) {
		t.Errorf("indices [4 0 4]: %v %v", d[0], d[1])
	}
	d = must(ds.GetData(fuel.Request{Indices: []int{3}, Single: true}))
	if !nd.Equal(d[0], nd.FromSlice([]float32{30, 31})) || !nd.Equal(d[1], &nd.Array{Shape: []int{}, Data: []int64{3}}) {
		t.Errorf("single 3: %v %v", d[0], d[1])
	}
	// Results are copies: changing one leaves the dataset alone.
	d = must(ds.GetData(fuel.Request{Start: 0, Stop: 1}))
	d[0].F32()[0] = 99
	if again := must(ds.GetData(fuel.Request{Start: 0, Stop: 1})); again[0].F32()[0] != 0 {
		t.Error("GetData returned a view of the dataset")
	}
}

func TestIndexableDatasetErrors(t *testing.T) {
	ds := toy(t, IndexableOptions{})
	for _, req := range []fuel.Request{
		{Start: 0, Stop: 6},
		{Start: 5, Stop: 6},
		{Start: 2, Stop: 2},
		{Start: -1, Stop: 2},
		{Indices: []int{}},
		{Indices: []int{0, 5}},
		{Indices: []int{-1}},
		{Indices: []int{5}, Single: true},
		{Indices: []int{1, 2}, Single: true},
	} {
		_, err := ds.GetData(req)
		if err == nil || !strings.Contains(err.Error(), "IndexableDataset") {
			t.Errorf("request %+v: %v, want an error naming the dataset", req, err)
		}
	}
	if _, err := ds.GetData(fuel.Request{Indices: []int{7}}); err == nil || !strings.Contains(err.Error(), "index 7 out of range: the dataset has 5 examples") {
		t.Errorf("out of range: %v", err)
	}

	short := nd.FromSlice([]int64{1, 2, 3})
	long := nd.FromSlice([]int64{1, 2, 3, 4})
	for _, c := range []struct {
		src  []Source
		opts IndexableOptions
		want string
	}{
		{nil, IndexableOptions{}, "no sources"},
		{[]Source{{"a", short}, {"b", long}}, IndexableOptions{}, "different lengths"},
		{[]Source{{"a", short}, {"a", short}}, IndexableOptions{}, "given twice"},
		{[]Source{{"a", nd.Scalar(nd.Float32, 1)}}, IndexableOptions{}, "0-d"},
		{[]Source{{"a", short}}, IndexableOptions{Sources: []string{"b"}}, "unable to provide"},
		{[]Source{{"a", short}}, IndexableOptions{Sources: []string{}}, "none requested"},
	} {
		_, err := NewIndexableDataset(c.src, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.src, err, c.want)
		}
	}
}

func TestIndexableDatasetStartStopSources(t *testing.T) {
	// [1:-1] as Python slices it: examples 1, 2, 3.
	ds := toy(t, IndexableOptions{Start: Int(1), Stop: Int(-1), Sources: []string{"y"}})
	if ds.NumExamples() != 3 || len(ds.Sources()) != 1 || len(ds.ProvidesSources()) != 2 {
		t.Fatalf("%d examples, sources %v of %v", ds.NumExamples(), ds.Sources(), ds.ProvidesSources())
	}
	d := must(ds.GetData(fuel.Request{Start: 0, Stop: 3}))
	if len(d) != 1 || !nd.Equal(d[0], nd.FromSlice([]int64{1, 2, 3})) {
		t.Errorf("y[1:-1]: %v", d)
	}
	if ds := toy(t, IndexableOptions{Start: Int(3), Stop: Int(100)}); ds.NumExamples() != 2 {
		t.Errorf("[3:100] has %d examples, want 2", ds.NumExamples())
	}
	if ds := toy(t, IndexableOptions{Start: Int(4), Stop: Int(2)}); ds.NumExamples() != 0 {
		t.Errorf("[4:2] has %d examples, want 0", ds.NumExamples())
	}
}
