package streams

import (
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// shardRows are the rows of microbatches [lo, hi) of k near-equal
// microbatches of a batch of n (the first n mod k one larger).
func shardRows(n, k, lo, hi int) (int, int) {
	off := func(j int) int { return j*(n/k) + min(j, n%k) }
	return off(lo), off(hi)
}

// shardPipeline is a DataStream over 47 examples (uint8 images, int64
// targets, a float32 source) with a shuffled or sequential scheme of
// batches of 10, under ScaleAndShift and Cast (fused), Flatten, Rename
// and FilterSources.
func shardPipeline(t *testing.T, shuffled bool) fuel.Stream {
	t.Helper()
	const n = 47
	img := make([]uint8, n*2*3)
	for i := range img {
		img[i] = uint8(i * 37)
	}
	tg := make([]int64, n)
	z := make([]float32, n)
	for i := range tg {
		tg[i] = int64(i % 10)
		z[i] = float32(i) / 3
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{
		{Name: "features", Data: nd.FromSlice(img, n, 2, 3)},
		{Name: "targets", Data: nd.FromSlice(tg, n, 1)},
		{Name: "z", Data: nd.FromSlice(z, n)},
	}, datasets.IndexableOptions{}))
	var sc schemes.Scheme = must(schemes.SequentialScheme(schemes.Range(n), 10))
	if shuffled {
		sc = must(schemes.ShuffledScheme(schemes.Range(n), 10, numpyrand.New(3), false))
	}
	var s fuel.Stream = must(DataStream(ds, sc))
	s = must(transformers.ScaleAndShift(s, 1/255.0, 0, []string{"features"}))
	s = must(transformers.Cast(s, "float32", []string{"features"}))
	s = must(transformers.Flatten(s, []string{"features"}))
	s = must(transformers.Rename(s, map[string]string{"z": "w"}, ""))
	return must(transformers.FilterSources(s, []string{"features", "targets", "w"}))
}

func stateJSON(t *testing.T, it fuel.EpochIterator) string {
	t.Helper()
	st, err := it.(fuel.StatefulIterator).State()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st)
	return string(b)
}

func sameRows(t *testing.T, what string, got, whole []*nd.Array, lo, hi int) {
	t.Helper()
	if len(got) != len(whole) {
		t.Fatalf("%s: %d sources, want %d", what, len(got), len(whole))
	}
	for i := range whole {
		w := whole[i].Slice(lo, hi)
		if !nd.SameShape(got[i].Shape, w.Shape) || got[i].DType() != w.DType() {
			t.Fatalf("%s: source %d has shape %v %s, want rows [%d, %d): %v %s", what, i, got[i].Shape, got[i].DType(), lo, hi, w.Shape, w.DType())
		}
		for j := range w.Size() {
			if got[i].Flat(j) != w.Flat(j) {
				t.Fatalf("%s: source %d element %d: %v, want %v", what, i, j, got[i].Flat(j), w.Flat(j))
			}
		}
	}
}

// A shard reads, of every batch, the rows of its microbatches, the same
// values as the whole pipeline's, with the same iterator states, and
// resumes from them; the first batch is read whole once.
func TestShardReadsItsRows(t *testing.T) {
	noConfig(t)
	for _, shuffled := range []bool{false, true} {
		for _, block := range [][2]int{{0, 2}, {2, 4}, {1, 2}} {
			ref := shardPipeline(t, shuffled)
			var sizes []int
			firsts := 0
			shard := &fuel.Shard{
				Rows:  func(n int) (int, int) { return shardRows(n, 4, block[0], block[1]) },
				Batch: func(n int) { sizes = append(sizes, n) },
				First: func(whole []*nd.Array) error {
					firsts++
					if len(whole) != 3 || whole[0].Shape[0] != 10 || whole[0].DType() != nd.Uint8 {
						t.Errorf("first batch: %v", whole)
					}
					return nil
				},
			}
			sh, ok := fuel.ShardStream(shardPipeline(t, shuffled), shard)
			if !ok {
				t.Fatal("the pipeline cannot be sharded")
			}
			var want []int
			var saved string
			var savedAt int
			var rest [][]*nd.Array // the whole batches after the saved state
			for epoch := range 2 {
				ri := must(ref.GetEpochIterator())
				si := must(sh.GetEpochIterator())
				for b := 0; ; b++ {
					whole, err := ri.Next()
					got, err2 := si.Next()
					if errors.Is(err, io.EOF) {
						if !errors.Is(err2, io.EOF) {
							t.Fatalf("the shard did not end with the epoch: %v", err2)
						}
						break
					}
					if err != nil || err2 != nil {
						t.Fatal(err, err2)
					}
					n := whole[0].Shape[0]
					want = append(want, n)
					lo, hi := shardRows(n, 4, block[0], block[1])
					sameRows(t, "batch", got, whole, lo, hi)
					if a, b := stateJSON(t, ri), stateJSON(t, si); a != b {
						t.Fatalf("iterator states differ:\n%s\n%s", a, b)
					}
					if epoch == 1 && b == 1 {
						saved, savedAt = stateJSON(t, si), len(want)
					}
					if saved != "" && len(want) > savedAt {
						rest = append(rest, whole)
					}
				}
			}
			if firsts != 1 || len(sizes) != len(want) {
				t.Fatalf("First called %d times, Batch %d times for %d batches", firsts, len(sizes), len(want))
			}
			for i := range want {
				if sizes[i] != want[i] {
					t.Fatalf("Batch told %v, the batches had %v rows", sizes, want)
				}
			}
			// Resume a fresh shard where the saved state stood.
			var st fuel.IteratorState
			if err := json.Unmarshal([]byte(saved), &st); err != nil {
				t.Fatal(err)
			}
			sh2, _ := fuel.ShardStream(shardPipeline(t, shuffled), &fuel.Shard{Rows: shard.Rows})
			it, err := sh2.(fuel.ResumableStream).ResumeEpochIterator(st)
			if err != nil {
				t.Fatal(err)
			}
			for i, whole := range rest {
				got, err := it.Next()
				if err != nil {
					t.Fatalf("resumed batch %d: %v", i, err)
				}
				lo, hi := shardRows(whole[0].Shape[0], 4, block[0], block[1])
				sameRows(t, "resumed batch", got, whole, lo, hi)
			}
			if _, err := it.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("resumed epoch did not end: %v", err)
			}
		}
	}
}

// Streams that cannot give some rows of a batch with the same bits are
// not sharded: an example stream, a Mapping (any function of the batch),
// a random transformer, Batch over examples, Padding.
func TestShardRefused(t *testing.T) {
	noConfig(t)
	shard := &fuel.Shard{Rows: func(n int) (int, int) { return 0, n / 2 }}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: nd.FromSlice([]float32{1, 2, 3, 4}, 4, 1)}}, datasets.IndexableOptions{}))
	examples := must(DataStream(ds, nil))
	batches := must(DataStream(ds, must(schemes.SequentialScheme(schemes.Range(4), 2))))
	mapped := must(transformers.Mapping(batches, func(d []*nd.Array) ([]*nd.Array, error) { return d, nil }, nil))
	batched := must(transformers.Batch(examples, must(schemes.ConstantScheme(2, 4, 0)), 0))
	padded := must(transformers.Padding(batches, nil, ""))
	for name, s := range map[string]fuel.Stream{"example stream": examples, "Mapping": mapped, "Batch": batched, "Padding": padded} {
		if out, ok := fuel.ShardStream(s, shard); ok || out != s {
			t.Errorf("%s was sharded", name)
		}
	}
	if _, ok := fuel.ShardStream(batches, shard); !ok {
		t.Error("a DataStream with a batch scheme was not sharded")
	}
}
