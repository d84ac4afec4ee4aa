//go:build cgo

package server

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"
)

// A marked server gives the same batches as an unmarked one; its header
// frames differ from Fuel's only by the marker's keys on the first
// header, and its stop frames carry the epoch's batch count.
func TestSequenceMarkersCleanRun(t *testing.T) {
	want := drainEpochs(t, mixedStream(t), 3)
	src := mixedStream(t)
	srv := serve(t, src, Options{HWM: 4, Sequence: true})
	c := must(NewServerDataStream(src.Sources(), false, ClientOptions{Port: srv.Port(), HWM: 4, Timeout: 10 * time.Second, Sequence: true}))
	defer c.Close()
	if got := drainEpochs(t, c, 3); !reflect.DeepEqual(got, want) {
		t.Fatal("a marked server's epochs differ from the in-process stream")
	}
	if c.seq.last == nil || !c.seq.last.Stop || c.seq.last.Epoch != 3 || c.seq.last.Batch != 5 || c.seq.last.Seq != 17 {
		t.Errorf("last marker %+v, want the stop of epoch 3 (5 batches), message 17", c.seq.last)
	}
}

// A client that requires markers refuses a Fuel server's messages.
func TestSequenceRequired(t *testing.T) {
	src := mixedStream(t)
	srv := serve(t, src, Options{})
	c := must(NewServerDataStream(src.Sources(), false, ClientOptions{Port: srv.Port(), Timeout: 10 * time.Second, Sequence: true}))
	defer c.Close()
	_, err := c.Receive()
	if err == nil || !strings.Contains(err.Error(), "sends no sequence markers, which this stream requires") {
		t.Fatalf("error %v", err)
	}
}

// TestSequenceDetectsSecondConsumer (issue 24 item 11): a second PULL
// socket on the same server silently took batches; with markers the
// consumer says so.
func TestSequenceDetectsSecondConsumer(t *testing.T) {
	src := mixedStream(t)
	srv := serve(t, src, Options{HWM: 2, Sequence: true})
	// The intruder: a bare PULL socket, owned by its goroutine, that takes
	// what comes until told to stop.
	quit, connected, stopped := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		defer close(stopped)
		zctx, err := zmq.NewContext()
		if err != nil {
			connected <- err
			return
		}
		defer zctx.Term()
		intruder, err := zctx.NewSocket(zmq.PULL)
		if err != nil {
			connected <- err
			return
		}
		defer intruder.Close()
		intruder.SetLinger(0)
		intruder.SetRcvtimeo(100 * time.Millisecond)
		if err := intruder.Connect(srv.Endpoint()); err != nil {
			connected <- err
			return
		}
		first := true
		for {
			select {
			case <-quit:
				return
			default:
			}
			if _, err := intruder.RecvMessageBytes(0); err == nil && first {
				first = false
				connected <- nil // it is connected and takes
			}
		}
	}()
	if err := <-connected; err != nil {
		t.Fatal(err)
	}
	defer func() { close(quit); <-stopped }()
	c := must(NewServerDataStream(src.Sources(), false, ClientOptions{Port: srv.Port(), HWM: 2, Timeout: 10 * time.Second}))
	defer c.Close()
	var errs []string
	for i := 0; i < 40 && len(errs) < 3; i++ {
		if _, err := c.Receive(); err != nil && !errors.Is(err, io.EOF) {
			errs = append(errs, err.Error())
		}
	}
	found := false
	for _, e := range errs {
		if strings.Contains(e, "lost between") && strings.Contains(e, "another consumer is connected to the server") {
			found = true
		}
	}
	if !found {
		t.Errorf("no lost-message error; errors: %q", errs)
	}
}

// The checks, message by message.
func TestSequenceChecks(t *testing.T) {
	b := func(server string, seq int64, epoch, batch int) Marker {
		return Marker{Server: server, Seq: seq, Epoch: epoch, Batch: batch}
	}
	stop := func(server string, seq int64, epoch, batches int) Marker {
		return Marker{Server: server, Seq: seq, Epoch: epoch, Batch: batches, Stop: true}
	}
	for _, c := range []struct {
		name    string
		markers []Marker
		want    string // in the error of the last marker; "" for none
	}{
		{"in order", []Marker{b("a", 0, 1, 0), b("a", 1, 1, 1), stop("a", 2, 1, 2), b("a", 3, 2, 0)}, ""},
		{"empty epoch", []Marker{stop("a", 0, 1, 0), stop("a", 1, 2, 0)}, ""},
		{"lost", []Marker{b("a", 0, 1, 0), b("a", 3, 1, 3)}, "2 message(s) from X lost between batch 1 of epoch 1 and batch 4 of epoch 1 (messages 1 to 2)"},
		{"lost stop: epochs merged", []Marker{b("a", 0, 1, 0), b("a", 1, 1, 1), b("a", 3, 2, 0)}, "1 message(s) from X lost between batch 2 of epoch 1 and batch 1 of epoch 2"},
		{"duplicate", []Marker{b("a", 0, 1, 0), b("a", 1, 1, 1), b("a", 1, 1, 1)}, "message 1 from X (batch 2 of epoch 1) came after message 1 (batch 2 of epoch 1): duplicated or out of order"},
		{"reordered", []Marker{b("a", 0, 1, 0), b("a", 2, 1, 2) /* lost, so far */, b("a", 1, 1, 1)}, "duplicated or out of order"},
		{"joined mid-epoch", []Marker{b("a", 9, 2, 3)}, "the first message from X is batch 4 of epoch 2: this consumer joined mid-epoch"},
		{"joined at an epoch's end", []Marker{stop("a", 9, 2, 3)}, "is the end of epoch 2 (3 batches): this consumer joined mid-epoch"},
		{"restart at an epoch boundary", []Marker{b("a", 0, 1, 0), stop("a", 1, 1, 1), b("b", 0, 1, 0)}, ""},
		{"restart mid-epoch", []Marker{b("a", 0, 1, 0), b("a", 1, 1, 1), b("b", 0, 1, 0)}, "the server at X restarted: batch 1 of epoch 1 of the new server follows batch 2 of epoch 1 of the old one"},
		{"inconsistent", []Marker{b("a", 0, 1, 0), b("a", 1, 2, 0)}, "the marker of message 1 from X says batch 1 of epoch 2, but it follows batch 1 of epoch 1"},
	} {
		var s sequence
		var err error
		for i, m := range c.markers {
			err = s.check(m, "X")
			if err != nil && i < len(c.markers)-1 && c.name != "reordered" {
				t.Errorf("%s: marker %d: %v", c.name, i, err)
			}
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// Markers round-trip through the wire, and a malformed one is an error.
func TestMarkerWire(t *testing.T) {
	src := mixedStream(t)
	it := must(src.GetEpochIterator())
	data := must(it.Next())
	m := Marker{Server: "0123abcd", Seq: 12, Epoch: 3, Batch: 4}
	frames := must(EncodeMarked(data, m))
	plain := must(EncodeArrays(data))
	if want := strings.Replace(string(plain[0]), `"descr": "<f4"}`, `"descr": "<f4", "seq": 12, "epoch": 3, "batch": 4, "server": "0123abcd"}`, 1); string(frames[0]) != want {
		t.Errorf("header frame\n%s\nwant\n%s", frames[0], want)
	}
	arrays, got, err := DecodeMessage(frames)
	if err != nil || got == nil || *got != m || len(arrays) != len(data) {
		t.Fatalf("decoded %v %+v %v", len(arrays), got, err)
	}
	stopM := Marker{Server: "0123abcd", Seq: 13, Epoch: 3, Batch: 5, Stop: true}
	if s := string(StopFrame(&stopM)); s != `{"stop": true, "seq": 13, "epoch": 3, "batch": 5, "server": "0123abcd"}` {
		t.Errorf("stop frame %s", s)
	}
	if _, got, err := DecodeMessage([][]byte{StopFrame(&stopM)}); !errors.Is(err, ErrStop) || got == nil || *got != stopM {
		t.Errorf("stop: %+v %v", got, err)
	}
	if _, got, err := DecodeMessage([][]byte{StopFrame(nil)}); !errors.Is(err, ErrStop) || got != nil {
		t.Errorf("Fuel's stop: %+v %v", got, err)
	}
	bad := [][]byte{[]byte(`{"stop": true, "seq": 1}`)}
	if _, _, err := DecodeMessage(bad); err == nil || !strings.Contains(err.Error(), "needs all of seq, epoch, batch and server") {
		t.Errorf("partial marker: %v", err)
	}
	bad = [][]byte{[]byte(`{"stop": true, "seq": -1, "epoch": 1, "batch": 0, "server": "x"}`)}
	if _, _, err := DecodeMessage(bad); err == nil || !strings.Contains(err.Error(), "want seq >= 0") {
		t.Errorf("negative seq: %v", err)
	}
}
