//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiskFullDuringCheckpoint trains on a small tmpfs (mounted by the
// test; skipped where mount is not allowed) and fills it while a
// checkpoint is being written: the run stops with an error naming the
// checkpoint and ENOSPC, run.tar still holds the previous checkpoint,
// and once space is freed blocks-repl resume ends bit-identical to an
// uninterrupted run.
func TestDiskFullDuringCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); TestWriteDiskFullKeepsPrevious in train/checkpoint injects the error instead", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	bin, adamLoad := killBinary(t)
	ref := sharedReference(t, bin, adamLoad)
	writeKillScript(t, dir, adamLoad)

	c := startChild(t, bin, dir, holdWrite(15), "run", "exp.star")
	c.waitHeld(t)
	// Fill the file system while the writer waits half way through,
	// then let it go on (SIGUSR1 only releases it).
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	// Byte by byte to the last one.
	for {
		if _, err := f.Write(chunk[:1]); err != nil {
			break
		}
	}
	f.Close()
	if err := c.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var err2 error
	select {
	case err2 = <-c.done:
	case <-time.After(5 * time.Minute):
		_ = c.cmd.Process.Kill()
		t.Fatal("blocks-repl did not stop on a full disk within 5 minutes")
	}
	var ee *exec.ExitError
	if !errors.As(err2, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("blocks-repl on a full disk: %v, want exit status 1\n%s", err2, c.stderr)
	}
	msg := c.stderr.String()
	if !strings.Contains(msg, "checkpoint: writing run.tar") || !strings.Contains(msg, "no space left on device") {
		t.Errorf("the error does not name the checkpoint and the cause:\n%s", msg)
	}
	for _, l := range strings.Split(msg, "\n") {
		if l != "" && !strings.Contains(l, "write in progress") {
			t.Log(l)
		}
	}
	mid, exists, done := finishedCheckpoint(t, dir)
	if !exists || done {
		t.Fatalf("after the failed write: checkpoint exists %v, finished %v", exists, done)
	}
	if it := mid.Log.Status.IterationsDone; it != 14 && it != 15 {
		t.Errorf("the checkpoint left is at iteration %d, want 14 (or 15 if the filler was late)", it)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".run.tar.tmp-*")); len(tmps) != 0 {
		t.Errorf("temporary files left after the failed write: %v", tmps)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	runToEnd(t, bin, dir, "resume", "run.tar")
	got, _, _ := finishedCheckpoint(t, dir)
	compareRuns(t, ref, got)
}
