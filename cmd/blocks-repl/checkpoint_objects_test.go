package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// objectsScript copies testdata/script_objects/NAME into a new directory as
// exp.star: a run whose dataset, scheme, transformer, step rule and
// extension are script classes holding state that training changes.
func objectsScript(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "script_objects", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// killAtHeldWrite runs blocks-repl args in dir, holds its nth checkpoint
// write (of iteration iter) until the loop waits for it, and SIGKILLs it.
func killAtHeldWrite(t *testing.T, bin, dir string, n, iter int, args ...string) {
	t.Helper()
	c := startChild(t, bin, dir, holdWrite(n), args...)
	c.waitHeldAndWaited(t, iter)
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// TestKillResumeScriptObjects: a run whose dataset, scheme (its own
// generator and epoch counter), transformer (counters and a dict it
// updates per batch, a scale an extension anneals), step rule and
// extension (a history list, a reference to the transformer) are script
// classes is SIGKILLed twice mid-epoch and resumed each time; the end is
// bit-identical to the uninterrupted run: parameters, log (which records
// the objects' attributes every batch) and the objects' saved attributes.
func TestKillResumeScriptObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	refDir := objectsScript(t, "exp.star")
	runToEnd(t, bin, refDir, "run", "exp.star")
	ref, _, done := finishedCheckpoint(t, refDir)
	if !done || ref.Log.Status.IterationsDone != 25 {
		t.Fatalf("the reference run did not finish its 25 iterations")
	}
	if len(ref.ScriptObjects) == 0 {
		t.Fatalf("the reference checkpoint holds no %s", checkpoint.MemberScriptObjects)
	}

	dir := objectsScript(t, "exp.star")
	// The 12th write (iteration 12) is held: run.tar stays at iteration
	// 11, three batches into the second epoch.
	killAtHeldWrite(t, bin, dir, 12, 12, "run", "exp.star")
	mid, _, _ := finishedCheckpoint(t, dir)
	if mid.Log.Status.IterationsDone != 11 || !mid.Log.Status.EpochStarted {
		t.Fatalf("after the first kill the checkpoint is at iteration %d (mid-epoch %v), want 11, mid-epoch",
			mid.Log.Status.IterationsDone, mid.Log.Status.EpochStarted)
	}
	if !strings.Contains(string(mid.ScriptObjects), `"class":"Annealer"`) {
		t.Fatalf("the mid-epoch checkpoint does not hold the extension's attributes: %s", mid.ScriptObjects)
	}
	killAgainAndFinish(t, bin, dir, ref)
}

// TestKillResumeScriptDataState: a run whose dataset is a script class
// keeping its own state between requests (Fuel's open, next_epoch and
// get_data: the position in the epoch, the epoch's number and a noise
// generator, epochs that end when get_data returns StopIteration) is
// SIGKILLed twice mid-epoch and resumed each time; the end is
// bit-identical to the uninterrupted run: parameters, log (which records
// the stream's state after every batch) and the script objects.
func TestKillResumeScriptDataState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	refDir := objectsScript(t, "data_state.star")
	runToEnd(t, bin, refDir, "run", "exp.star")
	ref, _, done := finishedCheckpoint(t, refDir)
	// Epochs of 60, 55 and 50 examples in batches of 7: 9 + 8 + 8.
	if !done || ref.Log.Status.IterationsDone != 25 {
		t.Fatalf("the reference run did not finish its 25 iterations")
	}

	dir := objectsScript(t, "data_state.star")
	// The 12th write (iteration 12) is held: run.tar stays at iteration
	// 11, two batches into the second epoch.
	killAtHeldWrite(t, bin, dir, 12, 12, "run", "exp.star")
	mid, _, _ := finishedCheckpoint(t, dir)
	if mid.Log.Status.IterationsDone != 11 || !mid.Log.Status.EpochStarted {
		t.Fatalf("after the first kill the checkpoint is at iteration %d (mid-epoch %v), want 11, mid-epoch",
			mid.Log.Status.IterationsDone, mid.Log.Status.EpochStarted)
	}
	if mid.Iteration.EpochIterator == nil || len(mid.Iteration.EpochIterator.Data) == 0 {
		t.Fatalf("the mid-epoch checkpoint does not hold the dataset's state")
	}
	killAgainAndFinish(t, bin, dir, ref)
}

// killAgainAndFinish kills the resumed run of dir while its 8th write
// (iteration 19) is held, so that run.tar stays at iteration 18, the
// first batch of the third epoch; resumes it to the end and checks the
// end is ref's: parameters, log and the script objects' attributes.
func killAgainAndFinish(t *testing.T, bin, dir string, ref *checkpoint.Checkpoint) {
	t.Helper()
	killAtHeldWrite(t, bin, dir, 8, 19, "resume", "run.tar")
	mid, _, _ := finishedCheckpoint(t, dir)
	if mid.Log.Status.IterationsDone != 18 || !mid.Log.Status.EpochStarted {
		t.Fatalf("after the second kill the checkpoint is at iteration %d (mid-epoch %v), want 18, mid-epoch",
			mid.Log.Status.IterationsDone, mid.Log.Status.EpochStarted)
	}
	runToEnd(t, bin, dir, "resume", "run.tar")
	got, _, _ := finishedCheckpoint(t, dir)
	compareRuns(t, ref, got)
	if !bytes.Equal(ref.ScriptObjects, got.ScriptObjects) {
		t.Errorf("the script objects' attributes differ from the uninterrupted run:\n%s\nwant\n%s", got.ScriptObjects, ref.ScriptObjects)
	}
}

// TestKillResumeScriptDataStateEpochs: the run of
// TestKillResumeScriptDataState checkpointing after each epoch only is
// SIGKILLed while its second epoch's checkpoint is written: the one left
// is between the first and second epochs, and the resumed run's second
// epoch starts from next_epoch of the state the first left (the stream's
// state is saved between epochs too), bit-identical to the uninterrupted
// run.
func TestKillResumeScriptDataStateEpochs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, _ := killBinary(t)
	set := []string{"run", "--set", "every_batch=False", "exp.star"}
	refDir := objectsScript(t, "data_state.star")
	runToEnd(t, bin, refDir, set...)
	ref, _, done := finishedCheckpoint(t, refDir)
	if !done || ref.Log.Status.IterationsDone != 25 {
		t.Fatalf("the reference run did not finish its 25 iterations")
	}
	dir := objectsScript(t, "data_state.star")
	// Write 2 is the second epoch's (iteration 17), held until the third
	// epoch's save waits for it: run.tar stays after the first epoch.
	killAtHeldWrite(t, bin, dir, 2, 17, set...)
	mid, _, _ := finishedCheckpoint(t, dir)
	if mid.Log.Status.IterationsDone != 9 || mid.Log.Status.EpochStarted || len(mid.Iteration.StreamStates) != 1 {
		t.Fatalf("after the kill the checkpoint is at iteration %d (mid-epoch %v, %d stream states), want 9, between epochs, 1",
			mid.Log.Status.IterationsDone, mid.Log.Status.EpochStarted, len(mid.Iteration.StreamStates))
	}
	runToEnd(t, bin, dir, "resume", "run.tar")
	got, _, _ := finishedCheckpoint(t, dir)
	compareRuns(t, ref, got)
}
