package transformers_test

import (
	"errors"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	. "github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// noConfig makes floatX the default (float32) whatever ~/.fuelrc says.
func noConfig(t *testing.T) {
	t.Setenv("FUEL_CONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("FUEL_FLOATX", "")
}

// toyStream is a batch stream (batches of 2, the last of 1) over 3
// examples, or an example stream when batch is 0:
//
//	x: uint8 (3, 2, 2), axes batch, height, width
//	y: float32 (3,),    axes batch
//	z: int64 (3, 1),    no axis labels
func toyStream(t *testing.T, batch int) fuel.Stream {
	t.Helper()
	x := nd.FromSlice([]uint8{0, 1, 2, 3, 4, 5, 6, 7, 255, 254, 128, 127}, 3, 2, 2)
	y := nd.FromSlice([]float32{1.5, 3, -7.25})
	z := nd.FromSlice([]int64{10, 20, 30}, 3, 1)
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: x}, {Name: "y", Data: y}, {Name: "z", Data: z}},
		datasets.IndexableOptions{AxisLabels: map[string][]string{"x": {"batch", "height", "width"}, "y": {"batch"}}}))
	var sch schemes.Scheme
	if batch > 0 {
		sch = must(schemes.SequentialScheme(schemes.Range(3), batch))
	}
	return must(streams.DataStream(ds, sch))
}

func epoch(t *testing.T, s fuel.Stream) [][]*nd.Array {
	t.Helper()
	it := must(s.GetEpochIterator())
	var out [][]*nd.Array
	for {
		d, err := it.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
}

func TestFlatten(t *testing.T) {
	s := must(Flatten(toyStream(t, 2), []string{"x"}))
	batches := epoch(t, s)
	if len(batches) != 2 {
		t.Fatalf("%d batches", len(batches))
	}
	if !nd.Equal(batches[0][0], nd.FromSlice([]uint8{0, 1, 2, 3, 4, 5, 6, 7}, 2, 4)) || !nd.SameShape(batches[1][0].Shape, []int{1, 4}) {
		t.Errorf("flattened x: %v, last %v", batches[0][0], batches[1][0].Shape)
	}
	if !nd.SameShape(batches[0][2].Shape, []int{2, 1}) {
		t.Errorf("z untouched: %v", batches[0][2].Shape)
	}
	want := map[string][]string{"x": {"batch", "feature"}, "y": {"batch"}}
	if got := s.AxisLabels(); !reflect.DeepEqual(got, want) {
		t.Errorf("axis labels %v, want %v", got, want)
	}

	// All sources of an example stream: each becomes 1-d.
	s = must(Flatten(toyStream(t, 0), nil))
	ex := epoch(t, s)
	if len(ex) != 3 || !nd.SameShape(ex[0][0].Shape, []int{4}) || !nd.SameShape(ex[0][1].Shape, []int{1}) || !nd.SameShape(ex[2][2].Shape, []int{1}) {
		t.Errorf("example flatten: %d examples, shapes %v %v %v", len(ex), ex[0][0].Shape, ex[0][1].Shape, ex[2][2].Shape)
	}
	// y's labels were ("batch",), which the example stream drops: Fuel's
	// Flatten then gives None.
	want = map[string][]string{"x": {"feature"}, "y": nil}
	if got := s.AxisLabels(); !reflect.DeepEqual(got, want) {
		t.Errorf("example axis labels %v, want %v", got, want)
	}
	if !s.ProducesExamples() || s.Name() != "Flatten" {
		t.Error("Flatten of an example stream")
	}
}

// Results and dtypes of numpy 1.24 (Debian's /usr/bin/python3):
//
//	(np.array([1.5, 3, -7.25], np.float32) * 0.1 + 0.2).view(np.uint32)
//	    -> float32 [1051931444, 1056964608, 3204867687]
//	   (in float64 then cast: [1051931443, 1056964608, 3204867686])
//	np.array([1.5, 3, -7.25], np.float32) * 2.0 + 1e300 -> float64 [1e300]*3
//	np.array([1.5, 3, -7.25], np.float32) * 1e300 + 1   -> float64 [1.5e300, 3e300, -7.25e300]
//	np.arange(256, dtype=np.uint8) * (1/255.0) + 0     -> float64
func TestScaleAndShiftDTypes(t *testing.T) {
	one := func(scale, shift float64) []*nd.Array {
		s := must(ScaleAndShift(toyStream(t, 3), scale, shift, []string{"y", "z"}))
		b := epoch(t, s)
		if len(b) != 1 {
			t.Fatalf("%d batches", len(b))
		}
		return b[0]
	}
	b := one(0.1, 0.2)
	if b[1].DType() != nd.Float32 {
		t.Fatalf("float32 * 0.1 + 0.2 gave %s, numpy float32", b[1].DType())
	}
	var bits []uint32
	for _, v := range b[1].F32() {
		bits = append(bits, math.Float32bits(v))
	}
	if want := []uint32{1051931444, 1056964608, 3204867687}; !slices.Equal(bits, want) {
		t.Errorf("float32 * 0.1 + 0.2: bits %v, numpy's %v", bits, want)
	}
	if b[0].DType() != nd.Uint8 {
		t.Errorf("x is not selected but became %s", b[0].DType())
	}
	if !nd.Equal(b[2], nd.FromSlice([]float64{10*0.1 + 0.2, 20*0.1 + 0.2, 30*0.1 + 0.2}, 3, 1)) {
		t.Errorf("int64 z * 0.1 + 0.2: %v, want float64", b[2])
	}
	if b := one(2.0, 1e300); b[1].DType() != nd.Float64 || b[1].F64()[0] != 1e300 {
		t.Errorf("float32 * 2 + 1e300: %v, numpy: float64 1e300", b[1])
	}
	if b := one(1e300, 1); b[1].DType() != nd.Float64 || b[1].F64()[2] != -7.25e300 {
		t.Errorf("float32 * 1e300 + 1: %v, numpy: float64", b[1])
	}
}

// The MNIST pipeline: uint8 pixels * (1/255.0) are float64, Cast('floatX')
// makes them float32, as numpy computes (a * (1/255.0) + 0).astype(float32).
func TestUint8PixelsToFloatX(t *testing.T) {
	noConfig(t)
	pix := make([]uint8, 256)
	for i := range pix {
		pix[i] = uint8(i)
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: nd.FromSlice(pix, 256, 1)}}, datasets.IndexableOptions{}))
	st := must(streams.DataStream(ds, must(schemes.SequentialScheme(schemes.Range(256), 256))))
	scaled := must(ScaleAndShift(st, 1/255.0, 0, nil))
	if b := epoch(t, scaled)[0][0]; b.DType() != nd.Float64 || b.F64()[255] != 1 || b.F64()[1] != 1.0/255.0 {
		t.Errorf("uint8 * (1/255.0) + 0: %s %v", b.DType(), b.F64()[:2])
	}
	s := must(Apply(st, Uint8PixelsToFloatX([]string{"features"})))
	b := epoch(t, s)[0][0]
	if b.DType() != nd.Float32 {
		t.Fatalf("dtype %s", b.DType())
	}
	var sum float64
	for _, v := range b.F32() {
		sum += float64(v)
	}
	// numpy: float((np.arange(256, dtype=np.uint8) * (1/255.0) + 0)
	//        .astype(np.float32).astype(np.float64).sum())
	if sum != 128.0000025429763 {
		t.Errorf("sum of the 256 scaled values %.17g, numpy's 128.0000025429763", sum)
	}
}

func TestCastAndForceFloatX(t *testing.T) {
	noConfig(t)
	b := epoch(t, must(Cast(toyStream(t, 3), "floatX", []string{"x"})))[0]
	if b[0].DType() != nd.Float32 || b[0].F32()[8] != 255 || b[2].DType() != nd.Int64 {
		t.Errorf("Cast floatX: %s %s", b[0].DType(), b[2].DType())
	}
	b = epoch(t, must(Cast(toyStream(t, 3), "int32", []string{"y"})))[0]
	if !nd.Equal(b[1], nd.FromSlice([]int32{1, 3, -7})) {
		t.Errorf("Cast int32 truncates toward zero: %v", b[1])
	}
	if _, err := Cast(toyStream(t, 3), "float16", nil); err == nil {
		t.Error("Cast to float16 gave no error")
	}
	t.Setenv("FUEL_FLOATX", "float64")
	f := must(ForceFloatX(toyStream(t, 3), nil))
	b = epoch(t, f)[0]
	if b[0].DType() != nd.Uint8 || b[1].DType() != nd.Float64 || b[2].DType() != nd.Int64 {
		t.Errorf("ForceFloatX(float64): %s %s %s", b[0].DType(), b[1].DType(), b[2].DType())
	}
	if !reflect.DeepEqual(f.AxisLabels(), toyStream(t, 3).AxisLabels()) {
		t.Errorf("ForceFloatX axis labels %v", f.AxisLabels())
	}
}

func TestMapping(t *testing.T) {
	double := func(d []*nd.Array) ([]*nd.Array, error) {
		return []*nd.Array{d[2].Astype(nd.Float64)}, nil
	}
	m := must(Mapping(toyStream(t, 2), double, []string{"zf"}))
	if !slices.Equal(m.Sources(), []string{"x", "y", "z", "zf"}) || m.AxisLabels() != nil {
		t.Errorf("sources %v, axis labels %v", m.Sources(), m.AxisLabels())
	}
	b := epoch(t, m)
	if len(b[0]) != 4 || b[0][3].DType() != nd.Float64 || b[1][3].Flat(0) != 30 {
		t.Errorf("mapped: %v", b)
	}
	// Without add_sources the result must replace every source.
	bad := must(Mapping(toyStream(t, 2), double, nil))
	it := must(bad.GetEpochIterator())
	if _, err := it.Next(); err == nil || !strings.Contains(err.Error(), "returned 1 arrays, want 3") {
		t.Errorf("short mapping: %v", err)
	}
	fail := must(Mapping(toyStream(t, 2), func([]*nd.Array) ([]*nd.Array, error) { return nil, errors.New("boom") }, nil))
	it = must(fail.GetEpochIterator())
	if _, err := it.Next(); err == nil || !strings.Contains(err.Error(), "Mapping: boom") {
		t.Errorf("failing mapping: %v", err)
	}
}

func TestFilterSourcesAndRename(t *testing.T) {
	f := must(FilterSources(toyStream(t, 2), []string{"z", "x"}))
	if !slices.Equal(f.Sources(), []string{"x", "z"}) {
		t.Errorf("FilterSources keeps the stream's order: %v", f.Sources())
	}
	if want := map[string][]string{"x": {"batch", "height", "width"}}; !reflect.DeepEqual(f.AxisLabels(), want) {
		t.Errorf("FilterSources axis labels %v", f.AxisLabels())
	}
	b := epoch(t, f)
	if len(b[0]) != 2 || b[0][1].DType() != nd.Int64 {
		t.Errorf("filtered batch %v", b[0])
	}
	if _, err := FilterSources(toyStream(t, 2), []string{"w"}); err == nil {
		t.Error("FilterSources of a missing source gave no error")
	}

	r := must(Rename(toyStream(t, 2), map[string]string{"x": "features", "y": "targets"}, ""))
	if !slices.Equal(r.Sources(), []string{"features", "targets", "z"}) {
		t.Errorf("renamed %v", r.Sources())
	}
	if want := map[string][]string{"features": {"batch", "height", "width"}, "targets": {"batch"}}; !reflect.DeepEqual(r.AxisLabels(), want) {
		t.Errorf("renamed axis labels %v", r.AxisLabels())
	}
	// Swapping two names is allowed.
	if r := must(Rename(toyStream(t, 2), map[string]string{"x": "y", "y": "x"}, "raise")); !slices.Equal(r.Sources(), []string{"y", "x", "z"}) {
		t.Errorf("swap: %v", r.Sources())
	}
	for _, c := range []struct {
		names map[string]string
		on    string
		want  string
	}{
		{map[string]string{"x": "a", "y": "a"}, "raise", "same new source name"},
		{map[string]string{"x": "z"}, "raise", "would create two sources named 'z'"},
		{map[string]string{"w": "a"}, "raise", "does not provide a source 'w'"},
		{map[string]string{"x": "a"}, "loud", "on_non_existent"},
	} {
		if _, err := Rename(toyStream(t, 2), c.names, c.on); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Rename(%v, %q): %v, want %q", c.names, c.on, err, c.want)
		}
	}
	if r := must(Rename(toyStream(t, 2), map[string]string{"w": "a", "x": "b"}, "ignore")); !slices.Equal(r.Sources(), []string{"b", "y", "z"}) {
		t.Errorf("ignore: %v", r.Sources())
	}
}

// A pipeline of transformers resumes mid-epoch with the same batches.
func TestTransformerResume(t *testing.T) {
	noConfig(t)
	mk := func() fuel.ResumableStream {
		s := must(ScaleAndShift(toyStream(t, 1), 2, 1, nil))
		return must(Flatten(must(Rename(s, map[string]string{"x": "f"}, "")), nil))
	}
	full := epoch(t, mk())
	s := mk()
	it := must(s.GetEpochIterator())
	it.Next()
	st := must(it.(fuel.StatefulIterator).State())
	if st.Child == nil || st.Child.Child == nil || st.Child.Child.Child == nil || st.Child.Child.Child.Requests == nil || st.Child.Child.Child.Requests.Next != 1 {
		t.Fatalf("state %+v", st)
	}
	it2 := must(mk().ResumeEpochIterator(st))
	for k := 1; ; k++ {
		d, err := it2.Next()
		if errors.Is(err, io.EOF) {
			if k != len(full) {
				t.Errorf("resumed epoch ended after %d batches, want %d", k, len(full))
			}
			break
		}
		for i := range d {
			if !nd.Equal(d[i], full[k][i]) {
				t.Errorf("batch %d source %d differs after resuming", k, i)
			}
		}
	}
	if _, err := mk().ResumeEpochIterator(fuel.IteratorState{}); err == nil {
		t.Error("resuming from an empty state gave no error")
	}
}
