//go:build cgo

package h5_test

import (
	"errors"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/converters"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/nd"
)

var (
	benchOnce sync.Once
	benchFile string
	benchErr  error
)

// mnistFile is the full MNIST in Fuel's format: $BLOCKS_BENCH_MNIST, or
// converted once from the shared data's MNIST (fixtures.Shared) into a
// temporary directory.
func mnistFile(b *testing.B) string {
	if p := os.Getenv("BLOCKS_BENCH_MNIST"); p != "" {
		return p
	}
	src := fixtures.Shared(b, "data/mnist")
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fuel-bench")
		if err != nil {
			benchErr = err
			return
		}
		benchFile, benchErr = converters.Convert("mnist", converters.Options{Directory: src, OutputDirectory: dir})
	})
	if benchErr != nil {
		b.Fatalf("no MNIST to benchmark on: %v", benchErr)
	}
	return benchFile
}

// pipeline is the benchmarked stream: MNIST train in batches of 256,
// Flatten, ScaleAndShift(1/255, 0), Cast float32.
func pipeline(b *testing.B, d *h5.H5PYDataset) fuel.Stream {
	scheme, err := schemes.SequentialScheme(schemes.Range(d.NumExamples()), 256)
	if err != nil {
		b.Fatal(err)
	}
	var s fuel.Stream
	if s, err = streams.DataStream(d, scheme); err != nil {
		b.Fatal(err)
	}
	if s, err = transformers.Flatten(s, []string{"features"}); err != nil {
		b.Fatal(err)
	}
	if s, err = transformers.ScaleAndShift(s, 1/255.0, 0, []string{"features"}); err != nil {
		b.Fatal(err)
	}
	if s, err = transformers.Cast(s, "float32", []string{"features"}); err != nil {
		b.Fatal(err)
	}
	return s
}

func benchmarkMNISTStream(b *testing.B, inMemory bool) {
	path := mnistFile(b)
	examples := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Opening is timed: with LoadInMemory it reads the split, as the
		// Python side's memory mode does.
		d, err := h5.Open(path, []string{"train"}, h5.Options{LoadInMemory: inMemory})
		if err != nil {
			b.Fatal(err)
		}
		it, err := pipeline(b, d).GetEpochIterator()
		if err != nil {
			b.Fatal(err)
		}
		fuel.Lend(it) // releases each batch, as the main loop
		for {
			batch, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if batch[0].DType() != nd.Float32 || batch[0].NDim() != 2 {
				b.Fatalf("batch %s%v", batch[0].DType(), batch[0].Shape)
			}
			examples += batch[0].Shape[0]
			for _, a := range batch {
				a.Release() // done with it, as the main loop after its step
			}
		}
		d.Close()
	}
	b.ReportMetric(float64(examples)/b.Elapsed().Seconds(), "examples/s")
}

// BenchmarkMNISTStreamMemory: Fuel's MNIST default (load_in_memory=True).
func BenchmarkMNISTStreamMemory(b *testing.B) { benchmarkMNISTStream(b, true) }

// BenchmarkMNISTStreamFile: every batch read from the file by hyperslab.
func BenchmarkMNISTStreamFile(b *testing.B) { benchmarkMNISTStream(b, false) }

// BenchmarkMNISTReadFile: the batches alone, read from the file (no
// transformers), to separate HDF5 reading from the transformers' work.
func BenchmarkMNISTReadFile(b *testing.B) {
	path := mnistFile(b)
	d, err := h5.Open(path, []string{"train"}, h5.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	examples := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for start := 0; start < d.NumExamples(); start += 256 {
			out, err := d.GetData(fuel.Request{Start: start, Stop: min(start+256, d.NumExamples())})
			if err != nil {
				b.Fatal(err)
			}
			examples += out[0].Shape[0]
		}
	}
	b.ReportMetric(float64(examples)/b.Elapsed().Seconds(), "examples/s")
}
