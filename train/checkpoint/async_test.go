package checkpoint

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// afterBatch runs f after every batch.
type afterBatch struct {
	*extensions.SimpleExtension
}

func newAfterBatch(t *testing.T, f func(iteration int) error) *afterBatch {
	se, err := extensions.NewSimpleExtension("Probe", func(c extensions.Call) error {
		return f(c.MainLoop.Log.Status.IterationsDone)
	}, extensions.Triggers{"after_batch": true})
	if err != nil {
		t.Fatal(err)
	}
	return &afterBatch{se}
}

// A save during training returns before its file is written: training
// goes on while the background writer streams a copy of the state as it
// was at the save (the checkpoint of iteration 2, written while
// iteration 3 trains, holds iteration 2's parameters). Run returns only
// once every write is on disk.
func TestBackgroundSaveSnapshotsTheState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.tar")
	ck, err := NewCheckpointExtension(path, 3, nil, Bindings{}, extensions.Triggers{"every_n_batches": 2})
	if err != nil {
		t.Fatal(err)
	}
	ck.deferMin = 1 // W (12 bytes) is copied in the background too
	release := make(chan struct{})
	writes := 0
	ck.beforeWrite = func() {
		writes++
		if writes == 1 {
			<-release
		}
	}
	var at2 *nd.Array
	var w *nd.Array
	probe := newAfterBatch(t, func(it int) error {
		switch it {
		case 2:
			at2 = w.Copy()
		case 3:
			pw := ck.inflight
			if pw == nil {
				t.Error("no write in flight after the save of iteration 2")
				break
			}
			select {
			case <-pw.done:
				t.Error("the write of iteration 2 ended before iteration 3 trained")
			default:
			}
			if _, err := os.Stat(path); err == nil {
				t.Error("the checkpoint of iteration 2 is on disk before its writer was released")
			}
			if reflect.DeepEqual(w.F32(), at2.F32()) {
				t.Error("iteration 3 did not change the parameters")
			}
			close(release)
		}
		return nil
	})
	loop, b := newLoop(t, finishAfter(t, 4), ck, probe)
	w = b.parameters()[0].Value()
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	if ck.inflight != nil {
		t.Error("Run returned with a write in flight")
	}
	c2, err := Read(KeptName(path, 2))
	if err != nil {
		t.Fatal(err)
	}
	if c2.Manifest.IterationsDone != 2 || !reflect.DeepEqual(c2.Parameters[0].Array.F32(), at2.F32()) {
		t.Errorf("the checkpoint of iteration 2 holds iteration %d and W %v, want W %v", c2.Manifest.IterationsDone, c2.Parameters[0].Array.F32(), at2.F32())
	}
	c4, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if c4.Manifest.IterationsDone != 4 || !reflect.DeepEqual(c4.Parameters[0].Array.F32(), w.F32()) {
		t.Errorf("the last checkpoint is at iteration %d, or not the final parameters", c4.Manifest.IterationsDone)
	}
	// The writer was held until iteration 3 had trained: the update of
	// iteration 3 copied what it writes first (W, Adam's buffers and
	// time), in the write guards, on the loop; the writer copied the
	// rest (the hyperparameters).
	if s := ck.Snapshots(); len(s) < 1 || s[0].Iteration != 2 || s[0].LoopBytes < 12 || s[0].LoopBytes >= s[0].Bytes {
		t.Errorf("copies %+v: want the loop to have copied W (12 bytes) and the writer the hyperparameters for iteration 2", s)
	}
}

// The copy of a background save's state is not made in the save: it
// runs while the next step runs. When the forward pass of the step after
// the save of iteration 2 begins, the copy has not been made; released
// there, the writer makes it during that forward pass, so the step's
// update finds it made (the loop copies nothing) and the file holds
// iteration 2's parameters.
func TestBackgroundCopyOverlapsTheNextStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.tar")
	ck, err := NewCheckpointExtension(path, 2, nil, Bindings{}, extensions.Triggers{"every_n_batches": 2})
	if err != nil {
		t.Fatal(err)
	}
	ck.deferMin = 1
	release := make(chan struct{})
	writes := 0
	ck.beforeWrite = func() { // in the writer, before it copies
		writes++
		if writes == 1 {
			<-release
		}
	}
	var loop *mainloop.MainLoop
	var w, at2 *nd.Array
	checked := false
	forward := func() {
		if loop == nil || loop.Log.Status.IterationsDone != 2 || checked {
			return
		}
		checked = true // the forward pass of iteration 3
		if slices.Equal(ck.snap[0].F32(), at2.F32()) {
			t.Error("the state was copied in the save, before the next step")
		}
		pw := ck.inflight
		if pw == nil {
			t.Fatal("no write in flight during the step after the save")
		}
		close(release)
		for _, a := range pw.copy.arrays {
			<-a.copied // the writer's copy, during this forward pass
		}
		if !slices.Equal(ck.snap[0].F32(), at2.F32()) {
			t.Error("the writer's copy does not hold iteration 2's W")
		}
	}
	probe := newAfterBatch(t, func(it int) error {
		if it == 2 {
			at2 = w.Copy()
		}
		return nil
	})
	var b Bindings
	loop, b = newLoopForward(t, forward, finishAfter(t, 3), ck, probe)
	w = b.parameters()[0].Value()
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	if !checked {
		t.Fatal("the forward pass of iteration 3 did not run")
	}
	if s := ck.Snapshots(); len(s) != 1 || s[0].Iteration != 2 || s[0].LoopBytes != 0 || s[0].Bytes == 0 {
		t.Errorf("copies %+v: want the save of iteration 2, copied by the writer only", s)
	}
	c2, err := Read(KeptName(path, 2))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c2.Parameters[0].Array.F32(), at2.F32()) || slices.Equal(at2.F32(), w.F32()) {
		t.Errorf("the checkpoint of iteration 2 holds W %v, want %v (final %v)", c2.Parameters[0].Array.F32(), at2.F32(), w.F32())
	}
}

// An extension that changes a parameter in place after a background save
// (through the variable's BeforeWrite, as set_value does) does not change
// what the save writes.
func TestInPlaceWriteAfterBackgroundSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.tar")
	ck, err := NewCheckpointExtension(path, 2, nil, Bindings{}, extensions.Triggers{"every_n_batches": 2})
	if err != nil {
		t.Fatal(err)
	}
	ck.deferMin = 1
	release := make(chan struct{})
	writes := 0
	ck.beforeWrite = func() {
		writes++
		if writes == 1 {
			<-release
		}
	}
	var b Bindings
	var at2 *nd.Array
	probe := newAfterBatch(t, func(it int) error {
		if it == 2 {
			p := b.parameters()[0]
			at2 = p.Value().Copy()
			p.BeforeWrite()
			for i := range p.Value().Size() {
				p.Value().SetFlat(i, 7)
			}
			close(release)
		}
		return nil
	})
	var loop *mainloop.MainLoop
	loop, b = newLoop(t, finishAfter(t, 3), ck, probe)
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	c2, err := Read(KeptName(path, 2))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c2.Parameters[0].Array.F32(), at2.F32()) {
		t.Errorf("the checkpoint of iteration 2 holds W %v, want %v", c2.Parameters[0].Array.F32(), at2.F32())
	}
}

// A background write that fails is reported by the next callback (the
// training stops with its error) and its log row's saved_to is None.
func TestBackgroundSaveFailureIsReported(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.tar")
	ck, err := NewCheckpointExtension(path, 1, nil, Bindings{}, extensions.Triggers{"every_n_batches": 2})
	if err != nil {
		t.Fatal(err)
	}
	ck.beforeWrite = func() { _ = os.Chmod(dir, 0o500) }
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	if os.Geteuid() == 0 {
		// root writes anyway: fail the write another way.
		ck.beforeWrite = func() {
			ck.lastIteration, ck.KeepLast = 0, 2
			_ = os.Mkdir(KeptName(path, 0), 0o700)
			_ = os.WriteFile(path, []byte("x"), 0o644)
		}
	}
	loop, _ := newLoop(t, finishAfter(t, 6), ck)
	err = loop.Run()
	if err == nil {
		t.Fatal("a failed background write was not reported")
	}
	if !strings.Contains(err.Error(), "checkpoint") {
		t.Errorf("error %q does not name the checkpoint", err)
	}
	if r, _ := loop.Log.Row(2); r[RecordSavedTo] != nil {
		t.Errorf("saved_to of the failed save: %v, want None", r[RecordSavedTo])
	}
}

// A SIGKILL while a checkpoint is written in the background (the loop
// has trained on and its next save waits for the write) leaves the
// previous checkpoint whole, and a temporary file the next run removes.
func TestKillDuringBackgroundWrite(t *testing.T) {
	if os.Getenv("CHECKPOINT_KILL_CHILD") != "" {
		killChild(t, os.Getenv("CHECKPOINT_KILL_CHILD"))
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "run.tar")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringBackgroundWrite$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CHECKPOINT_KILL_CHILD="+path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The kill comes once the third write (iteration 3) is half way,
	// where it hangs, and the loop has trained on to its next save,
	// which waits for it.
	sc := bufio.NewScanner(stderr)
	writes, waiting := 0, false
	for sc.Scan() {
		if strings.Contains(sc.Text(), "checkpoint: write in progress") {
			writes++
		}
		if strings.Contains(sc.Text(), "checkpoint: waiting for the write in progress (iteration 3)") {
			waiting = true
		}
		if writes == 3 && waiting {
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err = cmd.Wait()
	if writes != 3 || !waiting {
		t.Fatalf("the child ended (%v) before its third write was half way with the loop waiting for it", err)
	}
	// The third wait is the save of iteration 4, for the write of 3.
	c, err := Read(path)
	if err != nil {
		t.Fatalf("after a kill during a background write: %v", err)
	}
	if c.Manifest.IterationsDone != 2 {
		t.Errorf("the checkpoint is at iteration %d, want 2 (the write of 3 was killed)", c.Manifest.IterationsDone)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".run.tar.tmp-*")); len(tmps) != 1 {
		t.Errorf("temporary files %v, want the killed write's", tmps)
	}
}

func killChild(t *testing.T, path string) {
	ck, err := NewCheckpointExtension(path, 1, nil, Bindings{}, extensions.Triggers{"every_n_batches": 1})
	if err != nil {
		t.Fatal(err)
	}
	ck.PauseHalfway = func() {} // the hook's messages
	n := 0
	ck.beforeWrite = func() { n++ }
	ck.writeSecondHalf = func(f *os.File, b []byte) (int, error) {
		if n >= 3 {
			select {} // the third write hangs half way, until killed
		}
		return f.Write(b)
	}
	var _ mainloop.BackgroundWriter = ck
	loop, _ := newLoop(t, finishAfter(t, 10), ck)
	_ = loop.Run()
	t.Fatal("the child was not killed")
}

// A Checkpoint that saves only after training (the default) writes
// synchronously and never allocates the background copy; a save by
// hand outside Run (Blocks' ext.do) is synchronous too.
func TestAfterTrainingOnlyCopiesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.tar")
	ck, err := NewCheckpointExtension(path, 1, nil, Bindings{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	loop, _ := newLoop(t, finishAfter(t, 2), ck)
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	if ck.prepared != nil || ck.snap != nil {
		t.Error("an after_training Checkpoint allocated the background copy")
	}
	if err := ck.DoNow(mainloop.AfterBatch, nil); err != nil {
		t.Fatal(err)
	}
	if ck.inflight != nil {
		t.Error("a save by hand outside Run was left in flight")
	}
	if c, err := Read(path); err != nil || c.Iteration.Callback != "after_batch" {
		t.Errorf("the save by hand is not on disk: %v", err)
	}
}
