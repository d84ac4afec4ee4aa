package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/checkpoint"
)

var (
	refOnce sync.Once
	refCk   *checkpoint.Checkpoint
)

// sharedReference is the uninterrupted run of the kill script, made once
// for the fault tests.
func sharedReference(t *testing.T, bin, adamLoad string) *checkpoint.Checkpoint {
	t.Helper()
	refOnce.Do(func() { refCk, _ = reference(t, bin, adamLoad) })
	if refCk == nil {
		t.Fatal("no reference run")
	}
	return refCk
}

// TestSIGTERMCheckpointsAndResumes is the scheduler's SIGTERM: sent to
// blocks-repl run in the middle of an epoch, it finishes the current
// batch, runs the after_training extensions (the Checkpoint writes the
// state), and exits 0, as Blocks does; blocks-repl resume then ends
// bit-identical to an uninterrupted run.
func TestSIGTERMCheckpointsAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, adamLoad := killBinary(t)
	ref := sharedReference(t, bin, adamLoad)

	dir := t.TempDir()
	writeKillScript(t, dir, adamLoad)
	// The writer holds its 15th write (after batch 15, in the background)
	// until a signal, and the loop trains batch 16 and waits for that
	// write at its next save: SIGTERM then lands there whatever the load
	// (it once landed after batch 17 when the writer only slept 50 ms),
	// and the run stops after batch 16.
	c := startChild(t, bin, dir, holdWrite(15), "run", "exp.star")
	c.waitHeldAndWaited(t, 15)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) || err != nil {
			t.Fatalf("after SIGTERM blocks-repl exited with %v, want 0\n%s", err, c.stderr)
		}
	case <-time.After(5 * time.Minute):
		_ = c.cmd.Process.Kill()
		t.Fatal("blocks-repl did not exit within 5 minutes of SIGTERM")
	}
	// The main loop's warnings go through the script's print (stdout).
	if out := c.cmd.Stdout.(*bytes.Buffer).String(); !strings.Contains(out, "Received batch interrupt signal") {
		t.Errorf("no batch interrupt message:\n%s", out)
	}
	mid, exists, done := finishedCheckpoint(t, dir)
	if !exists || done {
		t.Fatalf("after SIGTERM: checkpoint exists %v, counts as finished %v", exists, done)
	}
	st := mid.Log.Status
	stop := st.IterationsDone
	if stop != 16 || !st.EpochStarted || mid.Iteration.Callback != "after_training" {
		t.Fatalf("the checkpoint after SIGTERM is at iteration %d (mid-epoch %v, %s), want 16, mid-epoch, after_training",
			stop, st.EpochStarted, mid.Iteration.Callback)
	}
	runToEnd(t, bin, dir, "resume", "run.tar")
	got, _, _ := finishedCheckpoint(t, dir)
	compareInterrupted(t, ref, got, stop)
}

// compareInterrupted compares a run stopped by SIGTERM after iteration
// stop, then resumed, with the uninterrupted run ref: the interrupted
// run's row records the interrupt and the end of that run; the rest must
// match.
func compareInterrupted(t *testing.T, ref, got *checkpoint.Checkpoint, stop int) {
	t.Helper()
	for i, r := range got.Log.Rows {
		if r.Iteration == stop {
			for _, k := range []string{"batch_interrupt_received", "training_finished"} {
				if _, ok := r.Records[k]; !ok {
					t.Errorf("row %d lacks %s", stop, k)
				}
				delete(got.Log.Rows[i].Records, k)
			}
			// Saved twice: after the batch and after training.
			for _, rr := range ref.Log.Rows {
				if rr.Iteration == stop {
					got.Log.Rows[i].Records["saved_to"] = rr.Records["saved_to"]
				}
			}
		}
	}
	compareRuns(t, ref, got)
}
