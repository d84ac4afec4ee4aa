package server

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
	"github.com/blocks-go/blocks/numpyrand"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// python is Debian's /usr/bin/python3 with numpy and zmq, or a skip.
func python(t testing.TB) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import zmq, numpy").Run(); err != nil {
		t.Skipf("%s with zmq and numpy is needed (Debian python3-zmq, python3-numpy; make test-deps): %v", py, err)
	}
	return py
}

// summary is what both ends compare: per epoch, per batch, per array,
// [descr, shape, sha256 of the raw bytes].
type summary [][][][3]any

func describe(arrays []*nd.Array) [][3]any {
	out := make([][3]any, len(arrays))
	for i, a := range arrays {
		h := sha256.Sum256(Bytes(a))
		shape := make([]any, len(a.Shape))
		for j, d := range a.Shape {
			shape[j] = float64(d) // as encoding/json decodes numbers
		}
		out[i] = [3]any{mustDescr(a.DType()), shape, hex.EncodeToString(h[:])}
	}
	return out
}

// drainEpochs reads n epochs of a stream.
func drainEpochs(t testing.TB, s fuel.Stream, n int) summary {
	t.Helper()
	var out summary
	for range n {
		it, err := s.GetEpochIterator()
		if err != nil {
			t.Fatal(err)
		}
		var epoch [][][3]any
		for {
			d, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			epoch = append(epoch, describe(d))
		}
		out = append(out, epoch)
	}
	return out
}

// mixedStream is a shuffled stream of 23 examples in batches of 5 with a
// source of each dtype (bool included), seeded, so each epoch differs.
func mixedStream(t testing.TB) fuel.Stream {
	t.Helper()
	const n = 23
	rng := numpyrand.New(7)
	f32 := nd.New(nd.Float32, n, 3, 4)
	f64 := nd.New(nd.Float64, n, 2)
	i64 := nd.New(nd.Int64, n)
	i32 := nd.New(nd.Int32, n, 1)
	u8 := nd.New(nd.Uint8, n, 2, 2)
	b := nd.New(nd.Bool, n, 3)
	for _, a := range []*nd.Array{f32, f64, i64, i32, u8, b} {
		for k := range a.Size() {
			v := rng.RandomSample()
			switch a.DType() {
			case nd.Int64:
				v = (v - 0.5) * 1e12
			case nd.Int32:
				v = (v - 0.5) * 1e6
			case nd.Uint8:
				v *= 255
			case nd.Bool:
				v = float64(int(v * 2))
			}
			a.SetFlat(k, v)
		}
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{
		{Name: "f32", Data: f32}, {Name: "f64", Data: f64}, {Name: "i64", Data: i64},
		{Name: "i32", Data: i32}, {Name: "u8", Data: u8}, {Name: "b", Data: b},
	}, datasets.IndexableOptions{}))
	return must(streams.DataStream(ds, must(schemes.ShuffledScheme(schemes.Range(n), 5, numpyrand.New(1), false))))
}

// serve starts a Go server on a free port for the test's lifetime.
func serve(t testing.TB, s fuel.Stream, opts Options) *Server {
	t.Helper()
	opts.Port = -1
	srv, err := Listen(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("server did not stop within 5 s of its cancellation")
		}
	})
	return srv
}

func writeScript(t testing.TB, name, src string) string {
	t.Helper()
	p := t.TempDir() + "/" + name
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustDescr(dt nd.DType) string {
	d, err := npy.Descr(dt, binary.NativeEndian)
	if err != nil {
		panic(err)
	}
	return d
}
