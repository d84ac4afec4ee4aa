package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// closedAddress returns a local address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Offline, fuel download reports each address's failure once, then says
// what to do next.
func TestFuelDownloadOfflineSaysEachFailureOnceAndNextStep(t *testing.T) {
	a, b := "http://"+closedAddress(t)+"/", "http://"+closedAddress(t)+"/"
	t.Setenv("FUEL_DOWNLOAD_MIRRORS", a+","+b)
	dir := t.TempDir()
	code, out, errs := runBinary(t, "", "fuel", "download", "mnist", "-d", dir)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, u := range []string{a + "train-images-idx3-ubyte.gz", b + "train-images-idx3-ubyte.gz"} {
		if n := strings.Count(errs, u); n != 1 {
			t.Errorf("%s is reported %d times, want once:\n%s", u, n, errs)
		}
	}
	for _, want := range []string{
		"train-images-idx3-ubyte.gz was not downloaded: all 2 of its addresses failed",
		"is this machine offline?",
		"Next step: copy train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz into " + dir,
		"FUEL_DOWNLOAD_MIRRORS",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	noGoTrace(t, errs)
}

// scripts/train_from_server.star without a server says at once what it
// waits for (the address, how to start a server, the timeout), instead of
// 60 s of silence.
func TestTrainFromServerSaysWhatItWaitsFor(t *testing.T) {
	port := closedAddress(t)[len("127.0.0.1:"):]
	code, out, errs := runBinary(t, "", "run", "--set", "port="+port, "--set", "timeout=1", "../../scripts/train_from_server.star")
	first, _, _ := strings.Cut(out, "\n")
	if code != 1 || !strings.Contains(first, "tcp://localhost:"+port) || !strings.Contains(first, "blocks-repl fuel serve scripts/serve_mnist.star") ||
		!strings.Contains(first, "gives up after 1 s") || !strings.Contains(errs, "no data from tcp://localhost:"+port) {
		t.Errorf("exit %d, first line of stdout %q\nstderr:\n%s", code, first, errs)
	}
	noGoTrace(t, errs)
}

// eval of an array of the wrong dtype points to the array's astype, not to
// Fuel's stream transformer Cast.
func TestEvalDTypeHintIsAstype(t *testing.T) {
	script := writeScript(t, "ev.star", `load("tensor", "matrix")
load("numpy", "ones")
x = matrix("x")
y = (x * 2).sum()
print(y.eval({x: ones((2, 3), dtype = "float64")}))
`)
	code, _, errs := runBinary(t, "", "run", script)
	if code != 1 || !strings.Contains(errs, `got a float64 array; convert it first: a.astype("float32")`) || strings.Contains(errs, "Cast") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}

// The hidden layer of overrideScript, and a wider one.
const hiddenDims, widerDims = "[784, 20, 10]", "[784, 30, 10]"

// A checkpoint that does not fit the model the script builds is refused
// before training, without Blocks' on_error banner (the run never
// started), and nothing is written.
func TestResumeOfMismatchedCheckpointRefusedWithoutBanner(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(overrideScript), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWatched(t, dir, nil, "run", "exp.star")
	if code := w.exitCode(t, 2*time.Minute); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, w.stderr())
	}
	ckpt := filepath.Join(dir, "run.tar")
	c, err := checkpoint.Read(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	// The stored script now builds a wider hidden layer.
	s := &c.Run.Scripts[0]
	if !bytes.Contains(s.Source, []byte(hiddenDims)) {
		t.Fatalf("the script has no %q", hiddenDims)
	}
	s.Source = bytes.Replace(s.Source, []byte(hiddenDims), []byte(widerDims), 1)
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ckpt, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w = startWatched(t, dir, nil, "resume", "--set", "epochs=3", "run.tar")
	code := w.exitCode(t, 2*time.Minute)
	errs := w.stderr()
	if code != 1 || strings.Contains(errs, "Error occured during training") || strings.Contains(errs, "on_error") ||
		!strings.Contains(errs, "resuming from run.tar refused, nothing trained") || !strings.Contains(errs, "the script builds a different model") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	if after, _ := os.ReadFile(ckpt); !bytes.Equal(after, data) {
		t.Error("a refused resume rewrote the checkpoint")
	}
	noGoTrace(t, errs)
}

// inspect names an algorithm state array once by its parameter's path
// ("|mlp|linear_0.W_mean"), not twice as its checkpoint key does.
func TestInspectAlgorithmStateNames(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(strings.Replace(overrideScript, `"GradientDescent", "Scale"`, `"GradientDescent", "Adam"`, 1), "Scale(", "Adam(", 1)
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWatched(t, dir, nil, "run", "--set", "epochs=1", "exp.star")
	if code := w.exitCode(t, 2*time.Minute); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, w.stderr())
	}
	code, out, errs := runBinary(t, "", "inspect", filepath.Join(dir, "run.tar"))
	_, state, _ := strings.Cut(out, "== algorithm state")
	if code != 0 || !strings.Contains(state, "\n000:|mlp|linear_1.b_mean ") || !strings.Contains(state, "|mlp|linear_1.b_time ") ||
		strings.Contains(state, ".|mlp|") {
		t.Errorf("exit %d\n%s\n%s", code, state, errs)
	}
	// The keys themselves are unchanged: the checkpoint resumes.
	w = startWatched(t, dir, nil, "resume", "--set", "epochs=2", "run.tar")
	if code := w.exitCode(t, 2*time.Minute); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, w.stderr())
	}
}

// graph --var and the REPL draw a brick as the same tree.
func TestGraphVarAndREPLDrawTheSameBrickTree(t *testing.T) {
	script := writeScript(t, "mlp.star", `load("tensor", "matrix")
load("blocks.bricks", "MLP", "Rectifier", "Softmax")
load("blocks.initialization", "IsotropicGaussian", "Constant")
mlp = MLP([Rectifier(), Softmax()], [784, 20, 10], weights_init = IsotropicGaussian(0.01), biases_init = Constant(0))
mlp.initialize()
`)
	code, tree, errs := runBinary(t, "", "graph", "--var", "mlp", script)
	if code != 0 || !strings.Contains(tree, "│   ├── W float32 (784, 20) [WEIGHT]") {
		t.Fatalf("graph --var: exit %d\n%s%s", code, tree, errs)
	}
	tm := startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + filepath.Join(t.TempDir(), "h")}, "repl", script)
	tm.expect(">>> ")
	tm.line("mlp")
	tm.expect("└── Softmax softmax (initialized)")
	tm.exit()
	screen := strings.ReplaceAll(tm.screen(), "\r\n", "\n")
	if !strings.Contains(screen, "\n"+tree) {
		t.Errorf("the REPL's tree differs from graph --var's:\n%s\nREPL:\n%s", tree, screen)
	}
}

// Printing(one_line = True) prints one line per epoch (and one before
// training and at the end) instead of Blocks' blocks.
func TestPrintingOneLinePerEpoch(t *testing.T) {
	script := writeScript(t, "exp.star", fmt.Sprintf(smallLoop, ", Printing(one_line = True)")+"main_loop.run()\n")
	code, out, errs := runBinary(t, "", "run", script)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^before training: config \{"epochs": 2\}$`),
		regexp.MustCompile(`^epoch 1 \(iteration 10\)$`),
		regexp.MustCompile(`^epoch 2 \(iteration 20\): training_finish_requested True$`),
		regexp.MustCompile(`^training finished after 2 epochs \(iteration 20\)$`),
	}
	if code != 0 || len(lines) != len(want) {
		t.Fatalf("exit %d, %d lines:\n%s\n%s", code, len(lines), out, errs)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d: %q, want %s", i, lines[i], re)
		}
	}
}
