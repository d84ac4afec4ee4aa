package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// sbScript trains a tiny model for one epoch and checkpoints to PATH.
const sbScript = `load("tensor", "matrix", "lmatrix")
load("blocks.config", "config")
load("blocks.bricks", "MLP", "Tanh", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("blocks.graph", "ComputationGraph")
load("fuel.datasets", "IndexableDataset", "TextFile", "H5PYDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.extensions.plot", "Plot")
load("fuel.converters.base", "fill_hdf5_file")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter")
load("numpy", "random", "zeros")
cfg = config(epochs = 1, path = "run.tar", keep_last = 1)
#ATTACK
rng = random.RandomState(2)
data = IndexableDataset({"features": rng.normal(size = (30, 4)).astype("float32"),
                         "targets": rng.randint(0, 2, size = (30, 1))})
x = matrix("features")
y = lmatrix("targets")
mlp = MLP(activations = [Tanh(), Softmax()], dims = [4, 5, 2],
          weights_init = IsotropicGaussian(0.1), biases_init = Constant(0))
mlp.initialize()
cost = CategoricalCrossEntropy().apply(y.flatten(), mlp.apply(x))
alg = GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters,
                      step_rule = Scale(learning_rate = 0.1))
loop = MainLoop(algorithm = alg, data_stream = DataStream(data, iteration_scheme = ShuffledScheme(30, batch_size = 7)),
                extensions = [FinishAfter(after_n_epochs = cfg.epochs), Checkpoint(cfg.path, every_n_batches = 3, keep_last = cfg.keep_last)])
loop.run()
print("done", loop.status["iterations_done"])
`

// runIn runs the binary in dir with extra environment and returns its
// status, stdout and stderr.
func runBinIn(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "FUEL_FLOATX=float32"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// sbCheckpoint trains sbScript in a new directory and returns the
// directory and the checkpoint's bytes.
func sbCheckpoint(t *testing.T) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(sbScript), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runBinIn(t, dir, nil, "run", "--set", "epochs=1", "exp.star")
	if code != 0 || !strings.Contains(out, "done 5") {
		t.Fatalf("run: %d %s %s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.tar"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, b
}

// forge puts attack in place of the #ATTACK line of the checkpoint's
// stored script (the manifest and checksums recomputed, as anyone can),
// and writes the result to path.
func forge(t *testing.T, good []byte, attack, path string) {
	t.Helper()
	src := strings.Replace(sbScript, "#ATTACK", attack, 1)
	if err := os.WriteFile(path, resealMember(t, good, "scripts/000_exp.star", []byte(src)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// TestConfinedRunRoutes: a resumed checkpoint's script wrote
// $BLOCKS_SQLITEDB, plot images and HDF5 files anywhere, read any file
// (TextFile of /proc/self/environ), replaced a user's file with a tar and
// deleted kept checkpoints it had not written; replay, documented to
// write nothing, wrote plots and logs. Each route is refused now (or, in
// replay, sent to a directory removed afterwards).
func TestConfinedRunRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	_, good := sbCheckpoint(t)
	outside := t.TempDir()
	for _, c := range []struct {
		name, attack, want string
		env                []string
		mustNotExist       string
	}{
		{"sqlite", "", "outside the run directory",
			[]string{"BLOCKS_SQLITEDB=" + filepath.Join(outside, "log.sqlite")}, filepath.Join(outside, "log.sqlite")},
		{"plot", `Plot("doc", channels = ["cost"], path = "` + filepath.Join(outside, "p.png") + `", after_epoch = True)`, "outside the run directory", nil, ""},
		{"fill_hdf5_file", `fill_hdf5_file("` + filepath.Join(outside, "x.hdf5") + `", [("train", "features", zeros((2, 2)))])`, "outside the run directory", nil, filepath.Join(outside, "x.hdf5")},
		{"checkpoint-elsewhere", `Checkpoint("` + filepath.Join(outside, "c.tar") + `")`, "outside the run directory", nil, filepath.Join(outside, "c.tar")},
		{"textfile", `TextFile(["/proc/self/environ"], {"<UNK>": 0})`, "reading /proc/self/environ: outside the directories", nil, ""},
		{"h5py", `H5PYDataset("/etc/passwd", which_sets = ("train",))`, "reading /etc/passwd: outside the directories", nil, ""},
		{"pytables", `load("fuel.datasets", "PytablesDataset"); PytablesDataset("/etc/passwd", ("features",))`, "reading /etc/passwd: outside the directories", nil, ""},
		{"find_in_data_path", `load("fuel.utils", "find_in_data_path"); find_in_data_path("../../../../../../../../etc/passwd")`, "outside the directories", []string{"FUEL_DATA_PATH=" + outside}, ""},
		{"load_parameters", `load("blocks.serialization", "load_parameters"); load_parameters("/etc/passwd")`, "reading /etc/passwd: outside the directories", nil, ""},
		{"convert", `load("fuel.converters.mnist", "convert_mnist"); convert_mnist("/etc", ".")`, "reading /etc: outside the directories", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ck := filepath.Join(dir, "run.tar")
			line := "exp.star:18"
			if c.attack == "" { // the sqlite log: MainLoop's own argument
				src := strings.Replace(sbScript, "extensions = [FinishAfter", `log_backend = "sqlite", extensions = [FinishAfter`, 1)
				os.WriteFile(ck, resealMember(t, good, "scripts/000_exp.star", []byte(src)), 0o644)
				line = "exp.star:30"
			} else {
				forge(t, good, c.attack, ck)
			}
			code, _, errs := runBinIn(t, dir, c.env, "resume", "--set", "epochs=2", "run.tar")
			noGoTrace(t, errs)
			if code != 1 || !strings.Contains(errs, c.want) || !strings.Contains(errs, line) {
				t.Errorf("status %d, stderr:\n%s", code, errs)
			}
			if c.mustNotExist != "" && exists(c.mustNotExist) {
				t.Errorf("%s was written", c.mustNotExist)
			}
			ents, _ := os.ReadDir(outside)
			if len(ents) > 0 {
				t.Errorf("the script wrote %s outside its directory", ents[0].Name())
			}
		})
	}
}

// TestCheckpointReplacesOnlyItsOwn: Checkpoint("notes.txt") replaced a
// user's file with a tar, and keep_last=1 deleted results/model_iter100.tar
// and model_iter200.tar it had not written.
func TestCheckpointReplacesOnlyItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "exp.star"), []byte(sbScript), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("my notes\n"), 0o644)
	code, _, errs := runBinIn(t, dir, nil, "run", "--set", `path="notes.txt"`, "exp.star")
	noGoTrace(t, errs)
	if code != 1 || !strings.Contains(errs, "notes.txt exists and is not a checkpoint") {
		t.Errorf("status %d, stderr:\n%s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "my notes\n" {
		t.Errorf("notes.txt now holds %q", b)
	}

	os.Mkdir(filepath.Join(dir, "results"), 0o755)
	for _, n := range []string{"model_iter100.tar", "model_iter200.tar"} {
		os.WriteFile(filepath.Join(dir, "results", n), []byte("mine"), 0o644)
	}
	for _, keep := range []string{"1", "2"} {
		code, _, errs = runBinIn(t, dir, nil, "run", "--set", `path="results/model.tar"`, "--set", "keep_last="+keep, "exp.star")
		if code != 0 {
			t.Fatalf("keep_last=%s: status %d, stderr:\n%s", keep, code, errs)
		}
		for _, n := range []string{"model_iter100.tar", "model_iter200.tar"} {
			if b, _ := os.ReadFile(filepath.Join(dir, "results", n)); string(b) != "mine" {
				t.Errorf("keep_last=%s: %s was deleted or replaced", keep, n)
			}
		}
	}
	// keep_last=2 kept one older checkpoint of its own, recorded in the
	// manifest (and pruned it again: the first run's kept file is gone).
	c, err := checkpoint.Read(filepath.Join(dir, "results", "model.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Manifest.Kept) != 1 || !exists(filepath.Join(dir, "results", c.Manifest.Kept[0])) {
		t.Errorf("manifest kept %v", c.Manifest.Kept)
	}
}

// TestReplayWritesNothing: replay wrote the script's plots and SQLite
// log; now they go to a directory it removes.
func TestReplayWritesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir := t.TempDir()
	src := strings.Replace(sbScript, "Checkpoint(cfg.path, every_n_batches = 3, keep_last = cfg.keep_last)",
		`Checkpoint(cfg.path, every_n_batches = 3, keep_last = cfg.keep_last), Plot("doc", channels = ["cost"], path = "p.png", after_epoch = True)`, 1)
	src = strings.Replace(src, "extensions = [FinishAfter", `log_backend = "sqlite", extensions = [FinishAfter`, 1)
	os.WriteFile(filepath.Join(dir, "exp.star"), []byte(src), 0o644)
	db := filepath.Join(dir, "log.sqlite")
	env := []string{"BLOCKS_SQLITEDB=" + db}
	if code, _, errs := runBinIn(t, dir, env, "run", "exp.star"); code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	// Plot images are as readable as other outputs (they were 0600).
	if fi, err := os.Stat(filepath.Join(dir, "p.png")); err != nil || fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("plot image: %v %v, want readable by others as the umask allows", fi, err)
	}
	os.Remove(filepath.Join(dir, "p.png"))
	os.Remove(db)
	code, out, errs := runBinIn(t, dir, env, "replay", "run.tar")
	if code != 0 || !strings.Contains(out, "bit-identical") {
		t.Fatalf("replay: %d %s %s", code, out, errs)
	}
	for _, p := range []string{filepath.Join(dir, "p.png"), db} {
		if exists(p) {
			t.Errorf("replay wrote %s", p)
		}
	}
}

// TestOneRunPerCheckpointPath: two runs on one checkpoint path deleted
// each other's temporary files and one died on "rename ... no such
// file". The second now fails at once, naming the first.
func TestOneRunPerCheckpointPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "exp.star"), []byte(sbScript), 0o644)
	first := exec.Command(binary(t), "run", "--set", "epochs=1000", "exp.star")
	first.Dir = dir
	// The first run holds its first checkpoint write (holdWrite) until
	// it is killed: it holds the lock for as long as the test needs,
	// whatever the load (it once had to outlast the second run's start).
	first.Env = append(append(os.Environ(), "FUEL_FLOATX=float32"), holdWrite(1)...)
	var firstErr lockedBuffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		first.Process.Signal(syscall.SIGKILL)
		first.Wait()
	}()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(firstErr.String(), "checkpoint: write held"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first run did not reach its first checkpoint write in 2 minutes:\n%s", firstErr.String())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".run.tar.lock")); len(b) == 0 {
		t.Fatal("the first run, in its first checkpoint write, holds no lock")
	}
	start := time.Now()
	code, _, errs := runBinIn(t, dir, nil, "run", "exp.star")
	noGoTrace(t, errs)
	if code != 1 || !strings.Contains(errs, "run.tar is in use by another run (pid ") || !strings.Contains(errs, "exp.star:31") {
		t.Errorf("status %d, stderr:\n%s", code, errs)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the second run took %v to fail", d)
	}
	if first.ProcessState != nil {
		t.Errorf("the first run ended: %v", first.ProcessState)
	}
}

// TestResumeWritesBesideItsCheckpoint (issue 20, items 6 and 7):
// resuming runs/kill.tar from the project root failed at the first write
// ("outside the run directory"); resuming a copy overwrote the original;
// a checkpoint path in a missing directory failed after the first epoch
// naming a temporary file.
func TestResumeWritesBesideItsCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir, good := sbCheckpoint(t)
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "runs"), 0o755)
	ck := filepath.Join(root, "runs", "kill.tar")
	os.WriteFile(ck, good, 0o644)
	code, out, errs := runBinIn(t, root, nil, "resume", "--set", "epochs=2", "runs/kill.tar")
	if code != 0 || !strings.Contains(out, "done 10") || !strings.Contains(errs, "runs/kill.tar") {
		t.Fatalf("resume from the project root: %d %s %s", code, out, errs)
	}
	if c, err := checkpoint.Read(ck); err != nil || c.Manifest.IterationsDone != 10 {
		t.Errorf("runs/kill.tar not updated: %v", err)
	}
	if exists(filepath.Join(root, "run.tar")) {
		t.Error("the resumed run wrote run.tar in the working directory")
	}
	// A copy resumed is the copy written; the original stays.
	cp := filepath.Join(root, "copy.tar")
	os.WriteFile(cp, good, 0o644)
	if code, _, errs := runBinIn(t, root, nil, "resume", "--set", "epochs=2", "copy.tar"); code != 0 {
		t.Fatalf("resume of a copy: %d %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "run.tar")); !bytes.Equal(b, good) {
		t.Error("resuming a copy changed the original")
	}
	if c, err := checkpoint.Read(cp); err != nil || c.Manifest.IterationsDone != 10 {
		t.Errorf("the copy was not updated: %v", err)
	}
	// A missing directory is named before training.
	code, out, errs = runBinIn(t, dir, nil, "run", "--set", `path="nowhere/x.tar"`, "exp.star")
	if code != 1 || !strings.Contains(errs, "checkpoint nowhere/x.tar: the directory nowhere does not exist") || strings.Contains(out, "done") ||
		strings.Contains(errs, ".tmp-") || !strings.Contains(errs, "exp.star:31") {
		t.Errorf("missing directory: %d %s %s", code, out, errs)
	}
}

// TestNoTerminalSpoofing: inspect printed a stored script raw, so a
// comment holding ESC[2K ESC[1G hid the line after it in a terminal, and
// resume then ran it; print() passed OSC 0/52 (window title, clipboard)
// raw. Both are escaped now, and resume --expect-sha256 (the hash inspect
// prints) refuses a checkpoint whose scripts changed.
func TestNoTerminalSpoofing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	_, good := sbCheckpoint(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "run.tar")
	forge(t, good, "# a harmless comment\x1b[2K\x1b[1G\nprint(\"\\x1b]0;pwned\\x07\\x1b]52;c;cm0gLXJmIH4=\\x07\")", ck)
	code, out, errs := runBinIn(t, dir, nil, "inspect", "run.tar")
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, errs)
	}
	if strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `# a harmless comment\x1b[2K\x1b[1G`) {
		t.Errorf("inspect printed the escape sequence raw or not at all:\n%q", out)
	}
	var sum string
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "== scripts sha256 "); ok {
			sum = rest
		}
	}
	if len(sum) != 64 {
		t.Fatalf("inspect printed no scripts sha256:\n%s", out)
	}
	code, out, errs = runBinIn(t, dir, nil, "resume", "--set", "epochs=2", "--expect-sha256", sum, "run.tar")
	if code != 0 || strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) || !strings.Contains(out, `\x1b]0;pwned\x07`) {
		t.Errorf("resume with the approved hash: %d\n%q\n%s", code, out, errs)
	}
	// The checkpoint changed since it was approved.
	forge(t, good, "print(1)", ck)
	code, out, errs = runBinIn(t, dir, nil, "resume", "--set", "epochs=3", "--expect-sha256", sum, "run.tar")
	if code != 1 || !strings.Contains(errs, "not the "+sum+" you approved") || strings.Contains(out, "done") {
		t.Errorf("resume of a changed checkpoint: %d %s %s", code, out, errs)
	}
}

// TestRecursionTracebackElided: infinite recursion printed a 100,005-line
// traceback; repeated frames are now elided as Python does.
func TestRecursionTracebackElided(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	stderr := runScriptExpectError(t, "def f(n):\n    return f(n + 1)\n\nf(0)\n", "4:", "Previous line repeated", "stack overflow")
	if n := strings.Count(stderr, "\n"); n > 20 {
		t.Errorf("the traceback has %d lines:\n%.2000s", n, stderr)
	}
}
