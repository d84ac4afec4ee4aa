//go:build cgo

package server

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// pyEndless is a Fuel server (send_arrays) with one endless epoch of
// 64 KiB float32 batches.
const pyEndless = `
import sys, numpy, zmq
ctx = zmq.Context()
sock = ctx.socket(zmq.PUSH)
sock.set_hwm(2)
port = sock.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
a = numpy.arange(16384, dtype="float32").reshape(128, 128)
h = [{"shape": a.shape, "fortran_order": False, "descr": "<f4"}]
while True:
    sock.send_json(h, zmq.SNDMORE)
    sock.send(a)
`

// TestServerKilledMidEpoch: the client drains what was already queued,
// then fails with a clear error once nothing comes for its timeout; it
// never hangs.
func TestServerKilledMidEpoch(t *testing.T) {
	py := python(t)
	script := writeScript(t, "endless.py", pyEndless)
	var stderr bytes.Buffer
	cmd := exec.Command(py, script)
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no port: %v\n%s", err, stderr.String())
	}
	port := must(strconv.Atoi(strings.TrimSpace(line)))
	const timeout = time.Second
	c := must(NewServerDataStream([]string{"features"}, false, ClientOptions{Port: port, HWM: 2, Timeout: timeout}))
	defer c.Close()
	it := must(c.GetEpochIterator())
	for i := range 3 {
		if _, err := it.Next(); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	start := time.Now()
	var after int
	for {
		_, err = it.Next()
		if err != nil {
			break
		}
		after++
		if after > 10000 {
			t.Fatal("batches keep coming from a killed server")
		}
	}
	took := time.Since(start)
	if !strings.Contains(err.Error(), "no data from tcp://localhost:"+strconv.Itoa(port)+" within 1s") || !strings.Contains(err.Error(), "is the server running") {
		t.Errorf("error %q", err)
	}
	if took > timeout+10*time.Second {
		t.Errorf("the error came after %v, want about the %v timeout", took, timeout)
	}
	t.Logf("after the kill: %d queued batches, then after %v: %v", after, took.Round(time.Millisecond), err)
}

// TestMalformedMessageOverTheWire: a peer that sends garbage gets a
// clear error, not a crash nor a hang.
func TestMalformedMessageOverTheWire(t *testing.T) {
	zctx := must(zmq.NewContext())
	defer zctx.Term()
	push := must(zctx.NewSocket(zmq.PUSH))
	defer push.Close()
	push.SetLinger(0)
	if err := push.Bind("tcp://127.0.0.1:*"); err != nil {
		t.Fatal(err)
	}
	ep := must(push.GetLastEndpoint())
	port := must(strconv.Atoi(ep[strings.LastIndexByte(ep, ':')+1:]))
	c := must(NewServerDataStream([]string{"x"}, false, ClientOptions{Port: port, Timeout: 5 * time.Second}))
	defer c.Close()
	it := must(c.GetEpochIterator())
	for _, m := range []struct {
		frames []string
		want   string
	}{
		{[]string{"garbage"}, "malformed header frame"},
		{[]string{`[{"shape": [4], "fortran_order": false, "descr": "<f4"}]`, "abc"}, "the data frame: 3 bytes for a float32 array of shape (4,) (want 16)"},
		{[]string{`[{"shape": [1], "fortran_order": false, "descr": "<f4"}]`}, "1 headers but 0 data frames"},
	} {
		parts := make([]any, len(m.frames))
		for i, f := range m.frames {
			parts[i] = f
		}
		if _, err := push.SendMessage(parts...); err != nil {
			t.Fatal(err)
		}
		_, err := it.Next()
		if err == nil || !strings.Contains(err.Error(), m.want) || !strings.Contains(err.Error(), "from tcp://localhost:") {
			t.Errorf("message %q: error %v, want %q", m.frames, err, m.want)
		}
	}
	// A good message after bad ones is read.
	push.SendMessage(`[{"shape": [1], "fortran_order": false, "descr": "<f4"}]`, string([]byte{0, 0, 128, 63}))
	d, err := it.Next()
	if err != nil || d[0].F32()[0] != 1 {
		t.Errorf("good message: %v %v", d, err)
	}
}

// countingStream gives endless 1 MiB batches and counts them.
type countingStream struct{ made atomic.Int64 }

func (s *countingStream) Sources() []string               { return []string{"x"} }
func (s *countingStream) AxisLabels() map[string][]string { return nil }
func (s *countingStream) ProducesExamples() bool          { return false }
func (s *countingStream) GetEpochIterator() (fuel.EpochIterator, error) {
	return s, nil
}
func (s *countingStream) Next() ([]*nd.Array, error) {
	s.made.Add(1)
	return []*nd.Array{nd.New(nd.Float32, 256, 1024)}, nil
}

var _ io.Closer = (*ServerDataStream)(nil)

// TestSlowConsumerThrottled: a consumer that stops reading stops the
// server after about HWM messages at each end plus what the kernel's
// socket buffers hold: the server's memory stays bounded.
func TestSlowConsumerThrottled(t *testing.T) {
	src := &countingStream{}
	srv := serve(t, src, Options{HWM: 2})
	c := must(NewServerDataStream([]string{"x"}, false, ClientOptions{Port: srv.Port(), HWM: 2, Timeout: 10 * time.Second}))
	defer c.Close()
	it := must(c.GetEpochIterator())
	if _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	// Wait until the server stops producing (stable for 300 ms).
	var second int64
	for start, last := time.Now(), int64(-1); ; {
		time.Sleep(300 * time.Millisecond)
		second = src.made.Load()
		if second == last {
			break
		}
		last = second
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the server kept producing (%d batches) while the client read 1", second)
		}
	}
	// 1 read + 2 (client HWM) + 2 (server HWM) + 1 being sent, plus the
	// loopback socket buffers (a few MiB: a few 1 MiB batches).
	const bound = 24
	if second > bound {
		t.Errorf("the server made %d batches while the client read 1; want it blocked at <= %d", second, bound)
	}
	for range 5 {
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
	}
	// The server resumes producing: wait for it (not for a fixed time,
	// which a loaded machine outlasts), up to a minute.
	for start := time.Now(); src.made.Load() <= second; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("the server did not resume within a minute after the client read again")
		}
	}
	t.Logf("server blocked after %d batches of 1 MiB with HWM 2 at both ends", second)
}
