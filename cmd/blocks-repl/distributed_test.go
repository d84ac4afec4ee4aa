package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/parallel"
)

// The data-parallel checks of docs/distributed.md: the same bits on 1, 2
// and 4 processes, checkpoints that resume on another number of
// processes, a killed process that stops the job. They need Open MPI
// (make deps installs it) and MNIST from the shared data.

func needMPI(t *testing.T) {
	t.Helper()
	if !parallel.Available {
		t.Skip("built without MPI")
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not installed (make deps installs Open MPI)")
	}
}

// tutorialScript is scripts/mnist_tutorial.star, unchanged but for its
// end: FinishAfter the tunable steps (default 200) and a Checkpoint to
// ck.tar every `every` batches and after training (besides the script's
// own, to its save_to in the working directory).
func tutorialScript(t *testing.T, every int) string {
	t.Helper()
	src, err := os.ReadFile("../../scripts/mnist_tutorial.star")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "FinishAfter(after_n_epochs = 1)",
		fmt.Sprintf(`FinishAfter(after_n_batches = config.get("steps", 200)), Checkpoint("ck.tar", every_n_batches = %d)`, every), 1)
	if !strings.Contains(s, `Checkpoint("ck.tar"`) || !strings.Contains(s, `load("blocks.config", "config")`) ||
		!strings.Contains(s, `load("blocks.extensions.saveload", "Checkpoint")`) {
		t.Fatal("the tutorial script changed: update the test's edits")
	}
	return writeScript(t, "tutorial.star", s)
}

// runIn runs blocks-repl with args in dir, with MNIST on the data path,
// and returns its combined output; a failure fails the test.
func runIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := startIn(t, dir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("blocks-repl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func startIn(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FUEL_DATA_PATH="+mnistData(t), "FUEL_FLOATX=float32")
	return cmd
}

func newDir(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func readCkpt(t *testing.T, path string) *checkpoint.Checkpoint {
	t.Helper()
	c, err := checkpoint.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sameState compares parameters and algorithm state bit for bit (and,
// with logs, the training logs but for their uuid).
func sameState(t *testing.T, what string, a, b *checkpoint.Checkpoint, logs bool) {
	t.Helper()
	if a.Log.Status.IterationsDone != b.Log.Status.IterationsDone {
		t.Fatalf("%s: %d iterations, want %d", what, b.Log.Status.IterationsDone, a.Log.Status.IterationsDone)
	}
	cmp := func(kind string, x, y []checkpoint.Named) {
		if len(x) != len(y) {
			t.Fatalf("%s: %d %s, want %d", what, len(y), kind, len(x))
		}
		for i := range x {
			if x[i].Name != y[i].Name || !bytes.Equal(rawBytesOf(t, x[i]), rawBytesOf(t, y[i])) {
				t.Fatalf("%s: %s %s differs", what, kind, x[i].Name)
			}
		}
	}
	cmp("parameter", a.Parameters, b.Parameters)
	cmp("algorithm state", a.AlgorithmState, b.AlgorithmState)
	// The generators of the stream (shuffled schemes) and of the graph
	// (dropout) are where the uninterrupted one-process run has them.
	for kind, x := range map[string][2][]checkpoint.RNGState{
		"stream generator": {a.Iteration.StreamRNGs, b.Iteration.StreamRNGs},
		"random op":        {a.Iteration.RandomOps, b.Iteration.RandomOps},
	} {
		if len(x[0]) != len(x[1]) {
			t.Fatalf("%s: %d %ss, want %d", what, len(x[1]), kind, len(x[0]))
		}
		for i := range x[0] {
			if x[0][i] != x[1][i] {
				t.Fatalf("%s: %s %d (%s) is elsewhere", what, kind, i, x[0][i].Owner)
			}
		}
	}
	if logs {
		la, lb := a.Log, b.Log
		la.UUID, lb.UUID = "", ""
		ja, _ := json.Marshal(la)
		jb, _ := json.Marshal(lb)
		if !bytes.Equal(ja, jb) {
			t.Fatalf("%s: the logs differ:\n%s\n%s", what, ja, jb)
		}
	}
}

func rawBytesOf(t *testing.T, n checkpoint.Named) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(n.Array.Shape); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "%x", n.Array.Data) // hexadecimal floats: every bit
	return b.Bytes()
}

// TestDistributedTutorial: the tutorial script for 200 steps with 4
// microbatches gives the same bits on 1 (no MPI), 2 and 4 processes;
// then a 2-process job killed with SIGKILL stops within 10 s, and its
// last checkpoint resumed on 1, 2 and 4 processes ends with the same bits
// as the uninterrupted runs.
func TestDistributedTutorial(t *testing.T) {
	needMPI(t)
	script := tutorialScript(t, 20)
	one := newDir(t, "one")
	runIn(t, one, "run", "--microbatches", "4", script)
	ref := readCkpt(t, filepath.Join(one, "ck.tar"))
	if ref.Run.Microbatches != 4 {
		t.Fatalf("the checkpoint records %d microbatches", ref.Run.Microbatches)
	}
	for _, np := range []string{"2", "4"} {
		d := newDir(t, "np"+np)
		out := runIn(t, d, "run", "--np", np, "--microbatches", "4", script)
		if n := strings.Count(out, "AFTER ANOTHER EPOCH") + strings.Count(out, "Training status:"); n == 0 || strings.Count(out, "BEFORE FIRST EPOCH") != 1 {
			t.Errorf("%s processes: process 0 alone should print, once:\n%s", np, out)
		}
		sameState(t, np+" processes", ref, readCkpt(t, filepath.Join(d, "ck.tar")), true)
	}
	// K = 1 is another computation: the test can tell.
	k1 := newDir(t, "k1")
	runIn(t, k1, "run", "--set", "steps=20", script)
	k4 := readCkpt(t, filepath.Join(one, "ck.tar"))
	if c := readCkpt(t, filepath.Join(k1, "ck.tar")); bytes.Equal(rawBytesOf(t, c.Parameters[0]), rawBytesOf(t, k4.Parameters[0])) {
		t.Fatal("1 and 4 microbatches gave the same parameters")
	}

	// Kill process 0 of a 2-process job after its first checkpoint, in
	// its second checkpoint write (after batch 40), which it holds half
	// way (holdWrite) while the job waits for it: the kill lands there
	// whatever the load (a kill sent once ck.tar appeared could come
	// after the job's end).
	killed := newDir(t, "killed")
	cmd := startIn(t, killed, "run", "--np", "2", "--microbatches", "4", script)
	cmd.Env = append(cmd.Env, holdWrite(2)...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(killed, "ck.tar")
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), "checkpoint: write held") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no held checkpoint write after 2 minutes:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	rank0 := mpiRank(t, cmd.Process.Pid, 0)
	if err := syscall.Kill(rank0, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("the job ended well after a process was killed:\n%s", out.String())
		}
		t.Logf("the job stopped %v after process 0 was killed", time.Since(t0).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the job still runs 10 s after process 0 was killed:\n%s", out.String())
	}
	left := readCkpt(t, ck) // intact: it reads and checks
	if it := left.Log.Status.IterationsDone; it != 20 {
		t.Fatalf("the checkpoint left is at iteration %d, want 20 (the write of iteration 40 was killed half way)", it)
	}
	t.Logf("checkpoint left at iteration %d", left.Log.Status.IterationsDone)
	for _, np := range []string{"1", "2", "4"} {
		d := newDir(t, "resume"+np)
		data, err := os.ReadFile(ck)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "ck.tar"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"resume", "ck.tar"}
		if np != "1" {
			args = []string{"resume", "--np", np, "ck.tar"}
		}
		runIn(t, d, args...)
		sameState(t, "resumed on "+np+" processes", ref, readCkpt(t, filepath.Join(d, "ck.tar")), false)
	}
}

// mpiRank finds the process of the given rank among mpirun's children.
func mpiRank(t *testing.T, mpirun, rank int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", mpirun, mpirun))
		for _, f := range strings.Fields(string(kids)) {
			var pid int
			fmt.Sscan(f, &pid)
			env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			for _, kv := range strings.Split(string(env), "\x00") {
				if kv == fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", rank) {
					return pid
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no process of rank %d under mpirun %d", rank, mpirun)
	return 0
}

// TestDistributedAdamEarlyStopping: the Adam early-stopping script
// (shuffled batches, step clipping, a learning-rate schedule, training and
// validation monitoring, TrackTheBest) for 2 epochs with 4 microbatches:
// the same parameters, Adam state and log on 1, 2 and 4 processes.
func TestDistributedAdamEarlyStopping(t *testing.T) {
	needMPI(t)
	src, err := os.ReadFile("../../scripts/mnist_adam_early_stopping.star")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "Checkpoint(save_to") {
		t.Fatal("the script has no Checkpoint(save_to, ...): update the test")
	}
	script := writeScript(t, "adam.star", string(src))
	var ref *checkpoint.Checkpoint
	for _, np := range []string{"1", "2", "4"} {
		d := newDir(t, "np"+np)
		args := []string{"run", "--microbatches", "4", "--set", "max_epochs=2", "--set", "save_to=ck.tar", script}
		if np != "1" {
			args = append([]string{"run", "--np", np}, args[1:]...)
		}
		out := runIn(t, d, args...)
		if !strings.Contains(out, "stopped after 2 epochs") || strings.Count(out, "epoch 2: valid error") != 1 {
			t.Fatalf("%s processes: output\n%s", np, out)
		}
		c := readCkpt(t, filepath.Join(d, "ck.tar"))
		if ref == nil {
			ref = c
			continue
		}
		sameState(t, np+" processes", ref, c, true)
	}
}

// TestDistributedLSTM: a recurrent model (scripts/distributed_lstm_lm.star,
// a scan over the sequence) gives the same parameters on 1 and 2
// processes with 4 microbatches.
func TestDistributedLSTM(t *testing.T) {
	needMPI(t)
	src, err := os.ReadFile("../../scripts/distributed_lstm_lm.star")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "extensions = [FinishAfter(", `extensions = [Checkpoint("ck.tar"), FinishAfter(`, 1)
	s = strings.Replace(s, "\nmain_loop = MainLoop(", "\nload(\"blocks.extensions.saveload\", \"Checkpoint\")\nmain_loop = MainLoop(", 1)
	if !strings.Contains(s, "Checkpoint(") {
		t.Fatal("the script changed: update the test's edit")
	}
	script := writeScript(t, "lstm.star", s)
	set := []string{"--set", "steps=3", "--set", "batch_size=8", "--set", "length=10", "--set", "dim=32", "--set", "embed=16", script}
	ck := func(name string, args ...string) *checkpoint.Checkpoint {
		d := newDir(t, name)
		runIn(t, d, append(args, set...)...)
		return readCkpt(t, filepath.Join(d, "ck.tar"))
	}
	one := ck("one", "run", "--microbatches", "4")
	sameState(t, "2 processes", one, ck("two", "run", "--np", "2", "--microbatches", "4"), true)
	plain := ck("plain", "run")
	if bytes.Equal(rawBytesOf(t, one.Parameters[0]), rawBytesOf(t, plain.Parameters[0])) &&
		bytes.Equal(rawBytesOf(t, one.Parameters[2]), rawBytesOf(t, plain.Parameters[2])) {
		t.Fatal("4 microbatches and 1 gave the same parameters: the test cannot tell")
	}
}

// TestDistributedMismatch: processes that run the script with different
// settings stop at the start with an error that says so.
func TestDistributedMismatch(t *testing.T) {
	needMPI(t)
	mpirun, _ := exec.LookPath("mpirun")
	script, _ := filepath.Abs("../../scripts/demo.star")
	args := []string{"--oversubscribe"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	for _, lr := range []string{"0.5", "0.25"} {
		if lr == "0.25" {
			args = append(args, ":")
		}
		args = append(args, "-np", "1", binary(t), "run", "--microbatches", "2", "--set", "epochs=1", "--set", "learning_rate="+lr, script)
	}
	cmd := exec.Command(mpirun, args...)
	cmd.Dir = t.TempDir()
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the job ran:\n%s", out)
	}
	if !strings.Contains(string(out), "has other initial parameters and algorithm state") || !strings.Contains(string(out), "same script with the same overrides") {
		t.Fatalf("no clear error:\n%s", out)
	}
	if d := time.Since(t0); d > time.Minute {
		t.Fatalf("the job took %v to stop", d)
	}
}

// TestDistributedTimeout: a process that stops answering (SIGSTOP) makes
// the others' exchange time out (BLOCKS_MPI_TIMEOUT=2) and the job stop
// with an error that says so.
func TestDistributedTimeout(t *testing.T) {
	needMPI(t)
	script, _ := filepath.Abs("../../scripts/demo.star")
	dir := t.TempDir()
	cmd := startIn(t, dir, "run", "--np", "2", "--set", "epochs=1000", script)
	// The timeout bounds every collective, the first ones too: under a
	// loaded machine the two processes reach the first exchange seconds
	// apart, so it leaves them 15 s (a 2 s timeout failed at load 27).
	cmd.Env = append(cmd.Env, "BLOCKS_MPI_TIMEOUT=15")
	var out lockedBuffer // read while the job writes it
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rank1 := mpiRank(t, cmd.Process.Pid, 1)
	// Once process 0 prints, freeze process 1.
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), "BEFORE FIRST EPOCH") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("training did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(rank1, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("the job ended well:\n%s", out.String())
		}
		t.Logf("the job stopped %v after process 1 froze:\n%s", time.Since(t0).Round(time.Millisecond), out.String())
	case <-time.After(90 * time.Second):
		syscall.Kill(rank1, syscall.SIGKILL)
		cmd.Process.Kill()
		t.Fatalf("the job still runs 90 s after process 1 froze (timeout 15 s):\n%s", out.String())
	}
	if !strings.Contains(out.String(), "did not complete in time") {
		t.Fatalf("no timeout error:\n%s", out.String())
	}
}

// TestDistributedInterrupt: a SIGTERM that reaches one process stops every
// process after the same batch: process 0 runs its after_training
// extensions and the job ends well within seconds, nobody left waiting in
// an exchange.
func TestDistributedInterrupt(t *testing.T) {
	needMPI(t)
	script, _ := filepath.Abs("../../scripts/demo.star")
	cmd := startIn(t, t.TempDir(), "run", "--np", "2", "--microbatches", "2", "--set", "epochs=1000", script)
	cmd.Env = append(cmd.Env, "BLOCKS_MPI_TIMEOUT=60")
	var out lockedBuffer // read while the job writes it
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
	// SIGTERM to process 1 alone (a signal that reaches one node):
	// without agreement process 0 would wait for it in the next exchange.
	if err := syscall.Kill(mpiRank(t, cmd.Process.Pid, 1), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the job failed: %v\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the job still runs 20 s after the SIGTERM:\n%s", out.String())
	}
	s := out.String()
	if !strings.Contains(s, "batch_interrupt_received: True") || strings.Count(s, "TRAINING HAS BEEN FINISHED") != 1 || strings.Contains(s, "did not complete in time") {
		t.Fatalf("the processes did not stop together:\n%s", s)
	}
}
