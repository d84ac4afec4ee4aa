package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/checkpoint"
)

var (
	killBuildOnce sync.Once
	killBin       string
	killAdamLoad  string
	killBuildErr  error
)

// killBinary builds blocks-repl for the kill tests; adamLoad is the load
// statement of the step rule the kill script uses.
func killBinary(t *testing.T) (bin, adamLoad string) {
	t.Helper()
	killBuildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "blocks-repl-kill")
		if err != nil {
			killBuildErr = err
			return
		}
		killBin = filepath.Join(dir, "blocks-repl")
		args := []string{"build", "-o", killBin}
		killAdamLoad = `load("blocks.algorithms", "Adam")`
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			killBuildErr = errors.New(string(out))
		}
	})
	if killBuildErr != nil {
		t.Fatalf("go build: %v", killBuildErr)
	}
	return killBin, killAdamLoad
}

// killScript trains an MLP with a shuffled scheme and Adam, with every
// random element the project has (dropout on the hidden layers, weight
// noise, random rotations of the input images), logging the cost of every
// batch and its mean over each epoch (a partial aggregate a mid-epoch
// checkpoint must keep), and saving a checkpoint after every batch.
const killScript = `load("tensor", "matrix", "lmatrix")
load("blocks.config", "config")
load("blocks.bricks", "MLP", "Tanh", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("blocks.graph", "ComputationGraph", "apply_dropout", "apply_noise")
load("blocks.filter", "VariableFilter")
load("blocks.roles", "OUTPUT", "WEIGHT")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme")
load("fuel.transformers", "Flatten")
load("fuel.transformers.image", "Random2DRotation")
load("blocks.algorithms", "GradientDescent")
ADAM
load("blocks.extensions.monitoring", "TrainingDataMonitoring")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter")
load("numpy", "random")
load("model.star", "hidden_dims")

cfg = config(epochs = 3, batch_size = 10, examples = 200, learning_rate = 0.01)
rng = random.RandomState(5)
# 4x5 "images", rotated at random (augmentation) then flattened to 20.
feats = rng.normal(size = (cfg.examples, 1, 4, 5)).astype("float32")
targs = rng.randint(0, 4, size = (cfg.examples, 1))
data = IndexableDataset({"features": feats, "targets": targs},
                        axis_labels = {"features": ("batch", "channel", "height", "width"), "targets": ("batch", "index")})
x = matrix("features")
y = lmatrix("targets")
mlp = MLP(activations = [Tanh() for _ in hidden_dims] + [Softmax()], dims = [20] + hidden_dims + [4],
          weights_init = IsotropicGaussian(0.1), biases_init = Constant(0))
mlp.initialize()
cost = CategoricalCrossEntropy().apply(y.flatten(), mlp.apply(x))
cost.name = "cost"
# Every random element: dropout on the hidden outputs, weight noise, and the
# rotations of the stream.
cg = ComputationGraph(cost)
hidden = VariableFilter(roles = [OUTPUT], bricks = [Tanh])(cg.variables)
noisy = apply_noise(apply_dropout(cg, hidden, 0.5, seed = 3), VariableFilter(roles = [WEIGHT])(cg.variables), 0.01, seed = 4)
cost = noisy.outputs[0]
cost.name = "cost"
stream = Flatten(Random2DRotation(
    DataStream(data, iteration_scheme = ShuffledScheme(cfg.examples, batch_size = cfg.batch_size)),
    maximum_rotation = 0.5, rng = random.RandomState(7), which_sources = ("features",)), which_sources = ("features",))
alg = GradientDescent(cost = cost, parameters = cg.parameters,
                      step_rule = Adam(learning_rate = cfg.learning_rate))
loop = MainLoop(algorithm = alg, data_stream = stream, extensions = [
    TrainingDataMonitoring([cost], prefix = "train", after_batch = True),
    TrainingDataMonitoring([cost], prefix = "epoch", after_epoch = True),
    FinishAfter(after_n_epochs = cfg.epochs),
    Checkpoint("run.tar", every_n_batches = 1, keep_last = 2),
])
loop.run()
print("finished", loop.status["iterations_done"])
`

func writeKillScript(t *testing.T, dir, adamLoad string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(strings.Replace(killScript, "ADAM", adamLoad, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.star"), []byte("hidden_dims = [32, 16]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

type child struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	lines  chan string
	done   chan error
}

// startChild runs blocks-repl with args in dir; its stderr lines arrive
// on lines.
func startChild(t *testing.T, bin, dir string, env []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	c := &child{cmd: cmd, stderr: &bytes.Buffer{}, lines: make(chan string, 1024), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			c.stderr.WriteString(sc.Text() + "\n")
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		pr.Close()
		c.done <- cmd.Wait()
	}()
	return c
}

// holdWrite is the environment that makes a child's nth checkpoint write
// wait half way for a signal (BLOCKS_CHECKPOINT_WRITE_HOLD).
func holdWrite(n int) []string {
	return []string{fmt.Sprintf("BLOCKS_CHECKPOINT_WRITE_HOLD=%d", n)}
}

// waitHeld waits until the child's held checkpoint write has started
// (holdWrite), however long the machine takes; a child that ends first
// fails the test.
func (c *child) waitHeld(t *testing.T) {
	t.Helper()
	for {
		select {
		case line := <-c.lines:
			if strings.Contains(line, "checkpoint: write held") {
				return
			}
		case err := <-c.done:
			t.Fatalf("blocks-repl ended (%v) before its held checkpoint write\n%s", err, c.stderr)
		}
	}
}

// waitHeldAndWaited waits until the child's held checkpoint write of
// iteration iter has started (holdWrite) and the main loop, which trained
// on while that write ran in the background, waits for it at its next
// save: the loop is then stopped at a known place, whatever the load. The
// two lines come from two goroutines, in either order.
func (c *child) waitHeldAndWaited(t *testing.T, iter int) {
	t.Helper()
	waitLine := fmt.Sprintf("checkpoint: waiting for the write in progress (iteration %d)", iter)
	held, waited := false, false
	for !held || !waited {
		select {
		case line := <-c.lines:
			held = held || strings.Contains(line, "checkpoint: write held")
			waited = waited || strings.Contains(line, waitLine)
		case err := <-c.done:
			t.Fatalf("blocks-repl ended (%v) before its held write of iteration %d and the loop's wait for it\n%s", err, iter, c.stderr)
		}
	}
}

// runToEnd runs a child to its end and fails the test on an error.
func runToEnd(t *testing.T, bin, dir string, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	c := startChild(t, bin, dir, nil, args...)
	if err := <-c.done; err != nil {
		t.Fatalf("blocks-repl %v: %v\n%s", args, err, c.stderr)
	}
	return time.Since(start)
}

// killAfter runs blocks-repl args and SIGKILLs it after d; it reports
// whether the child was killed (false: it finished first).
func killAfter(t *testing.T, bin, dir string, env []string, d time.Duration, args ...string) bool {
	t.Helper()
	c := startChild(t, bin, dir, env, args...)
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("blocks-repl %v: %v\n%s", args, err, c.stderr)
		}
		return false
	case <-time.After(d):
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	err := <-c.done
	var ee *exec.ExitError
	if err == nil {
		return false // it exited just before the kill
	}
	if !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return true
	}
	t.Fatalf("blocks-repl %v: %v\n%s", args, err, c.stderr)
	return false
}

// finishedCheckpoint reads dir/run.tar; ok reports whether its run had
// finished training.
func finishedCheckpoint(t *testing.T, dir string) (c *checkpoint.Checkpoint, exists, ok bool) {
	t.Helper()
	c, err := checkpoint.Read(filepath.Join(dir, "run.tar"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, false
	}
	if err != nil {
		t.Fatalf("the last checkpoint is unreadable after a kill: %v", err)
	}
	return c, true, finished(c)
}

// compareRuns checks that two final checkpoints hold bit-identical
// parameters, algorithm state, generators and log values (timings and
// the records of resumption aside).
func compareRuns(t *testing.T, want, got *checkpoint.Checkpoint) {
	t.Helper()
	same := func(what string, a, b []checkpoint.Named) {
		if len(a) != len(b) {
			t.Fatalf("%s: %d arrays, want %d", what, len(b), len(a))
		}
		for i := range a {
			if a[i].Name != b[i].Name || !reflect.DeepEqual(a[i].Array, b[i].Array) {
				t.Errorf("%s %s differs from the uninterrupted run", what, a[i].Name)
			}
		}
	}
	same("parameter", want.Parameters, got.Parameters)
	same("algorithm state", want.AlgorithmState, got.AlgorithmState)
	if !reflect.DeepEqual(want.Iteration.StreamRNGs, got.Iteration.StreamRNGs) {
		t.Errorf("the scheme's generator differs from the uninterrupted run")
	}
	ws, gs := want.Log.Status, got.Log.Status
	ws.ResumedFrom, gs.ResumedFrom = "", ""
	if !reflect.DeepEqual(ws, gs) {
		t.Errorf("log status %+v, want %+v", gs, ws)
	}
	rows := func(c *checkpoint.Checkpoint) map[int]map[string]checkpoint.Value {
		m := map[int]map[string]checkpoint.Value{}
		for _, r := range c.Log.Rows {
			rec := map[string]checkpoint.Value{}
			for k, v := range r.Records {
				if k == checkpoint.RecordLoadedFrom || strings.HasPrefix(k, "time_") {
					continue
				}
				rec[k] = v
			}
			if len(rec) > 0 {
				m[r.Iteration] = rec
			}
		}
		return m
	}
	wr, gr := rows(want), rows(got)
	if !reflect.DeepEqual(wr, gr) {
		for it, r := range wr {
			if !reflect.DeepEqual(r, gr[it]) {
				t.Errorf("log row %d: %v, want %v", it, gr[it], r)
				break
			}
		}
		t.Errorf("the log differs from the uninterrupted run (%d rows, want %d)", len(gr), len(wr))
	}
}

// killTrial runs the experiment in a fresh directory, SIGKILLs it kills
// times at random moments (drawn from seed over the reference duration),
// resumes it from its last checkpoint each time, and compares the end
// with the reference. It returns how many resumes started mid-epoch.
func killTrial(t *testing.T, bin, adamLoad string, ref *checkpoint.Checkpoint, refDur time.Duration, seed int64, kills int, env []string) (midEpoch, midWrite int) {
	t.Helper()
	dir := t.TempDir()
	writeKillScript(t, dir, adamLoad)
	r := rand.New(rand.NewSource(seed))
	for k := 0; ; k++ {
		c, exists, done := finishedCheckpoint(t, dir)
		if done {
			break
		}
		args := []string{"run", "exp.star"}
		if exists {
			args = []string{"resume", "run.tar"}
			if c.Log.Status.EpochStarted {
				midEpoch++
			}
		}
		if k >= kills {
			runToEnd(t, bin, dir, args...)
			continue
		}
		d := time.Duration(r.Int63n(int64(refDur)))
		before, _ := filepath.Glob(filepath.Join(dir, ".run.tar.tmp-*"))
		if killAfter(t, bin, dir, env, d, args...) {
			// A temporary file that was not there before: killed in a write.
			after, _ := filepath.Glob(filepath.Join(dir, ".run.tar.tmp-*"))
			if len(after) > 0 && !reflect.DeepEqual(before, after) {
				midWrite++
			}
		}
	}
	got, _, _ := finishedCheckpoint(t, dir)
	compareRuns(t, ref, got)
	return midEpoch, midWrite
}

func reference(t *testing.T, bin, adamLoad string) (*checkpoint.Checkpoint, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	writeKillScript(t, dir, adamLoad)
	d := runToEnd(t, bin, dir, "run", "exp.star")
	c, _, ok := finishedCheckpoint(t, dir)
	if !ok {
		t.Fatal("the reference run did not finish")
	}
	if c.Log.Status.IterationsDone != 60 {
		t.Fatalf("the reference run did %d iterations, want 60", c.Log.Status.IterationsDone)
	}
	return c, d
}

// TestKillResumeBitIdentical is the fast version of the kill test: a
// couple of random kills, and one kill in the middle of a checkpoint
// write (the writer holds its 15th write under BLOCKS_CHECKPOINT_WRITE_HOLD).
func TestKillResumeBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	bin, adamLoad := killBinary(t)
	ref, refDur := reference(t, bin, adamLoad)
	killTrial(t, bin, adamLoad, ref, refDur, 1, 2, nil)

	// A kill during a checkpoint write: the half-written temporary file
	// is left behind, run.tar still holds the previous checkpoint, and
	// the resumed run ends like the reference.
	dir := t.TempDir()
	writeKillScript(t, dir, adamLoad)
	c := startChild(t, bin, dir, holdWrite(15), "run", "exp.star") // mid-epoch (20 batches an epoch)
	// The writes are in the background: the kill comes once the 15th
	// write is held half way and the loop has trained on to its next
	// save, which waits for that write.
	c.waitHeldAndWaited(t, 15)
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	tmps, _ := filepath.Glob(filepath.Join(dir, ".run.tar.tmp-*"))
	if len(tmps) != 1 {
		t.Fatalf("after a kill during a write, want one temporary file, found %v", tmps)
	}
	mid, _, _ := finishedCheckpoint(t, dir)
	if mid.Log.Status.IterationsDone != 14 || !mid.Log.Status.EpochStarted {
		t.Fatalf("the checkpoint after a kill in the 15th write is at iteration %d (mid-epoch %v), want 14, mid-epoch",
			mid.Log.Status.IterationsDone, mid.Log.Status.EpochStarted)
	}
	runToEnd(t, bin, dir, "resume", "run.tar")
	got, _, _ := finishedCheckpoint(t, dir)
	compareRuns(t, ref, got)
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".run.tar.tmp-*")); len(tmps) != 0 {
		t.Errorf("stale temporary files left: %v", tmps)
	}
}

// TestAcceptKillResume runs many kill trials (BLOCKS_ACCEPT=1).
func TestAcceptKillResume(t *testing.T) {
	if os.Getenv("BLOCKS_ACCEPT") != "1" {
		t.Skip("set BLOCKS_ACCEPT=1")
	}
	bin, adamLoad := killBinary(t)
	ref, refDur := reference(t, bin, adamLoad)
	// Half the trials slow every checkpoint write down (2 ms half way),
	// so that many kills land in the middle of a write; a quarter slow
	// them down more (100 ms: the next batches train during each
	// background write, so kills land in writes the loop has left
	// behind).
	trials, mid, midWrite := 20, 0, 0
	for seed := int64(1); seed <= int64(trials); seed++ {
		var env []string
		switch seed % 4 {
		case 0, 2:
			env = []string{"BLOCKS_CHECKPOINT_WRITE_DELAY=2ms"}
		case 1:
			env = []string{"BLOCKS_CHECKPOINT_WRITE_DELAY=100ms"}
		}
		m, w := killTrial(t, bin, adamLoad, ref, refDur, seed, 4, env)
		mid += m
		midWrite += w
	}
	fmt.Printf("kill test: %d trials of 4 SIGKILLs each, %d resumes from a mid-epoch checkpoint, %d kills during a checkpoint write, all bit-identical to the uninterrupted run (%v a run)\n",
		trials, mid, midWrite, refDur)
	if mid == 0 || midWrite == 0 {
		t.Error("no resume started mid-epoch, or no kill landed in a write")
	}
}
