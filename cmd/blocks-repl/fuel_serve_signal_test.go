package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel/server"
)

// TestFuelServeCtrlCWhileConsumerKeepsUp: Ctrl-C stops fuel serve while a
// consumer is still reading as fast as the server produces (issue 24 item
// 13: the stop signal was looked at only while a send waited, so a server
// whose consumer kept up never stopped). The server's stream is slowed by
// a Starlark mapping so the consumer always waits for it and no send ever
// blocks; the consumer keeps reading until the server has exited.
func TestFuelServeCtrlCWhileConsumerKeepsUp(t *testing.T) {
	script := writeScript(t, "slow.star", serveScript+`
load("fuel.transformers", "Mapping")
def slow(data):
    n = 0
    for i in range(20000):
        n += i
    return data
stream = Mapping(stream, slow)
`)
	port := freePort(t)
	cmd := exec.Command(binary(t), "fuel", "serve", script, "--port", strconv.Itoa(port), "--hwm", "2")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	c, err := server.NewServerDataStream([]string{"x", "y"}, false, server.ClientOptions{Port: port, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var received atomic.Int64
	consumerDone := make(chan struct{})
	stopConsumer := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(consumerDone)
		for {
			select {
			case <-stopConsumer:
				return
			default:
			}
			if _, err := c.Receive(); err != nil && !errors.Is(err, io.EOF) {
				return // the server is gone: the receive timed out
			}
			if received.Add(1) == 10 {
				close(started)
			}
		}
	}()
	select {
	case <-started:
	case err := <-exited:
		t.Fatalf("fuel serve exited early: %v\n%s", err, out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the consumer received %d messages in 60 s\n%s", received.Load(), out.String())
	}
	cmd.Process.Signal(os.Interrupt)
	before := received.Load()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("fuel serve after Ctrl-C: %v\n%s", err, out.String())
		}
	case <-consumerDone:
		t.Fatalf("the consumer stopped before the server\n%s", out.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Signal(syscall.SIGKILL)
		t.Fatalf("fuel serve did not stop on Ctrl-C in 60 s while its consumer kept reading (%d messages after the signal)\n%s", received.Load()-before, out.String())
	}
	// The consumer ends at its next receive's timeout (the server is gone).
	close(stopConsumer)
	<-consumerDone
}
