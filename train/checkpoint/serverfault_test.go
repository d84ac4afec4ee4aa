package checkpoint

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/server"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// dyingStream is the served stream: 40 examples in batches of 8, the
// same every epoch; with dieAt > 0 its dieAt-th batch (over all epochs)
// never comes: it waits until the server is cancelled and fails (a
// server process dying mid-epoch).
type dyingStream struct {
	fuel.Stream
	ctx          context.Context
	dieAt, count int
}

func (s *dyingStream) GetEpochIterator() (fuel.EpochIterator, error) {
	it, err := s.Stream.GetEpochIterator()
	return &dyingIter{it, s}, err
}

type dyingIter struct {
	fuel.EpochIterator
	s *dyingStream
}

func (it *dyingIter) Next() ([]*nd.Array, error) {
	d, err := it.EpochIterator.Next()
	if err != nil {
		return d, err
	}
	it.s.count++
	if it.s.count == it.s.dieAt {
		<-it.s.ctx.Done()
		return nil, errors.New("the server process died")
	}
	return d, nil
}

// startDataServer serves the stream on a free port until the test ends
// or cancel is called.
func startDataServer(t *testing.T, dieAt int) (port int, cancel func()) {
	t.Helper()
	r := numpyrand.New(4)
	xs := make([]float32, 40*3)
	ys := make([]float32, 40)
	for i := range xs {
		xs[i] = float32(r.StandardNormal())
	}
	for i := range ys {
		ys[i] = xs[3*i] - 2*xs[3*i+1]
	}
	ds, err := datasets.NewIndexableDataset([]datasets.Source{
		{Name: "x", Data: nd.FromSlice(xs, 40, 3)}, {Name: "y", Data: nd.FromSlice(ys, 40, 1)}}, datasets.IndexableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schemes.SequentialScheme(schemes.Range(40), 8)
	if err != nil {
		t.Fatal(err)
	}
	st, err := streams.DataStream(ds, sch)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Listen(&dyingStream{Stream: st, ctx: ctx, dieAt: dieAt}, server.Options{Port: -1, HWM: 2})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return srv.Port(), cancel
}

// serverLoop trains x·W ≈ y on the batches of the server at port; the
// client gives up on a server silent for timeout.
func serverLoop(t *testing.T, port int, timeout time.Duration, exts ...mainloop.Extension) (*mainloop.MainLoop, *core.Variable, *server.ServerDataStream) {
	t.Helper()
	client, err := server.NewServerDataStream([]string{"x", "y"}, false, server.ClientOptions{Port: port, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	x := core.NewInput("x", nd.Float32, 2)
	y := core.NewInput("y", nd.Float32, 2)
	w := core.NewShared(nd.FromSlice([]float32{0.1, -0.2, 0.3}, 3, 1), "W")
	h, err := core.Dot(x, w)
	if err != nil {
		t.Fatal(err)
	}
	cost := core.MeanAll(core.Sqr(core.Sub(h, y)))
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{w},
		StepRule: algorithms.NewScale(nd.Float32, 0.05)})
	if err != nil {
		t.Fatal(err)
	}
	fin, err := extensions.NewFinishAfter(extensions.Triggers{"after_n_epochs": 4})
	if err != nil {
		t.Fatal(err)
	}
	loop := mainloop.New(gd, client, nil, nil, append([]mainloop.Extension{fin}, exts...))
	loop.Signals = make(chan os.Signal)
	loop.Messages = io.Discard
	return loop, w, client
}

// TestDataServerDiesMidEpoch: the data server dies in the middle of epoch
// 3; training through the main loop stops with the client's error (the
// address, the timeout, how many messages came), and the checkpoint of
// epoch 2 resumes, against a restarted server, to the parameters of an
// uninterrupted run, bit for bit.
func TestDataServerDiesMidEpoch(t *testing.T) {
	refPort, _ := startDataServer(t, 0)
	// A live server may be slow on a loaded machine: only the run whose
	// server dies has a timeout short enough to fail the test quickly.
	ref, refW, _ := serverLoop(t, refPort, time.Minute)
	if err := ref.Run(); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(t.TempDir(), "run.tar")
	ck, err := NewCheckpointExtension(path, 1, nil, Bindings{}, extensions.Triggers{"after_epoch": true})
	if err != nil {
		t.Fatal(err)
	}
	port, _ := startDataServer(t, 13) // dies at batch 3 of epoch 3
	loop, _, _ := serverLoop(t, port, 3*time.Second, ck)
	start := time.Now()
	err = loop.Run()
	if err == nil {
		t.Fatal("training went on after the data server died")
	}
	msg := err.Error()
	if !strings.Contains(msg, "no data from tcp://localhost:") || !strings.Contains(msg, "within 3s") || !strings.Contains(msg, "after the 14 received") {
		t.Errorf("unclear error: %v", err)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the failure took %v", d)
	}
	if st := loop.Status(); st.IterationsDone != 12 || st.EpochsDone != 2 {
		t.Errorf("stopped at iteration %d, epoch %d; want 12, 2", st.IterationsDone, st.EpochsDone)
	}
	t.Logf("error: %v", err)

	c, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Manifest.IterationsDone != 10 {
		t.Fatalf("the last checkpoint is at iteration %d, want 10 (end of epoch 2)", c.Manifest.IterationsDone)
	}
	port2, _ := startDataServer(t, 0)
	ck2, err := NewCheckpointExtension(path, 1, nil, Bindings{}, extensions.Triggers{"after_epoch": true})
	if err != nil {
		t.Fatal(err)
	}
	ck2.Resume = &ResumeSource{Checkpoint: c}
	resumed, w, _ := serverLoop(t, port2, time.Minute, ck2)
	if err := resumed.Run(); err != nil {
		t.Fatal(err)
	}
	if st := resumed.Status(); st.IterationsDone != 20 {
		t.Errorf("the resumed run ended at iteration %d, want 20", st.IterationsDone)
	}
	if !reflect.DeepEqual(w.Value(), refW.Value()) {
		t.Errorf("W after resuming %v, uninterrupted %v", w.Value().Data, refW.Value().Data)
	}
}
