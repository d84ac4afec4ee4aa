package transformers_test

// Fuel's own tests (tests/transformers/test_transformers.py, TestBatch,
// TestUnpack, TestPadding, TestCache, TestMerge, TestMultiprocessing),
// ported: the same inputs and the same expected outputs.

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	. "github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

// iterStream is DataStream(IterableDataset({source: examples, ...})) for
// int64 examples given as Go slices (an int for a scalar example).
func iterStream(t *testing.T, labels map[string][]string, srcs ...any) fuel.Stream {
	t.Helper()
	var is []datasets.IterableSource
	for k := 0; k < len(srcs); k += 2 {
		src := datasets.IterableSource{Name: srcs[k].(string)}
		switch ex := srcs[k+1].(type) {
		case []int:
			for _, v := range ex {
				src.Examples = append(src.Examples, nd.Scalar(nd.Int64, float64(v)))
			}
		case [][]int64:
			for _, v := range ex {
				src.Examples = append(src.Examples, nd.FromSlice(append([]int64{}, v...)))
			}
		case []*nd.Array:
			src.Examples = ex
		}
		is = append(is, src)
	}
	return must(streams.DataStream(must(datasets.NewIterableDataset(is, nil, labels)), nil))
}

func rng(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func flat(items [][]*nd.Array, source int) [][]int64 {
	var out [][]int64
	for _, d := range items {
		out = append(out, ints(d[source]))
	}
	return out
}

func TestFuelBatch(t *testing.T) {
	noConfig(t)
	five := func() fuel.Stream { return iterStream(t, nil, "data", []int{1, 2, 3, 4, 5}) }
	got := flat(epoch(t, must(Batch(five(), must(schemes.ConstantScheme(2, 0, 0)), 0))), 0)
	if want := [][]int64{{1, 2}, {3, 4}, {5}}; !reflect.DeepEqual(got, want) {
		t.Errorf("strictness 0: %v, want %v", got, want)
	}
	got = flat(epoch(t, must(Batch(five(), must(schemes.ConstantScheme(2, 0, 0)), 1))), 0)
	if want := [][]int64{{1, 2}, {3, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("strictness 1: %v, want %v", got, want)
	}
	six := iterStream(t, nil, "data", []int{1, 2, 3, 4, 5, 6})
	got = flat(epoch(t, must(Batch(six, must(schemes.ConstantScheme(2, 0, 0)), 2))), 0)
	if want := [][]int64{{1, 2}, {3, 4}, {5, 6}}; !reflect.DeepEqual(got, want) {
		t.Errorf("strictness 2: %v, want %v", got, want)
	}
	it := must(must(Batch(five(), must(schemes.ConstantScheme(2, 0, 0)), 2)).GetEpochIterator())
	var err error
	for err == nil {
		_, err = it.Next()
	}
	if !errors.Is(err, ErrPartialBatch) {
		t.Errorf("strictness 2 on 5 examples: %v, want ErrPartialBatch", err)
	}
	lab := iterStream(t, map[string][]string{"features": {"index"}}, "features", []int{1, 2, 3, 4, 5})
	if got := must(Batch(lab, must(schemes.ConstantScheme(2, 0, 0)), 0)).AxisLabels(); !reflect.DeepEqual(got, map[string][]string{"features": {"batch", "index"}}) {
		t.Errorf("Batch axis labels %v", got)
	}
}

func TestFuelUnpack(t *testing.T) {
	noConfig(t)
	b := must(Batch(iterStream(t, nil, "data", rng(10)), must(schemes.ConstantScheme(2, 0, 0)), 0))
	u := must(Unpack(b))
	for i, d := range epoch(t, u) {
		if d[0].NDim() != 0 || d[0].Flat(0) != float64(i) {
			t.Errorf("example %d: %v", i, d[0])
		}
	}
	if _, err := Unpack(iterStream(t, nil, "features", [][]int64{{1}, {2, 3}})); err == nil {
		t.Error("Unpack of an example stream gave no error")
	}
	lab := iterStream(t, map[string][]string{"features": {"index"}}, "features", rng(4))
	u = must(Unpack(must(Batch(lab, must(schemes.ConstantScheme(2, 0, 0)), 0))))
	if got := u.AxisLabels(); !reflect.DeepEqual(got, map[string][]string{"features": {"index"}}) {
		t.Errorf("Unpack axis labels %v", got)
	}
}

func TestFuelPadding(t *testing.T) {
	noConfig(t)
	s := iterStream(t, nil, "data", [][]int64{{1}, {2, 3}, {}, {4, 5, 6}, {7}})
	p := must(Padding(must(Batch(s, must(schemes.ConstantScheme(2, 0, 0)), 0)), nil, ""))
	if got := p.Sources(); !reflect.DeepEqual(got, []string{"data", "data_mask"}) {
		t.Errorf("sources %v", got)
	}
	items := epoch(t, p)
	wantData := [][]int64{{1, 0, 2, 3}, {0, 0, 0, 4, 5, 6}, {7}}
	wantMask := [][]int64{{1, 0, 1, 1}, {0, 0, 0, 1, 1, 1}, {1}}
	if got := flat(items, 0); !reflect.DeepEqual(got, wantData) {
		t.Errorf("1-d padded %v, want %v", got, wantData)
	}
	if got := flat(items, 1); !reflect.DeepEqual(got, wantMask) {
		t.Errorf("1-d masks %v, want %v", got, wantMask)
	}
	// 2-d sequences: ones((3, 4)) and 2*ones((2, 4)).
	ones := func(n int, v float64) *nd.Array {
		a := nd.New(nd.Float64, n, 4)
		for i := range a.F64() {
			a.F64()[i] = v
		}
		return a
	}
	s = iterStream(t, nil, "data", []*nd.Array{ones(3, 1), ones(2, 2)})
	d := epoch(t, must(Padding(must(Batch(s, must(schemes.ConstantScheme(2, 0, 0)), 0)), nil, "")))[0]
	if !reflect.DeepEqual(d[0].Shape, []int{2, 3, 4}) || !reflect.DeepEqual(ints(d[1]), []int64{1, 1, 1, 1, 1, 0}) {
		t.Errorf("2-d: shape %v mask %v", d[0].Shape, ints(d[1]))
	}
	for i, v := range d[0].F64() {
		want := 1.0
		if i >= 12 {
			want = 2
		}
		if i >= 20 {
			want = 0
		}
		if v != want {
			t.Fatalf("2-d padded element %d = %v, want %v", i, v, want)
		}
	}
	bad := iterStream(t, nil, "data", []*nd.Array{ones(3, 1), nd.New(nd.Float64, 2, 3)})
	if _, err := must(must(Padding(must(Batch(bad, must(schemes.ConstantScheme(2, 0, 0)), 0)), nil, "")).GetEpochIterator()).Next(); err == nil {
		t.Error("unequal trailing shapes gave no error")
	}
	two := func() fuel.Stream {
		return must(Batch(iterStream(t, nil, "features", [][]int64{{1}, {2, 3}}, "targets", [][]int64{{4, 5, 6}, {7}}), must(schemes.ConstantScheme(2, 0, 0)), 0))
	}
	if n := len(epoch(t, must(Padding(two(), nil, "")))[0]); n != 4 {
		t.Errorf("two sources: %d arrays, want 4", n)
	}
	if dt := epoch(t, must(Padding(two(), nil, "uint8")))[0][1].DType(); dt != nd.Uint8 {
		t.Errorf("mask dtype %s, want uint8", dt)
	}
	if n := len(epoch(t, must(Padding(two(), []string{"features"}, "")))[0]); n != 3 {
		t.Errorf("mask_sources=('features',): %d arrays, want 3", n)
	}
	if _, err := Padding(iterStream(t, nil, "features", [][]int64{{1}, {2, 3}}), nil, ""); err == nil {
		t.Error("Padding of an example stream gave no error")
	}
}

func TestFuelCache(t *testing.T) {
	noConfig(t)
	stream := func(n, batch int) fuel.Stream {
		return must(Batch(iterStream(t, nil, "features", rng(n)), must(schemes.ConstantScheme(batch, 0, 0)), 0))
	}
	c := must(Cache(stream(100, 11), must(schemes.ConstantScheme(7, 0, 0))))
	it := must(c.GetEpochIterator())
	var sizes []int
	var last int
	for {
		d, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, it.(interface{ CacheSize() int }).CacheSize())
		last = d[0].Shape[0]
	}
	if want := []int{4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 0, 4}; !reflect.DeepEqual(sizes[:12], want) {
		t.Errorf("cache sizes %v, want %v first", sizes, want)
	}
	if last != 100%7 || sizes[len(sizes)-1] != 0 {
		t.Errorf("last batch of %d with %d cached, want %d and 0", last, sizes[len(sizes)-1], 100%7)
	}
	c = must(Cache(stream(3000, 3200), must(schemes.ConstantScheme(64, 0, 0))))
	items := epoch(t, c)
	if n := items[len(items)-1][0].Shape[0]; n != 3000%64 {
		t.Errorf("last batch %d, want %d", n, 3000%64)
	}
	// Epoch transition: ConstantScheme(7, times=3) restarts each epoch with
	// an empty cache.
	c = must(Cache(stream(100, 11), must(schemes.ConstantScheme(7, 0, 3))))
	for e := 0; e < 2; e++ {
		it := must(c.GetEpochIterator())
		var sizes []int
		for i := 0; i < 3; i++ {
			d := must(it.Next())
			if want := rng(100)[i*7 : (i+1)*7]; !reflect.DeepEqual(ints(d[0]), toInt64(want)) {
				t.Errorf("epoch %d batch %d: %v", e, i, ints(d[0]))
			}
			sizes = append(sizes, it.(interface{ CacheSize() int }).CacheSize())
		}
		if _, err := it.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("epoch %d: a fourth batch (%v)", e, err)
		}
		if !reflect.DeepEqual(sizes, []int{4, 8, 1}) {
			t.Errorf("epoch %d cache sizes %v, want [4 8 1]", e, sizes)
		}
	}
	if _, err := Cache(iterStream(t, nil, "x", rng(3)), must(schemes.ConstantScheme(2, 0, 0))); err == nil {
		t.Error("Cache over an example stream gave no error")
	}
}

func toInt64(x []int) []int64 {
	out := make([]int64, len(x))
	for i, v := range x {
		out[i] = int64(v)
	}
	return out
}

func TestFuelMergeAndMultiProcessing(t *testing.T) {
	noConfig(t)
	en := func() fuel.Stream { return iterStream(t, nil, "data", []int{1}) }
	fr := func() fuel.Stream { return iterStream(t, nil, "data", []int{2}) }
	m := must(Merge([]fuel.Stream{en(), fr()}, []string{"english", "french"}, nil))
	for e := 0; e < 2; e++ { // Merge restarts cleanly (Fuel's regression test)
		got := epoch(t, m)
		if len(got) != 1 || got[0][0].Flat(0) != 1 || got[0][1].Flat(0) != 2 {
			t.Errorf("epoch %d: %v", e, got)
		}
	}
	if _, err := Merge([]fuel.Stream{en(), fr()}, []string{"english"}, nil); err == nil {
		t.Error("wrong number of sources gave no error")
	}
	if _, err := Merge([]fuel.Stream{en(), must(Batch(fr(), must(schemes.ConstantScheme(1, 0, 0)), 0))}, []string{"a", "b"}, nil); err == nil {
		t.Error("mixing example and batch streams gave no error")
	}
	plus1 := must(Mapping(iterStream(t, nil, "data", rng(100)), func(d []*nd.Array) ([]*nd.Array, error) {
		return []*nd.Array{nd.Scalar(nd.Int64, d[0].Flat(0)+1)}, nil
	}, nil))
	got := flat(epoch(t, must(MultiProcessing(plus1, 100))), 0)
	for i, v := range got {
		if len(v) != 1 || v[0] != int64(i+1) {
			t.Fatalf("MultiProcessing item %d = %v", i, v)
		}
	}
	if len(got) != 100 {
		t.Errorf("%d items, want 100", len(got))
	}
}

// Fuel's tests/test_sequences.py: sentences of lengths 3, 5 and 7.
func TestFuelSequences(t *testing.T) {
	noConfig(t)
	sents := func() fuel.Stream {
		return iterStream(t, nil, "data", [][]int64{{1, 2, 3}, {4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14, 15}})
	}
	if n := len(epoch(t, must(NGrams(sents(), 4, "")))); n != 4 {
		t.Errorf("NGrams(4): %d, want 4", n)
	}
	w := epoch(t, must(Window(sents(), WindowOptions{Offset: 0, SourceWindow: 4, TargetWindow: 4, Overlapping: true})))
	if len(w) != 6 {
		t.Errorf("Window(0, 4, 4, True): %d windows, want 6", len(w))
	}
	for _, d := range w {
		if !nd.Equal(d[0], d[1]) {
			t.Errorf("source %v != target %v", d[0], d[1])
		}
	}
	w = epoch(t, must(Window(sents(), WindowOptions{Offset: -2, SourceWindow: 4, TargetWindow: 4})))
	if len(w) != 2 {
		t.Errorf("Window(-2, 4, 4, False): %d windows, want 2", len(w))
	}
	for _, d := range w {
		if s, g := ints(d[0]), ints(d[1]); !reflect.DeepEqual(s[2:], g[:2]) {
			t.Errorf("source %v, target %v: source[-2:] != target[:2]", s, g)
		}
	}
}

// Fuel's TestRename and TestFilterSources.
func TestFuelRenameAndFilterSources(t *testing.T) {
	noConfig(t)
	mk := func() fuel.Stream {
		ds := must(datasets.NewIndexableDataset([]datasets.Source{
			{Name: "X", Data: nd.New(nd.Float64, 4, 2, 2)}, {Name: "y", Data: nd.FromSlice([]int64{0, 1, 0, 1})}},
			datasets.IndexableOptions{AxisLabels: map[string][]string{"X": {"batch", "width", "height"}, "y": {"batch"}}}))
		return must(streams.DataStream(ds, must(schemes.SequentialScheme(schemes.Range(4), 2))))
	}
	r := must(Rename(mk(), map[string]string{"X": "features", "y": "targets"}, ""))
	if got := r.Sources(); !reflect.DeepEqual(got, []string{"features", "targets"}) {
		t.Errorf("sources %v", got)
	}
	if got := r.AxisLabels(); !reflect.DeepEqual(got, map[string][]string{"features": {"batch", "width", "height"}, "targets": {"batch"}}) {
		t.Errorf("axis labels %v", got)
	}
	for _, bad := range []struct {
		names map[string]string
		on    string
	}{
		{map[string]string{"Z": "features"}, ""},
		{map[string]string{"X": "features"}, "foo"},
		{map[string]string{"X": "y"}, ""},
		{map[string]string{"X": "features", "y": "features"}, ""},
	} {
		if _, err := Rename(mk(), bad.names, bad.on); err == nil {
			t.Errorf("Rename(%v, on_non_existent=%q) gave no error", bad.names, bad.on)
		}
	}
	for _, ok := range []struct {
		names map[string]string
		want  []string
	}{
		{map[string]string{"foobar": "y"}, []string{"X", "y"}},
		{map[string]string{"X": "y", "y": "X"}, []string{"y", "X"}},
		{map[string]string{"X": "features", "y": "targets", "Z": "fudgesicle"}, []string{"features", "targets"}},
		{map[string]string{"X": "features", "y": "targets", "Z": "targets"}, []string{"features", "targets"}},
	} {
		r, err := Rename(mk(), ok.names, "ignore")
		if err != nil {
			t.Errorf("Rename(%v, ignore): %v", ok.names, err)
			continue
		}
		if got := r.Sources(); !reflect.DeepEqual(got, ok.want) {
			t.Errorf("Rename(%v, ignore) sources %v, want %v", ok.names, got, ok.want)
		}
	}
	f := must(FilterSources(mk(), []string{"X"}))
	if got := f.Sources(); !reflect.DeepEqual(got, []string{"X"}) || len(epoch(t, f)[0]) != 1 {
		t.Errorf("FilterSources(X): %v", got)
	}
	if got := must(FilterSources(mk(), []string{"y", "X"})).Sources(); !reflect.DeepEqual(got, []string{"X", "y"}) {
		t.Errorf("FilterSources keeps the stream's order: %v", got)
	}
	if _, err := FilterSources(mk(), []string{"Z"}); err == nil {
		t.Error("FilterSources of a missing source gave no error")
	}
}
