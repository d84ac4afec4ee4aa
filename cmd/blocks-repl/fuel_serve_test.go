package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel/server"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

const serveScript = `
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("numpy", "arange")
ds = IndexableDataset({"x": arange(20).reshape(10, 2), "y": arange(10)})
stream = DataStream(ds, iteration_scheme = SequentialScheme(10, 4))
`

// serveAndRead runs blocks-repl fuel serve with args, reads two epochs
// with a ServerDataStream, stops the server with SIGINT and returns its
// stderr.
func serveAndRead(t *testing.T, port int, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"fuel", "serve"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	c, err := server.NewServerDataStream([]string{"x", "y"}, false, server.ClientOptions{Port: port, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for epoch := range 2 {
		it, err := c.GetEpochIterator()
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int
		for {
			d, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("epoch %d: %v\nserver: %s", epoch, err, stderr.String())
			}
			sizes = append(sizes, d[0].Shape[0])
			if d[0].DType().String() != "int64" || d[1].Flat(0) != d[0].Flat(0)/2 {
				t.Errorf("batch %v %v", d[0], d[1])
			}
		}
		if len(sizes) != 3 || sizes[2] != 2 {
			t.Errorf("epoch %d: batch sizes %v, want [4 4 2]", epoch, sizes)
		}
	}
	cmd.Process.Signal(os.Interrupt)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("fuel serve after Ctrl-C: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("fuel serve did not stop on Ctrl-C")
	}
	return stderr.String()
}

func TestFuelServeGlobalStream(t *testing.T) {
	script := writeScript(t, "serve.star", serveScript)
	port := freePort(t)
	out := serveAndRead(t, port, script, "--port", strconv.Itoa(port), "--hwm", "2")
	if want := "fuel server: serving x, y on tcp://127.0.0.1:" + strconv.Itoa(port) + " (hwm 2)"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

func TestFuelServeStartServerInScript(t *testing.T) {
	// The script's own start_server call serves; --port wins over its
	// argument.
	script := writeScript(t, "serve.star", serveScript+`
load("fuel.server", "start_server")
start_server(stream, port = 1, hwm = 3)
print("not reached")
`)
	port := freePort(t)
	out := serveAndRead(t, port, script, "--port", strconv.Itoa(port))
	if !strings.Contains(out, "(hwm 3)") || strings.Contains(out, "not reached") {
		t.Errorf("output:\n%s", out)
	}
}

func TestFuelServeErrors(t *testing.T) {
	script := writeScript(t, "nostream.star", strings.Replace(serveScript, "stream =", "s =", 1))
	code, _, stderr := runBinary(t, "", "fuel", "serve", script)
	if code != 1 || !strings.Contains(stderr, "defines no global named stream (its streams: s; assign the one to serve to stream)") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	code, _, stderr = runBinary(t, "", "fuel", "serve", "--set", "lr=1", script)
	if code != 1 || !strings.Contains(stderr, "--set lr: the script never reads this setting") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	code, _, stderr = runBinary(t, "", "fuel", "serve", "--hwm", "0", script)
	if code != 2 || !strings.Contains(stderr, "--hwm positive") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	bad := writeScript(t, "bad.star", "load(\"fuel.server\", \"start_server\")\nstart_server(3)\n")
	code, _, stderr = runBinary(t, "", "fuel", "serve", bad)
	if code != 1 || !strings.Contains(stderr, "bad.star:2") || !strings.Contains(stderr, "start_server: for parameter data_stream: got int, want") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}
