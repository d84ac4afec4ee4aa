package streams

import (
	"errors"
	"io"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

// BenchmarkTutorialPipelineLent is the data path of the tutorial's main
// loop (scripts/bench_mlp_tutorial.star) without the step: MNIST-sized
// uint8 images (60,000 of 784) in sequential batches of 256 through the
// fused ScaleAndShift(1/255) + Cast(float32) and Flatten, lent and
// released as the main loop does. One op is a batch; cpu-ns/batch is the
// process's CPU time (getrusage), which a loaded machine inflates less
// than the wall clock.
func BenchmarkTutorialPipelineLent(b *testing.B) {
	noConfig(b)
	const n, width, batch = 60000, 784, 256
	x, y := nd.New(nd.Uint8, n, width), nd.New(nd.Uint8, n, 1)
	xs := x.Data.([]uint8)
	for i := range xs {
		xs[i] = uint8(i * 37 % 251)
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: x}, {Name: "targets", Data: y}}, datasets.IndexableOptions{}))
	s := must(transformers.Flatten(must(transformers.Cast(must(transformers.ScaleAndShift(
		must(DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n/batch*batch), batch)))), 1/255.0, 0, []string{"features"})), "float32", []string{"features"})), nil))
	var it fuel.EpochIterator
	next := func() {
		for {
			if it == nil {
				it = must(s.GetEpochIterator())
				if !fuel.Lend(it) {
					b.Fatal("the pipeline does not lend")
				}
			}
			d, err := it.Next()
			if errors.Is(err, io.EOF) {
				it = nil
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			for _, a := range d {
				a.Release()
			}
			return
		}
	}
	for range 2 * n / batch { // warm: the recyclers' buffers
		next()
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		next()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/batch")
}
