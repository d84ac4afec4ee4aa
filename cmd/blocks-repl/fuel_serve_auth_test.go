//go:build cgo

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel/server"
	zmq "github.com/pebbe/zmq4"
)

// startServe runs blocks-repl fuel serve with args until the test ends,
// once it says it is serving.
func startServe(t *testing.T, args ...string) *lockedBuffer {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"fuel", "serve"}, args...)...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(out.String(), "fuel server: serving") {
			return out
		}
	}
	t.Fatalf("fuel serve did not start:\n%s", out.String())
	return nil
}

// consumer is a script that reads two epochs from the server on port
// and prints the number of batches of each.
func consumer(t *testing.T, port int, extra string) string {
	return writeScript(t, "consumer.star", `load("fuel.streams", "ServerDataStream")
s = ServerDataStream(("x", "y"), False, port = `+strconv.Itoa(port)+`, timeout = 20`+extra+`)
counts = []
for epoch in range(2):
    n = 0
    for batch in s.get_epoch_iterator():
        n += 1
    counts.append(n)
print("epochs", counts)
`)
}

// TestFuelServeSequenceDetectsSecondConsumer (issue 24 item 11): a second
// PULL socket on the server took batches and the training client saw
// shorter epochs without an error. With --sequence the consumer's run
// fails and says why.
//
// The server's PUSH socket deals each message to one of the connected
// consumers, but only to one whose queue has room: under load the second
// consumer may be behind (its queue full) for the whole of the training
// run, which then really gets complete epochs. So the test does not take
// the interleaving for granted: the second consumer records the sequence
// numbers it gets, which tells exactly which messages went to the training
// consumer (all the others, in order), and every run is checked against
// that: a run whose first eight messages were a whole aligned pair of
// epochs must succeed, any other must fail with a diagnostic that agrees.
// Runs are repeated (each with a fresh server) until one was disturbed.
func TestFuelServeSequenceDetectsSecondConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	script := writeScript(t, "serve.star", serveScript)
	const attempts = 8
	for i := 1; i <= attempts; i++ {
		if sequenceAttempt(t, script) {
			return
		}
		t.Logf("attempt %d: the second consumer took none of the training consumer's messages (it was behind); again", i)
	}
	t.Fatalf("in %d runs the second consumer never took a message while the training consumer read", attempts)
}

// secondConsumer is a bare PULL socket on the server that records the
// sequence numbers of the messages it gets; missing lists, in order, the
// ones below the highest it got that it did not get.
type secondConsumer struct {
	mu      sync.Mutex
	max     int64 // the highest sequence number received; -1 before any
	missing []int64
	err     error
}

func (c *secondConsumer) add(seq int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if seq <= c.max {
		c.err = fmt.Errorf("the second consumer got message %d after %d", seq, c.max)
	}
	for m := c.max + 1; m < seq; m++ {
		c.missing = append(c.missing, m)
	}
	c.max = seq
}

// await waits until ok holds (ok sees max and missing); it fails the test
// after a minute.
func (c *secondConsumer) await(t *testing.T, what string, ok func(max int64, missing []int64) bool) []int64 {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		c.mu.Lock()
		max, missing, err := c.max, append([]int64(nil), c.missing...), c.err
		c.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if ok(max, missing) {
			return missing
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second consumer did not get %s within a minute (it got up to message %d; missing %v)", what, max, missing)
		}
	}
}

var lostRE = regexp.MustCompile(`\(messages (\d+) to (\d+)\)`)

// sequenceAttempt runs a fresh server with the second consumer and a
// training consumer beside it, checks the training consumer's result
// against what the second one got, and says whether the second consumer
// took any of the training consumer's first two epochs.
func sequenceAttempt(t *testing.T, script string) bool {
	t.Helper()
	port := freePort(t)
	startServe(t, script, "--port", strconv.Itoa(port), "--hwm", "2", "--sequence")

	// The second consumer, owned by its goroutine.
	second := &secondConsumer{max: -1}
	quit, connected, stopped := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		defer close(stopped)
		zctx, err := zmq.NewContext()
		if err != nil {
			connected <- err
			return
		}
		defer zctx.Term()
		sock, err := zctx.NewSocket(zmq.PULL)
		if err != nil {
			connected <- err
			return
		}
		defer sock.Close()
		sock.SetLinger(0)
		sock.SetRcvtimeo(100 * time.Millisecond)
		if err := sock.Connect("tcp://127.0.0.1:" + strconv.Itoa(port)); err != nil {
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
			frames, err := sock.RecvMessageBytes(0)
			if err != nil {
				continue
			}
			_, m, err := server.DecodeMessage(frames)
			if m == nil || (err != nil && !errors.Is(err, server.ErrStop)) {
				err = fmt.Errorf("the second consumer got a message without a marker (%v)", err)
				if first {
					connected <- err
					return
				}
				second.mu.Lock()
				second.err = err
				second.mu.Unlock()
				continue
			}
			if first && m.Seq != 0 {
				connected <- fmt.Errorf("the second consumer's first message is %d, not 0", m.Seq)
				return
			}
			second.add(m.Seq)
			if first {
				first = false
				connected <- nil
			}
		}
	}()
	if err := <-connected; err != nil {
		t.Fatal(err)
	}
	defer func() { close(quit); <-stopped }()

	code, stdout, stderr := runBinary(t, "", "run", consumer(t, port, ""))
	noGoTrace(t, stderr)
	// The training consumer got the messages the second one did not, in
	// order, and read the first eight of them at most (two epochs of three
	// batches and a stop frame).
	if code == 0 && strings.Contains(stdout, "epochs [3, 3]") {
		got := second.await(t, "past the training consumer's eighth message", func(_ int64, missing []int64) bool { return len(missing) >= 8 })[:8]
		for i, seq := range got {
			if seq != got[0]+int64(i) || got[0]%4 != 0 {
				t.Fatalf("the training consumer got complete epochs with exit 0, although its first messages were %v (the second consumer took the others)", got)
			}
		}
		return false
	}
	if code != 1 || !strings.Contains(stderr, "another consumer") || !strings.Contains(stderr, "consumer.star:") || strings.Contains(stdout, "epochs") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if m := lostRE.FindStringSubmatch(stderr); m != nil {
		// The lost messages went to the second consumer, and the ones
		// either side of them to the training consumer.
		from, _ := strconv.ParseInt(m[1], 10, 64)
		to, _ := strconv.ParseInt(m[2], 10, 64)
		missing := second.await(t, fmt.Sprintf("message %d", to+1), func(max int64, _ []int64) bool { return max > to+1 })
		in := map[int64]bool{}
		for _, seq := range missing {
			in[seq] = true
		}
		for seq := from; seq <= to; seq++ {
			if in[seq] {
				t.Errorf("the training consumer says message %d was lost, but the second consumer did not get it either", seq)
			}
		}
		if !in[from-1] || !in[to+1] {
			t.Errorf("the training consumer says messages %d to %d were lost, but the second consumer got message %d or %d (missing %v)", from, to, from-1, to+1, missing)
		}
		t.Logf("the second consumer took messages %d to %d, between two of the training consumer's", from, to)
	} else {
		// The training consumer joined mid-epoch: its first message, the
		// first the second consumer did not get, is not an epoch's first.
		first := second.await(t, "past the training consumer's first message", func(_ int64, missing []int64) bool { return len(missing) >= 1 })[0]
		if !strings.Contains(stderr, "joined mid-epoch") || first%4 == 0 {
			t.Errorf("the training consumer's first message was %d:\n%s", first, stderr)
		}
		t.Logf("the training consumer joined mid-epoch, at message %d", first)
	}
	return true
}

// TestFuelServeCurve (issue 24 item 11): in the CURVE mode only a client
// whose key the server lists reads; another key, no key, or a bare
// ZeroMQ socket gets nothing, and our client says why.
func TestFuelServeCurve(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir := t.TempDir()
	clients := filepath.Join(dir, "clients")
	os.Mkdir(clients, 0o755)
	for _, c := range []struct{ name, dir string }{{"server", dir}, {"client", clients}, {"stranger", dir}} {
		code, out, errs := runBinary(t, "", "fuel", "keygen", c.name, "-d", c.dir)
		if code != 0 || !strings.Contains(out, "public key: ") {
			t.Fatalf("keygen %s: %d %s %s", c.name, code, out, errs)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "server.key_secret")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("server.key_secret: %v %v", fi, err)
	}
	script := writeScript(t, "serve.star", serveScript)
	port := freePort(t)
	out := startServe(t, script, "--port", strconv.Itoa(port), "--curve-secret", filepath.Join(dir, "server.key_secret"), "--curve-clients", clients)
	if !strings.Contains(out.String(), "CURVE: 1 client key(s), with sequence markers") {
		t.Errorf("server's first line:\n%s", out.String())
	}
	keys := func(secret string) string {
		return `, curve_server_key = "` + filepath.Join(dir, "server.key") + `", curve_secret = "` + secret + `"`
	}
	code, stdout, stderr := runBinary(t, "", "run", consumer(t, port, keys(filepath.Join(clients, "client.key_secret"))+", sequence = True"))
	if code != 0 || !strings.Contains(stdout, "epochs [3, 3]") {
		t.Fatalf("listed client: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, c := range []struct{ name, extra, want string }{
		{"stranger", keys(filepath.Join(dir, "stranger.key_secret")), "refused this client"},
		{"no keys", "", "CURVE mode and this client gave no keys"}, // at once or after the timeout: see TestCurveAdmitsOnlyListedClients
	} {
		code, stdout, stderr := runBinary(t, "", "run", consumer(t, port, c.extra))
		noGoTrace(t, stderr)
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Contains(stdout, "epochs") {
			t.Errorf("%s: exit %d\n%s\n%s", c.name, code, stdout, stderr)
		}
	}
	// A bare ZeroMQ PULL socket (what Fuel's client is) gets nothing.
	zctx, err := zmq.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer zctx.Term()
	sock, err := zctx.NewSocket(zmq.PULL)
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	sock.SetLinger(0)
	sock.SetRcvtimeo(2 * time.Second)
	sock.Connect("tcp://127.0.0.1:" + strconv.Itoa(port))
	if msg, err := sock.RecvMessageBytes(0); err == nil {
		t.Errorf("a bare PULL socket received %d frames from the CURVE server", len(msg))
	}
	// Bad key files are clear errors.
	code, _, stderr = runBinary(t, "", "fuel", "serve", script, "--curve-secret", filepath.Join(dir, "server.key"), "--curve-clients", clients)
	if code != 1 || !strings.Contains(stderr, "holds no secret-key") {
		t.Errorf("public file as the secret: %d %s", code, stderr)
	}
	code, _, stderr = runBinary(t, "", "fuel", "serve", script, "--curve-secret", filepath.Join(dir, "server.key_secret"))
	if code != 2 || !strings.Contains(stderr, "--curve-secret and --curve-clients go together") {
		t.Errorf("half the flags: %d %s", code, stderr)
	}
}
