package transformers_test

import (
	"testing"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// A stream knows its epoch's length when its scheme does and every
// transformer maps items one to one.
func TestBatchesPerEpoch(t *testing.T) {
	x := nd.New(nd.Float32, 10, 2, 2)
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: x}}, datasets.IndexableOptions{}))
	type lengther interface{ BatchesPerEpoch() (int, bool) }
	check := func(name string, s lengther, want int, wantOK bool) {
		t.Helper()
		n, ok := s.BatchesPerEpoch()
		if n != want || ok != wantOK {
			t.Errorf("%s: BatchesPerEpoch() = %d, %v; want %d, %v", name, n, ok, want, wantOK)
		}
	}
	seq := must(streams.DataStream(ds, must(schemes.SequentialScheme(schemes.Range(10), 3))))
	check("SequentialScheme(10, 3)", seq, 4, true)
	shuf := must(streams.DataStream(ds, must(schemes.ShuffledScheme(schemes.Range(10), 5, numpyrand.New(1), false))))
	check("ShuffledScheme(10, 5)", shuf, 2, true)
	check("no scheme (examples)", must(streams.DataStream(ds, nil)), 10, true)
	flat := must(transformers.Flatten(seq, nil))
	check("Flatten", flat, 4, true)
	check("MultiProcessing(Flatten)", must(transformers.MultiProcessing(flat, 2)), 4, true)
	check("Filter", must(transformers.Filter(seq, func([]*nd.Array) (bool, error) { return true, nil })), 0, false)
	// Check the count against an epoch.
	it := must(flat.GetEpochIterator())
	n := 0
	for {
		if _, err := it.Next(); err != nil {
			break
		}
		n++
	}
	if n != 4 {
		t.Errorf("the epoch has %d batches, BatchesPerEpoch said 4", n)
	}
}
