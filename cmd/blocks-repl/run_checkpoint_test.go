package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunCheckpointOption: blocks-repl run --checkpoint adds a Checkpoint
// to a script that has none. SIGTERM in the middle of the run leaves a
// checkpoint (exit status 0), and blocks-repl resume of it ends
// bit-identical to an uninterrupted run with the same options: with the
// default triggers (every epoch and after training; the write at the end
// of epoch 1 held in the background, SIGTERM when the save at the end of
// epoch 2 waits for it) and with --checkpoint-every-n-batches 1
// --checkpoint-every-n-epochs 0 (the write after batch 15 held, SIGTERM
// when the save after batch 16 waits: mid-epoch). Everything is written in
// the test's directory.
func TestRunCheckpointOption(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, adamLoad := killBinary(t)
	for _, c := range []struct {
		name  string
		flags []string
		hold  int // the write held in the background
		at    int // its iteration
		stop  int // the next save, which waits for it: SIGTERM arrives there
		mid   bool
	}{
		{"every epoch", nil, 1, 20, 40, false},
		{"every batch", []string{"--checkpoint-every-n-batches", "1", "--checkpoint-every-n-epochs", "0"}, 15, 15, 16, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"run", "--checkpoint", "run.tar"}, c.flags...), "exp.star")
			refDir, dir := t.TempDir(), t.TempDir()
			for _, d := range []string{refDir, dir} {
				writeNoCheckpointScript(t, d, adamLoad)
			}
			runToEnd(t, bin, refDir, args...)
			ref, exists, done := finishedCheckpoint(t, refDir)
			if !exists || !done {
				t.Fatalf("run %v: checkpoint exists %v, finished %v", args, exists, done)
			}
			if n := ref.Log.Status.IterationsDone; n != 60 {
				t.Fatalf("the uninterrupted run ends at iteration %d, want 60", n)
			}

			ch := startChild(t, bin, dir, holdWrite(c.hold), args...)
			ch.waitHeldAndWaited(t, c.at)
			if err := ch.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ch.done:
				if err != nil {
					t.Fatalf("after SIGTERM blocks-repl exited with %v, want 0\n%s", err, ch.stderr)
				}
			case <-time.After(5 * time.Minute):
				_ = ch.cmd.Process.Kill()
				t.Fatal("blocks-repl did not exit within 5 minutes of SIGTERM")
			}
			mid, exists, done := finishedCheckpoint(t, dir)
			if !exists || done {
				t.Fatalf("after SIGTERM: checkpoint exists %v, counts as finished %v", exists, done)
			}
			st := mid.Log.Status
			if st.IterationsDone != c.stop || st.EpochStarted != c.mid || mid.Iteration.Callback != "after_training" {
				t.Fatalf("the checkpoint after SIGTERM is at iteration %d (mid-epoch %v, %s), want %d (mid-epoch %v), after_training",
					st.IterationsDone, st.EpochStarted, mid.Iteration.Callback, c.stop, c.mid)
			}
			runToEnd(t, bin, dir, "resume", "run.tar")
			got, _, done := finishedCheckpoint(t, dir)
			if !done {
				t.Fatal("the resumed run did not finish")
			}
			compareInterrupted(t, ref, got, c.stop)
			// Nothing but the script, its module and the checkpoint.
			for _, d := range []string{refDir, dir} {
				names, _ := filepath.Glob(filepath.Join(d, "*"))
				for _, n := range names {
					if b := filepath.Base(n); b != "exp.star" && b != "model.star" && b != "run.tar" {
						t.Errorf("%s: unexpected file %s", d, b)
					}
				}
			}
		})
	}
}

// TestRunCheckpointOptionErrors: the --checkpoint options' usage errors,
// and a --checkpoint naming the file the script's own Checkpoint writes.
func TestRunCheckpointOptionErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, adamLoad := killBinary(t)
	dir := t.TempDir()
	writeKillScript(t, dir, adamLoad)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--checkpoint-every-n-batches", "5", "exp.star"}, 2, "--checkpoint-every-n-batches needs --checkpoint FILE"},
		{[]string{"run", "--checkpoint", "a.tar", "--checkpoint-every-n-epochs", "-1", "exp.star"}, 2, "take a count from 0"},
		{[]string{"run", "--checkpoint", "run.tar", "exp.star"}, 1, "--checkpoint run.tar: the script's own Checkpoint writes run.tar already"},
	} {
		ch := startChild(t, bin, dir, nil, c.args...)
		err := <-ch.done
		code := 0
		if err != nil {
			var ee interface{ ExitCode() int }
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(ch.stderr.String(), c.want) {
			t.Errorf("%v: exit status %d, want %d, and %q in:\n%s", c.args, code, c.code, c.want, ch.stderr)
		}
	}
}

// writeNoCheckpointScript writes the kill tests' script without its
// Checkpoint extension.
func writeNoCheckpointScript(t *testing.T, dir, adamLoad string) {
	t.Helper()
	writeKillScript(t, dir, adamLoad)
	p := filepath.Join(dir, "exp.star")
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const line = "    Checkpoint(\"run.tar\", every_n_batches = 1, keep_last = 2),\n"
	if !strings.Contains(string(src), line) {
		t.Fatal("the kill script's Checkpoint line changed")
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(src), line, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestShippedScriptSIGTERMResumes: a shipped training script, run as it
// is, leaves a checkpoint to resume when SIGTERM stops it: scripts/demo.star
// saves to its save_to (here run.tar in the test's directory) every epoch
// and after training. SIGTERM while the write at the end of epoch 1 is held
// and the save at the end of epoch 2 waits for it (so training stops there),
// then blocks-repl resume run.tar, ends bit-identical to an uninterrupted
// run.
func TestShippedScriptSIGTERMResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	demo, err := filepath.Abs("../../scripts/demo.star")
	if err != nil {
		t.Fatal(err)
	}
	// 3 epochs of 10 batches; the script's own Checkpoint, to run.tar.
	args := []string{"run", "--set", "epochs=3", "--set", "batch_size=500", "--set", "save_to=run.tar", demo}
	refDir, dir := t.TempDir(), t.TempDir()
	runToEnd(t, bin, refDir, args...)
	ref, exists, done := finishedCheckpoint(t, refDir)
	if !exists || !done {
		t.Fatalf("run %v: checkpoint exists %v, finished %v", args, exists, done)
	}
	if n := ref.Log.Status.IterationsDone; n != 30 {
		t.Fatalf("the uninterrupted run ends at iteration %d, want 30", n)
	}

	ch := startChild(t, bin, dir, holdWrite(1), args...)
	ch.waitHeldAndWaited(t, 10)
	if err := ch.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ch.done:
		if err != nil {
			t.Fatalf("after SIGTERM blocks-repl exited with %v, want 0\n%s", err, ch.stderr)
		}
	case <-time.After(5 * time.Minute):
		_ = ch.cmd.Process.Kill()
		t.Fatal("blocks-repl did not exit within 5 minutes of SIGTERM")
	}
	mid, exists, done := finishedCheckpoint(t, dir)
	if !exists || done {
		t.Fatalf("after SIGTERM: checkpoint exists %v, counts as finished %v", exists, done)
	}
	if st := mid.Log.Status; st.IterationsDone != 20 || st.EpochStarted || mid.Iteration.Callback != "after_training" {
		t.Fatalf("the checkpoint after SIGTERM is at iteration %d (mid-epoch %v, %s), want 20 (at the epoch's end), after_training",
			st.IterationsDone, st.EpochStarted, mid.Iteration.Callback)
	}
	runToEnd(t, bin, dir, "resume", "run.tar")
	got, _, done := finishedCheckpoint(t, dir)
	if !done {
		t.Fatal("the resumed run did not finish")
	}
	compareInterrupted(t, ref, got, 20)
	for _, d := range []string{refDir, dir} {
		names, _ := filepath.Glob(filepath.Join(d, "*"))
		if len(names) != 1 || filepath.Base(names[0]) != "run.tar" {
			t.Errorf("%s holds %v, want only run.tar", d, names)
		}
	}
}
