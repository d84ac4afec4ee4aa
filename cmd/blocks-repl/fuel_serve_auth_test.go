//go:build cgo

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
func TestFuelServeSequenceDetectsSecondConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	script := writeScript(t, "serve.star", serveScript)
	port := freePort(t)
	startServe(t, script, "--port", strconv.Itoa(port), "--hwm", "2", "--sequence")

	// The second consumer: a bare PULL socket, owned by its goroutine.
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
			if _, err := sock.RecvMessageBytes(0); err == nil && first {
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
	if code != 1 || !strings.Contains(stderr, "another consumer") || !strings.Contains(stderr, "consumer.star:") || strings.Contains(stdout, "epochs") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
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
