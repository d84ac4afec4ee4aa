//go:build cgo

package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pebbe/zmq4"
)

// freePorts returns n TCP ports free on 127.0.0.1 at the time of the call.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// TestKernelWireSignatures talks to the kernel binary over ZeroMQ from Go
// (no Jupyter needed): an execute_request signed with another key is
// logged and dropped, never run nor answered; a correctly signed one is
// answered; shutdown_request on the control channel ends the kernel.
func TestKernelWireSignatures(t *testing.T) {
	dir := t.TempDir()
	p := freePorts(t, 5)
	conn := connectionInfo{Transport: "tcp", IP: "127.0.0.1", ShellPort: p[0], ControlPort: p[1], IOPubPort: p[2], StdinPort: p[3], HBPort: p[4],
		Key: "the-key", SignatureScheme: "hmac-sha256"}
	b, _ := json.Marshal(conn)
	cf := filepath.Join(dir, "conn.json")
	if err := os.WriteFile(cf, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "kernel", cf)
	cmd.Dir = dir
	var errb bytes.Buffer
	var mu sync.Mutex
	cmd.Stderr = &lockedWriter{mu: &mu, b: &errb}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	stderr := func() string {
		mu.Lock()
		defer mu.Unlock()
		return errb.String()
	}

	shell, err := zmq4.NewSocket(zmq4.DEALER)
	if err != nil {
		t.Fatal(err)
	}
	defer shell.Close()
	shell.SetLinger(0)
	shell.SetRcvtimeo(90 * time.Second)
	if err := shell.Connect(conn.endpoint(conn.ShellPort)); err != nil {
		t.Fatal(err)
	}
	send := func(sock *zmq4.Socket, key, msgType string, content any) {
		t.Helper()
		frames, err := encodeMessage(signer{[]byte(key)}, nil, "test", msgType, nil, content, nil)
		if err != nil {
			t.Fatal(err)
		}
		parts := make([]any, len(frames))
		for i, f := range frames {
			parts[i] = f
		}
		if _, err := sock.SendMessage(parts...); err != nil {
			t.Fatal(err)
		}
	}
	request := func(code string) map[string]any {
		return map[string]any{"code": code, "silent": false, "store_history": true, "user_expressions": map[string]any{}, "allow_stdin": false}
	}

	send(shell, "another-key", "execute_request", request("stolen = 1"))
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(stderr(), "wrong HMAC-SHA256 signature") {
		if time.Now().After(deadline) {
			t.Fatalf("the kernel did not log the wrong signature:\n%s", stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	send(shell, "the-key", "execute_request", request("stolen"))
	frames, err := shell.RecvMessageBytes(0)
	if err != nil {
		t.Fatalf("no reply: %v\n%s", err, stderr())
	}
	m, err := decodeMessage(signer{[]byte("the-key")}, frames)
	if err != nil {
		t.Fatalf("the reply: %v", err)
	}
	var c struct{ Status, Evalue string }
	json.Unmarshal(m.Content, &c)
	if m.Header.MsgType != "execute_reply" || c.Status != "error" || !strings.Contains(c.Evalue, "undefined: stolen") {
		t.Fatalf("the first reply: %s %s (want the error of the signed request: the wrong-key one never ran nor was answered)", m.Header.MsgType, m.Content)
	}

	control, err := zmq4.NewSocket(zmq4.DEALER)
	if err != nil {
		t.Fatal(err)
	}
	defer control.Close()
	control.SetLinger(0)
	if err := control.Connect(conn.endpoint(conn.ControlPort)); err != nil {
		t.Fatal(err)
	}
	send(control, "the-key", "shutdown_request", map[string]any{"restart": false})
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the kernel ended with %v\n%s", err, stderr())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("shutdown_request did not end the kernel\n%s", stderr())
	}
	noGoTrace(t, stderr())
}
