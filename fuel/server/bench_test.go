package server

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
)

// mnistStream is the embedded MNIST training subset (5,000 examples) in
// batches of 256 with MNIST's default transformers: float32 features
// (256, 1, 28, 28) in [0, 1] and uint8 targets (256, 1), 784 KiB a batch.
func mnistStream(b testing.TB) fuel.Stream {
	b.Helper()
	b.Setenv("FUEL_FLOATX", "float32")
	ds := must(datasets.EmbeddedMNIST([]string{"train"}, datasets.MNISTOptions{}))
	return must(streams.DefaultStream(ds, must(schemes.SequentialScheme(schemes.Range(ds.NumExamples()), 256))))
}

// epochBytes drains one epoch, returning its batches and bytes.
func epochBytes(b *testing.B, s fuel.Stream) (batches, n int) {
	it, err := s.GetEpochIterator()
	if err != nil {
		b.Fatal(err)
	}
	for {
		d, err := it.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		batches++
		for _, a := range d {
			n += len(Bytes(a))
		}
	}
}

func report(b *testing.B, batches, n int) {
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(batches)/s, "batches/s")
	b.ReportMetric(float64(n)/s/1e6, "MB/s")
}

// BenchmarkMNISTInProcess reads epochs of the stream directly.
func BenchmarkMNISTInProcess(b *testing.B) {
	s := mnistStream(b)
	var batches, n int
	b.ResetTimer()
	for range b.N {
		k, m := epochBytes(b, s)
		batches += k
		n += m
	}
	report(b, batches, n)
}

// BenchmarkMNISTThroughServer reads the same epochs through a server (in
// this process, over loopback TCP, HWM 10 at both ends).
func BenchmarkMNISTThroughServer(b *testing.B) {
	s := mnistStream(b)
	srv := serve(b, s, Options{})
	c := must(NewServerDataStream(s.Sources(), false, ClientOptions{Port: srv.Port(), Timeout: 30 * time.Second}))
	defer c.Close()
	epochBytes(b, c) // connected, queues filled
	var batches, n int
	b.ResetTimer()
	for range b.N {
		k, m := epochBytes(b, c)
		batches += k
		n += m
	}
	report(b, batches, n)
}

// constStream gives the same MNIST-shaped batch (float32 (256, 784) and
// uint8 (256, 1)) 20 times an epoch: the transport alone, without the
// stream's own work.
type constStream struct{ batch []*nd.Array }

func (s *constStream) Sources() []string               { return []string{"features", "targets"} }
func (s *constStream) AxisLabels() map[string][]string { return nil }
func (s *constStream) ProducesExamples() bool          { return false }
func (s *constStream) GetEpochIterator() (fuel.EpochIterator, error) {
	n := 0
	return iterFunc(func() ([]*nd.Array, error) {
		if n == 20 {
			return nil, io.EOF
		}
		n++
		return s.batch, nil
	}), nil
}

type iterFunc func() ([]*nd.Array, error)

func (f iterFunc) Next() ([]*nd.Array, error) { return f() }

// BenchmarkTransportOnly is the server's ceiling here: ready batches sent
// and decoded over loopback.
func BenchmarkTransportOnly(b *testing.B) {
	s := &constStream{batch: []*nd.Array{nd.New(nd.Float32, 256, 784), nd.New(nd.Uint8, 256, 1)}}
	srv := serve(b, s, Options{})
	c := must(NewServerDataStream(s.Sources(), false, ClientOptions{Port: srv.Port(), Timeout: 30 * time.Second}))
	defer c.Close()
	epochBytes(b, c)
	var batches, n int
	b.ResetTimer()
	for range b.N {
		k, m := epochBytes(b, c)
		batches += k
		n += m
	}
	report(b, batches, n)
}
