package server

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestGoServerGoClient serves a stream with every dtype over three
// shuffled epochs and reads back the same bytes, dtypes and shapes as
// the stream gives in-process.
func TestGoServerGoClient(t *testing.T) {
	want := drainEpochs(t, mixedStream(t), 3)
	src := mixedStream(t)
	srv := serve(t, src, Options{HWM: 4})
	c, err := NewServerDataStream(src.Sources(), false, ClientOptions{Port: srv.Port(), HWM: 4, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := drainEpochs(t, c, 3)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("served epochs differ from the in-process stream:\n%v\nwant\n%v", got, want)
	}
	if len(got[0]) != 5 || reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("want 5 batches per epoch, each epoch shuffled anew")
	}
}

func TestClientSourcesMismatch(t *testing.T) {
	src := mixedStream(t)
	srv := serve(t, src, Options{})
	c := must(NewServerDataStream([]string{"features", "targets"}, false, ClientOptions{Port: srv.Port(), Timeout: 10 * time.Second}))
	defer c.Close()
	it := must(c.GetEpochIterator())
	_, err := it.Next()
	if err == nil || !strings.Contains(err.Error(), "sent 6 arrays, but the stream's sources are (features, targets)") {
		t.Fatalf("error %v", err)
	}
}

func TestListenDefaultsToLoopback(t *testing.T) {
	srv, err := Listen(mixedStream(t), Options{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.Endpoint(), "tcp://127.0.0.1:") || srv.Port() <= 0 {
		t.Errorf("endpoint %s, port %d", srv.Endpoint(), srv.Port())
	}
}

// TestEpochsThenClose: a server limited to 2 epochs returns once they are
// queued, and what it queued still reaches a client that reads later.
func TestEpochsThenClose(t *testing.T) {
	want := drainEpochs(t, mixedStream(t), 2)
	srv, err := Listen(mixedStream(t), Options{Port: -1, HWM: 100, Epochs: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := must(NewServerDataStream(mixedStream(t).Sources(), false, ClientOptions{Port: srv.Port(), HWM: 100, Timeout: 10 * time.Second}))
	defer c.Close()
	if _, err := c.GetEpochIterator(); err != nil { // connects
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	time.Sleep(200 * time.Millisecond)
	got := drainEpochs(t, c, 2)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("the epochs read after the server finished differ")
	}
}
