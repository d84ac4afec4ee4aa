package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDistributedEpochInterrupt: Blocks' first Ctrl+C (SIGINT: finish the
// epoch) reaching process 1 alone makes both processes finish at the end
// of the same epoch, cleanly.
func TestDistributedEpochInterrupt(t *testing.T) {
	needMPI(t)
	script, _ := filepath.Abs("../../scripts/demo.star")
	cmd := startIn(t, t.TempDir(), "run", "--np", "2", "--microbatches", "2", "--set", "epochs=1000", script)
	cmd.Env = append(cmd.Env, "BLOCKS_MPI_TIMEOUT=60")
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), "AFTER ANOTHER EPOCH") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("training did not get through an epoch:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(mpiRank(t, cmd.Process.Pid, 1), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the job failed: %v\n%s", err, out.String())
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the job still runs a minute after the SIGINT:\n%s", out.String())
	}
	s := out.String()
	if !strings.Contains(s, "epoch_interrupt_received: True") || strings.Contains(s, "batch_interrupt_received: True") ||
		strings.Count(s, "TRAINING HAS BEEN FINISHED") != 1 || strings.Contains(s, "did not complete in time") {
		t.Fatalf("the processes did not finish the epoch together:\n%s", s)
	}
	m := regexp.MustCompile(`TRAINING HAS BEEN FINISHED(?s:.*)iterations_done: (\d+)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no iterations_done after training:\n%s", s)
	}
	if n, _ := strconv.Atoi(m[1]); n%100 != 0 {
		t.Fatalf("stopped after %d batches, not at the end of an epoch (100 batches)", n)
	}
}
