package transformers_test

import (
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	. "github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

// slowStream is toyStream behind a Mapping that sleeps dataDelay per
// batch: data that takes time to produce.
func slowStream(b *testing.B, dataDelay time.Duration) fuel.Stream {
	return must(Mapping(toyStreamN(b, 40), func(d []*nd.Array) ([]*nd.Array, error) {
		time.Sleep(dataDelay)
		return d, nil
	}, nil))
}

// epochWithCompute consumes an epoch spending compute per batch (the
// training step) and returns how long it took.
func epochWithCompute(b *testing.B, s fuel.Stream, compute time.Duration) time.Duration {
	start := time.Now()
	it := must(s.GetEpochIterator())
	n := 0
	for {
		if _, err := it.Next(); err != nil {
			break
		}
		time.Sleep(compute)
		n++
	}
	if n != 40 {
		b.Fatalf("%d batches, want 40", n)
	}
	return time.Since(start)
}

// BenchmarkMultiProcessingOverlap: 40 batches that take 2 ms each to
// produce, consumed by a step of 2 ms. Without MultiProcessing an epoch
// takes the sum (~160 ms), with it about the maximum (~80 ms). Reports
// both epoch times and their ratio (the benchmark fails if the
// prefetching epoch is not at least 1.4 times faster, a generous bound
// for a loaded machine).
func BenchmarkMultiProcessingOverlap(b *testing.B) {
	const data, compute = 2 * time.Millisecond, 2 * time.Millisecond
	var plain, mp time.Duration
	for i := 0; i < b.N; i++ {
		plain += epochWithCompute(b, slowStream(b, data), compute)
		mp += epochWithCompute(b, must(MultiProcessing(slowStream(b, data), 10)), compute)
	}
	b.ReportMetric(float64(plain.Milliseconds())/float64(b.N), "ms/epoch-plain")
	b.ReportMetric(float64(mp.Milliseconds())/float64(b.N), "ms/epoch-multiprocessing")
	b.ReportMetric(float64(plain)/float64(mp), "speedup")
	if float64(plain)/float64(mp) < 1.4 {
		b.Errorf("MultiProcessing epoch %v vs %v without: no overlap", mp/time.Duration(b.N), plain/time.Duration(b.N))
	}
}

// toyStreamN is a stream of n single-example batches of one float32.
func toyStreamN(b *testing.B, n int) fuel.Stream {
	x := make([]float32, n)
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: nd.FromSlice(x)}}, datasets.IndexableOptions{}))
	return must(streams.DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n), 1))))
}
