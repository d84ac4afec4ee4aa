package streams

import (
	"errors"
	"io"
	"runtime"
	"testing"
	"unsafe"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// lendDataset is 50 examples: uint8 rows of 7, float32 rows of 3 and
// int64 targets.
func lendDataset() *datasets.IndexableDataset {
	const n = 50
	x, f, y := nd.New(nd.Uint8, n, 7), nd.New(nd.Float32, n, 3), nd.New(nd.Int64, n, 1)
	for i := range x.Size() {
		x.SetFlat(i, float64(i*37%251))
	}
	for i := range f.Size() {
		f.SetFlat(i, float64(i)/4)
	}
	for i := range n {
		y.SetFlat(i, float64(i%10))
	}
	return must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: x}, {Name: "f", Data: f}, {Name: "y", Data: y}}, datasets.IndexableOptions{}))
}

// TestDataStreamLendsDatasetBatches: a DataStream whose consumer asks for
// lent items (fuel.Lend) reads an IndexableDataset's uint8 and float32
// sources into a few reused buffers, with GetData's values, for slice
// and (shuffled) list requests; a kept batch is never reused; without
// the request every batch has buffers of its own.
func TestDataStreamLendsDatasetBatches(t *testing.T) {
	ds := lendDataset()
	for name, scheme := range map[string]schemes.Scheme{
		"sequential": must(schemes.SequentialScheme(schemes.Range(50), 8)),
		"shuffled":   must(schemes.ShuffledScheme(schemes.Range(50), 8, numpyrand.New(3), false)),
	} {
		s := must(DataStream(ds, scheme))
		it := must(s.GetEpochIterator())
		if !fuel.Lend(it) {
			t.Fatalf("%s: a DataStream over an IndexableDataset does not lend", name)
		}
		bufs := map[*uint8]bool{}
		fbufs := map[*float32]bool{}
		var kept, keptWant *nd.Array
		for k := 0; ; k++ {
			req, done := nextRequest(t, s, k)
			d, err := it.Next()
			if errors.Is(err, io.EOF) {
				if !done {
					t.Fatalf("%s: the epoch ended early", name)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			want := must(ds.GetData(req))
			for i := range d {
				if !nd.Equal(d[i], want[i]) {
					t.Fatalf("%s: batch %d source %d: %v, want %v", name, k, i, d[i], want[i])
				}
			}
			bufs[&d[0].Data.([]uint8)[0]] = true
			fbufs[&d[1].Data.([]float32)[0]] = true
			if k == 2 {
				d[0].Keep()
				kept, keptWant = d[0], want[0]
			}
			for _, a := range d {
				a.Release()
			}
		}
		// One buffer in use at a time, plus the kept batch's.
		if len(bufs) > 2 || len(fbufs) > 1 {
			t.Errorf("%s: %d uint8 and %d float32 buffers for 7 batches, want 2 and 1", name, len(bufs), len(fbufs))
		}
		if !nd.Equal(kept, keptWant) {
			t.Errorf("%s: the kept batch changed: %v, want %v", name, kept, keptWant)
		}
	}
	// Not asked: every batch its own.
	it := must(must(DataStream(ds, must(schemes.SequentialScheme(schemes.Range(50), 8)))).GetEpochIterator())
	batches := drain(t, it)
	if &batches[0][0].Data.([]uint8)[0] == &batches[1][0].Data.([]uint8)[0] {
		t.Error("two batches of a plain iteration share a buffer")
	}
}

// nextRequest is the k-th request of an epoch of s's scheme (a fresh
// request iterator: the schemes here give the same order each epoch only
// when sequential, so the shuffled one is re-seeded identically).
func nextRequest(t *testing.T, s *DatasetStream, k int) (fuel.Request, bool) {
	t.Helper()
	var sch schemes.Scheme = s.scheme
	if sh, ok := sch.(*schemes.Shuffled); ok {
		sch = must(schemes.ShuffledScheme(sh.Examples, sh.BatchSize, numpyrand.New(3), false))
	}
	rit := must(sch.GetRequestIterator())
	var req fuel.Request
	for range k + 1 {
		r, err := rit.Next()
		if errors.Is(err, io.EOF) {
			return fuel.Request{}, true
		}
		if err != nil {
			t.Fatal(err)
		}
		req = r
	}
	return req, false
}

// TestFusedPipelineAllocatesNoBatch: MNIST's default pipeline (uint8
// images through the fused ScaleAndShift + Cast, Flatten) consumed as
// the main loop consumes it (Lend, Release after each batch) allocates
// far less than one batch per batch once warm: the dataset's uint8
// batches and the float32 ones both come from recyclers (before, each
// batch's uint8 copy was new memory).
func TestFusedPipelineAllocatesNoBatch(t *testing.T) {
	noConfig(t)
	const n, width, batch = 256, 4096, 32 // 128 KB of uint8 a batch
	x, y := nd.New(nd.Uint8, n, width), nd.New(nd.Uint8, n, 1)
	for i := range x.Size() {
		x.SetFlat(i, float64(i%253))
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: x}, {Name: "targets", Data: y}}, datasets.IndexableOptions{}))
	s := must(transformers.Flatten(must(transformers.Cast(must(transformers.ScaleAndShift(
		must(DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n), batch)))), 1/255.0, 0, []string{"features"})), "float32", []string{"features"})), nil))
	epoch := func() {
		it := must(s.GetEpochIterator())
		if !fuel.Lend(it) {
			t.Fatal("the pipeline does not lend")
		}
		for k := 0; ; k++ {
			d, err := it.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Row 1, column 1 of batch k: x's element (32k+1)·width+1.
			want := float64(float32(float64(((k*batch+1)*width+1)%253) * (1 / 255.0)))
			if d[0].DType() != nd.Float32 || d[0].Flat(width+1) != want {
				t.Fatalf("batch %d: %s%v, element %v, want %v", k, d[0].DType(), d[0].Shape, d[0].Flat(width+1), want)
			}
			for _, a := range d {
				a.Release()
			}
		}
	}
	epoch()
	epoch()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	epoch()
	runtime.ReadMemStats(&after)
	perBatch := float64(after.TotalAlloc-before.TotalAlloc) / (n / batch)
	if perBatch > width*batch/8 {
		t.Errorf("%.0f bytes allocated a batch, want far less than a batch's %d", perBatch, width*batch)
	}
}

// TestFusedCastReadsViews: MNIST's default pipeline consumed as the main
// loop consumes it gives the batches of the unlent pipeline bit for bit,
// for sequential and shuffled schemes, while its fused ScaleAndShift +
// Cast reads a sequential batch's uint8 images straight from the dataset
// (a view: no uint8 buffer is lent for them) and the consumer never
// gets an array that aliases the dataset, whose bytes stay unchanged.
func TestFusedCastReadsViews(t *testing.T) {
	noConfig(t)
	const n, width, batch = 100, 33, 16 // a last partial batch
	x, y := nd.New(nd.Uint8, n, width), nd.New(nd.Uint8, n, 1)
	xs := x.Data.([]uint8)
	for i := range xs {
		xs[i] = uint8(i*37 + i/251)
	}
	for i := range n {
		y.SetFlat(i, float64(i%10))
	}
	orig := x.Copy()
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: x}, {Name: "targets", Data: y}}, datasets.IndexableOptions{}))
	pipeline := func(scheme schemes.Scheme) fuel.Stream {
		return must(transformers.Flatten(must(transformers.Cast(must(transformers.ScaleAndShift(
			must(DataStream(ds, scheme)), 1/255.0, 0, []string{"features"})), "float32", []string{"features"})), nil))
	}
	inData := func(a *nd.Array) bool {
		if a.Size() == 0 {
			return false
		}
		var p uintptr
		switch d := a.Data.(type) {
		case []uint8:
			p = uintptr(unsafe.Pointer(&d[0]))
		default:
			return false
		}
		lo := uintptr(unsafe.Pointer(&xs[0]))
		return p >= lo && p < lo+uintptr(len(xs))
	}
	for name, mk := range map[string]func() schemes.Scheme{
		"sequential": func() schemes.Scheme { return must(schemes.SequentialScheme(schemes.Range(n), batch)) },
		"shuffled": func() schemes.Scheme {
			return must(schemes.ShuffledScheme(schemes.Range(n), batch, numpyrand.New(5), false))
		},
	} {
		want := drain(t, must(pipeline(mk()).GetEpochIterator()))
		s := pipeline(mk())
		it := must(s.GetEpochIterator())
		if !fuel.Lend(it) {
			t.Fatalf("%s: the pipeline does not lend", name)
		}
		for k := 0; ; k++ {
			d, err := it.Next()
			if errors.Is(err, io.EOF) {
				if k != len(want) {
					t.Fatalf("%s: %d batches, want %d", name, k, len(want))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range d {
				if !nd.Equal(d[i], want[k][i]) || d[i].DType() != want[k][i].DType() {
					t.Fatalf("%s: batch %d source %d differs from the unlent pipeline's", name, k, i)
				}
				if inData(d[i]) {
					t.Fatalf("%s: batch %d source %d aliases the dataset", name, k, i)
				}
			}
			for _, a := range d {
				a.Release()
			}
		}
		if !nd.Equal(x, orig) {
			t.Fatalf("%s: the dataset's bytes changed", name)
		}
	}
	// The iterator below the fused pass gives views of the features (and
	// copies of the targets, which the pass hands on).
	it := must(must(DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n), batch)))).GetEpochIterator())
	if !fuel.Lend(it) || !it.(fuel.Viewer).View([]bool{true, false}) {
		t.Fatal("a lending DataStream over an IndexableDataset does not view")
	}
	d := must(it.Next())
	if !inData(d[0]) || &d[0].Data.([]uint8)[0] != &xs[0] || inData(d[1]) {
		t.Errorf("features a view: %v, targets a view: %v; want true, false", inData(d[0]), inData(d[1]))
	}
	// Without a loan there are no views.
	it = must(must(DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n), batch)))).GetEpochIterator())
	if it.(fuel.Viewer).View([]bool{true, true}) {
		t.Error("View without Lend")
	}
	if d := must(it.Next()); inData(d[0]) {
		t.Error("a batch of an unlent iteration is a view")
	}
}
