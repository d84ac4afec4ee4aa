package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const cmdScript = `load("tensor", "matrix", "lmatrix")
load("blocks.config", "config")
load("blocks.bricks", "MLP", "Tanh", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("blocks.graph", "ComputationGraph")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter")
load("numpy", "random")
load("lib.star", "hidden")

cfg = config(epochs = 1, learning_rate = 0.1, path = "c.tar")
print("seed", config.default_seed)
rng = random.RandomState(2)
data = IndexableDataset({"features": rng.normal(size = (30, 4)).astype("float32"),
                         "targets": rng.randint(0, 2, size = (30, 1))})
x = matrix("features")
y = lmatrix("targets")
mlp = MLP(activations = [Tanh(), Softmax()], dims = [4, hidden, 2],
          weights_init = IsotropicGaussian(0.1), biases_init = Constant(0))
mlp.initialize()
cost = CategoricalCrossEntropy().apply(y.flatten(), mlp.apply(x))
alg = GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters,
                      step_rule = Scale(learning_rate = cfg.learning_rate))
loop = MainLoop(algorithm = alg, data_stream = DataStream(data, iteration_scheme = ShuffledScheme(30, batch_size = 7)),
                extensions = [FinishAfter(after_n_epochs = cfg.epochs), Checkpoint(cfg.path, every_n_batches = 3)])
loop.run()
print("done", loop.status["iterations_done"], loop.log[0].get("config"))
`

func runMain(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func cmdDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(cmdScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib.star"), []byte("hidden = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestConfigOverridesAndPrintConfig(t *testing.T) {
	dir := cmdDir(t)
	code, out, errs := runMain(t, dir, "run", "--set", "learning_rate=1", "--print-config", "exp.star")
	if code != 0 || out != "epochs = 1\nlearning_rate = 1.0  # --set\npath = \"c.tar\"\n" {
		t.Errorf("--print-config: %d %q %q", code, out, errs)
	}
	code, _, errs = runMain(t, dir, "run", "--set", "epochs=many", "exp.star")
	if code != 1 || !strings.Contains(errs, "exp.star:17") || !strings.Contains(errs, "epochs is declared as 1 (an int), got a string; the tunables are: epochs, learning_rate, path") {
		t.Errorf("wrong type: %d %q", code, errs)
	}
	code, _, errs = runMain(t, dir, "run", "--set", "learning_rat=0.2", "exp.star")
	if code != 1 || !strings.Contains(errs, "learning_rat: not a tunable of this script; its tunables are: epochs, learning_rate, path (did you mean learning_rate?)") {
		t.Errorf("unknown key: %d %q", code, errs)
	}
}

// run, then resume with an extended FinishAfter after the script and its
// loaded file changed on disk: the checkpoint's copies run. replay
// confirms the checkpoint; inspect shows it; a tampered file is refused.
func TestResumeReplayInspect(t *testing.T) {
	dir := cmdDir(t)
	code, out, errs := runMain(t, dir, "run", "--set", "learning_rate=0.2", "exp.star")
	if code != 0 || !strings.Contains(out, `done 5 {"epochs": 1, "learning_rate": 0.2, "path": "c.tar"}`) {
		t.Fatalf("run: %d %q %q", code, out, errs)
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err == nil {
		py := "import tarfile, io, numpy; t = tarfile.open('c.tar'); z = numpy.load(io.BytesIO(t.extractfile('_parameters').read())); " +
			"print(sorted((k, z[k].shape, str(z[k].dtype)) for k in z.files))"
		cmd := exec.Command("/usr/bin/python3", "-c", py)
		cmd.Dir = dir
		got, err := cmd.CombinedOutput()
		want := "[('|mlp|linear_0.W', (4, 5), 'float32'), ('|mlp|linear_0.b', (5,), 'float32'), ('|mlp|linear_1.W', (5, 2), 'float32'), ('|mlp|linear_1.b', (2,), 'float32')]\n"
		if err != nil || string(got) != want {
			t.Errorf("numpy reads %q (%v), want %q", got, err, want)
		}
	}
	code, out, errs = runMain(t, dir, "replay", "c.tar")
	if code != 0 || !strings.Contains(out, "replay: bit-identical at iteration 5 (epoch 1, after_training)") {
		t.Errorf("replay: %d %q %q", code, out, errs)
	}
	os.WriteFile(filepath.Join(dir, "exp.star"), []byte("print('MODIFIED')\n"), 0o644)
	os.Remove(filepath.Join(dir, "lib.star"))
	code, _, errs = runMain(t, dir, "resume", "c.tar")
	if code != 1 || !strings.Contains(errs, "has finished") {
		t.Errorf("resume of a finished run without --set: %d %q", code, errs)
	}
	code, out, errs = runMain(t, dir, "resume", "--set", "epochs=3", "c.tar")
	if code != 0 || strings.Contains(out, "MODIFIED") || !strings.Contains(out, "done 15") {
		t.Fatalf("resume: %d %q %q", code, out, errs)
	}
	code, out, errs = runMain(t, dir, "replay", "c.tar")
	if code != 0 || !strings.Contains(out, "bit-identical at iteration 15 (epoch 3, after_training)") {
		t.Errorf("replay after resume: %d %q %q", code, out, errs)
	}
	code, out, _ = runMain(t, dir, "inspect", "c.tar")
	for _, want := range []string{"format:          blocks-go checkpoint, version 1", "learning_rate = 0.2  # --set learning_rate=0.2",
		"epochs = 3  # --set epochs=3", "|mlp|linear_0.W  (4, 5)", "== loaded file", "hidden = 5", "iterations_done 15, epochs_done 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "c.tar"))
	i := bytes.Index(b, []byte("hidden = 5"))
	b[i+9] = '6'
	os.WriteFile(filepath.Join(dir, "bad.tar"), b, 0o644)
	code, _, errs = runMain(t, dir, "resume", "--set", "epochs=4", "bad.tar")
	if code != 1 || !strings.Contains(errs, "does not match its SHA-256 in the manifest (the file was modified)") {
		t.Errorf("tampered resume: %d %q", code, errs)
	}
	os.WriteFile(filepath.Join(dir, "short.tar"), b[:len(b)/3], 0o644)
	code, _, errs = runMain(t, dir, "inspect", "short.tar")
	if code != 1 || !strings.Contains(errs, "truncated") {
		t.Errorf("truncated inspect: %d %q", code, errs)
	}
}

// A checkpoint is data from elsewhere: resumed, its script may write only
// under the working directory unless --trust is given.
func TestResumeIsSandboxed(t *testing.T) {
	dir := cmdDir(t)
	outside := filepath.Join(t.TempDir(), "elsewhere.tar")
	if code, _, errs := runMain(t, dir, "run", "--set", "path="+outside, "exp.star"); code != 0 {
		t.Fatalf("run: %d\n%s", code, errs)
	}
	other := t.TempDir() // resume from another directory: outside is outside it
	code, _, errs := runMain(t, other, "resume", "--set", "epochs=2", outside)
	if code == 0 || !strings.Contains(errs, "outside the run directory") || !strings.Contains(errs, "--trust") {
		t.Fatalf("untrusted resume writing outside its directory: exit %d\n%s", code, errs)
	}
	if code, _, errs := runMain(t, other, "resume", "--trust", "--set", "epochs=2", outside); code != 0 {
		t.Fatalf("resume --trust: exit %d\n%s", code, errs)
	}
}
