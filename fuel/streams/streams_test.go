package streams

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// noConfig makes floatX the default (float32) whatever ~/.fuelrc says.
func noConfig(t testing.TB) {
	t.Setenv("FUEL_CONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("FUEL_FLOATX", "")
}

func drain(t *testing.T, it fuel.EpochIterator) [][]*nd.Array {
	t.Helper()
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

func sum(a *nd.Array) float64 {
	var s float64
	for i := range a.Size() {
		s += a.Flat(i)
	}
	return s
}

// firstImageSum is the first training image after MNIST's default
// transformers, summed in float64, as numpy computes it:
//
//	f = (train[:1] * (1/255.0) + 0).astype(numpy.float32)
//	float(f.astype(numpy.float64).sum())  # 107.94117754790932
//
// close to, but not exactly, 27525/255 = 107.941176...: each pixel is
// rounded to float32.
const firstImageSum = 107.94117754790932

func TestMNISTDefaultStream(t *testing.T) {
	noConfig(t)
	ds := must(datasets.EmbeddedMNIST([]string{"train"}, datasets.MNISTOptions{}))
	s := must(DefaultStream(ds, must(schemes.SequentialScheme(schemes.Range(ds.NumExamples()), 256))))
	if !slices.Equal(s.Sources(), []string{"features", "targets"}) || s.ProducesExamples() {
		t.Fatalf("sources %v, examples %v", s.Sources(), s.ProducesExamples())
	}
	batches := drain(t, must(s.GetEpochIterator()))
	// 5000 = 19*256 + 136.
	if len(batches) != 20 {
		t.Fatalf("%d batches, want 20", len(batches))
	}
	for k, b := range batches {
		n := 256
		if k == 19 {
			n = 136
		}
		f, y := b[0], b[1]
		if f.DType() != nd.Float32 || !nd.SameShape(f.Shape, []int{n, 1, 28, 28}) {
			t.Fatalf("batch %d features %s%v", k, f.DType(), f.Shape)
		}
		if y.DType() != nd.Uint8 || !nd.SameShape(y.Shape, []int{n, 1}) {
			t.Fatalf("batch %d targets %s%v", k, y.DType(), y.Shape)
		}
		if lo, hi := slices.Min(f.F32()), slices.Max(f.F32()); lo != 0 || hi != 1 {
			t.Errorf("batch %d features in [%v, %v], want [0, 1]", k, lo, hi)
		}
	}
	if got := sum(batches[0][0].Slice(0, 1)); got != firstImageSum {
		t.Errorf("first image sum %.17g, numpy's %.17g", got, firstImageSum)
	}
	if y := batches[0][1]; y.Flat(0) != 5 || y.Flat(1) != 0 || y.Flat(2) != 4 {
		t.Errorf("first targets %v %v %v, want 5 0 4", y.Flat(0), y.Flat(1), y.Flat(2))
	}

	flat := must(transformers.Flatten(s, []string{"features"}))
	b := drain(t, must(flat.GetEpochIterator()))
	if !nd.SameShape(b[0][0].Shape, []int{256, 784}) || !nd.SameShape(b[19][0].Shape, []int{136, 784}) || b[0][0].DType() != nd.Float32 {
		t.Errorf("flattened %v, last %v", b[0][0].Shape, b[19][0].Shape)
	}
	want := map[string][]string{"features": {"batch", "feature"}, "targets": {"batch", "index"}}
	if !reflect.DeepEqual(flat.AxisLabels(), want) {
		t.Errorf("axis labels %v, want %v", flat.AxisLabels(), want)
	}
	if got := sum(b[0][0].Slice(0, 1)); got != firstImageSum {
		t.Errorf("flattened first image sum %.17g", got)
	}
}

func TestExampleStream(t *testing.T) {
	noConfig(t)
	ds := must(datasets.EmbeddedMNIST([]string{"test"}, datasets.MNISTOptions{Subset: datasets.SliceSubset(0, 3)}))
	s := must(DefaultStream(ds, nil))
	if !s.ProducesExamples() {
		t.Fatal("a stream with no scheme gives examples")
	}
	want := map[string][]string{"features": {"channel", "height", "width"}, "targets": {"index"}}
	if !reflect.DeepEqual(s.AxisLabels(), want) {
		t.Errorf("example stream axis labels %v, want %v", s.AxisLabels(), want)
	}
	ex := drain(t, must(s.GetEpochIterator()))
	if len(ex) != 3 || !nd.SameShape(ex[0][0].Shape, []int{1, 28, 28}) || ex[0][0].DType() != nd.Float32 || !nd.SameShape(ex[0][1].Shape, []int{1}) {
		t.Fatalf("%d examples, first %s%v", len(ex), ex[0][0].DType(), ex[0][0].Shape)
	}
	// t10k labels start 7, 2, 1.
	if ex[0][1].Flat(0) != 7 || ex[1][1].Flat(0) != 2 || ex[2][1].Flat(0) != 1 {
		t.Errorf("labels %v %v %v", ex[0][1], ex[1][1], ex[2][1])
	}
	flat := must(transformers.Flatten(s, nil))
	if e := drain(t, must(flat.GetEpochIterator())); !nd.SameShape(e[0][0].Shape, []int{784}) {
		t.Errorf("flattened example %v", e[0][0].Shape)
	}
}

// RandomState(1).shuffle(list(range(5000))), twice on one generator,
// first ten of each (Debian's numpy 1.24.2).
var (
	rs1Epoch1 = []int{2764, 4767, 3814, 3499, 2735, 3922, 2701, 1179, 932, 792}
	rs1Epoch2 = []int{473, 2932, 3982, 881, 3158, 4714, 4920, 2878, 278, 986}
)

// Each GetEpochIterator starts a new epoch: a shuffled scheme draws a new
// order, Fuel's.
func TestShuffledEpochs(t *testing.T) {
	noConfig(t)
	ds := must(datasets.EmbeddedMNIST([]string{"train"}, datasets.MNISTOptions{}))
	all := must(ds.GetData(fuel.Request{Start: 0, Stop: 5000}))[1]
	s := must(DataStream(ds, must(schemes.ShuffledScheme(schemes.Range(5000), 10, nil, false))))
	for e, order := range [][]int{rs1Epoch1, rs1Epoch2} {
		it := must(s.GetEpochIterator())
		b := must(it.Next())
		if !nd.Equal(b[1], all.Take(order)) {
			t.Errorf("epoch %d: first batch's targets %v, want those of examples %v", e+1, b[1], order)
		}
		if got := len(drain(t, it)); got != 499 {
			t.Errorf("epoch %d: %d more batches, want 499", e+1, got)
		}
	}
	if s.Epochs() != 2 {
		t.Errorf("%d epochs", s.Epochs())
	}
}

// A pipeline saved mid-epoch (iterator state through JSON, plus the
// generator's state) resumes bit for bit: the rest of the epoch and the
// next epoch equal those of an uninterrupted run.
func TestResumeMidEpoch(t *testing.T) {
	noConfig(t)
	ds := must(datasets.EmbeddedMNIST([]string{"test"}, datasets.MNISTOptions{}))
	pipeline := func(rng *numpyrand.RandomState) fuel.ResumableStream {
		st := must(DefaultStream(ds, must(schemes.ShuffledScheme(schemes.Range(1000), 64, rng, false))))
		return must(transformers.Flatten(st, nil))
	}
	// Uninterrupted: two epochs.
	ref := pipeline(numpyrand.New(5))
	ref1 := drain(t, must(ref.GetEpochIterator()))
	ref2 := drain(t, must(ref.GetEpochIterator()))
	if len(ref1) != 16 || ref1[15][0].Shape[0] != 1000-15*64 {
		t.Fatalf("%d batches, last of %d", len(ref1), ref1[15][0].Shape[0])
	}

	// Interrupted after 3 batches.
	rng := numpyrand.New(5)
	run := pipeline(rng)
	it := must(run.GetEpochIterator())
	for range 3 {
		must(it.Next())
	}
	state := must(it.(fuel.StatefulIterator).State())
	blob := must(json.Marshal(state))
	rngState := rng.State()

	var restored fuel.IteratorState
	if err := json.Unmarshal(blob, &restored); err != nil {
		t.Fatal(err)
	}
	rng2 := numpyrand.New(0)
	rng2.SetState(rngState)
	resumed := pipeline(rng2)
	rest := drain(t, must(resumed.ResumeEpochIterator(restored)))
	next := drain(t, must(resumed.GetEpochIterator()))
	same := func(what string, got, want [][]*nd.Array) {
		if len(got) != len(want) {
			t.Fatalf("%s: %d batches, want %d", what, len(got), len(want))
		}
		for k := range got {
			for i := range got[k] {
				if !nd.Equal(got[k][i], want[k][i]) {
					t.Fatalf("%s: batch %d source %d differs", what, k, i)
				}
			}
		}
	}
	same("rest of the epoch", rest, ref1[3:])
	same("next epoch", next, ref2)

	// A state from another scheme is refused.
	seq := must(DataStream(ds, must(schemes.SequentialScheme(schemes.Range(1000), 64))))
	inner := &restored // the DataStream's state, under the transformers'
	for inner.Requests == nil {
		inner = inner.Child
	}
	if _, err := seq.ResumeEpochIterator(*inner); err == nil || !strings.Contains(err.Error(), "no order") {
		t.Errorf("sequential scheme given a shuffled state: %v", err)
	}
}

func TestDataStreamErrors(t *testing.T) {
	if _, err := DataStream(nil, nil); err == nil {
		t.Error("no dataset: no error")
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: nd.FromSlice([]float32{1, 2, 3})}}, datasets.IndexableOptions{}))
	// A scheme asking for more examples than the dataset has.
	s := must(DataStream(ds, must(schemes.SequentialScheme(schemes.List([]int{0, 5}), 2))))
	it := must(s.GetEpochIterator())
	if _, err := it.Next(); err == nil || !strings.Contains(err.Error(), "index 5 out of range: the dataset has 3 examples") {
		t.Errorf("bad request: %v", err)
	}
	// No default transformers: DefaultStream is the DataStream.
	if d := must(DefaultStream(ds, nil)); d.(*DatasetStream) == nil {
		t.Error("DefaultStream of a plain dataset")
	}
}
