package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/internal/fixtures"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string

	mnistOnce sync.Once
	mnistDir  string
	mnistErr  error
)

// binary builds blocks-repl once for the tests that run it as a process.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "blocks-repl-test")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "blocks-repl")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

// mnistData is a data directory holding MNIST-shaped idx files
// (fixtures.WriteMNIST: MNIST's names and sizes, its first examples) made
// once from the subset shipped in the binary, for the runs that read
// MNIST through FUEL_DATA_PATH; removed by TestMain.
func mnistData(t *testing.T) string {
	t.Helper()
	mnistOnce.Do(func() {
		if mnistDir, mnistErr = os.MkdirTemp("", "blocks-repl-test-mnist"); mnistErr == nil {
			mnistErr = fixtures.WriteMNIST(mnistDir, datasets.EmbeddedMNISTFiles())
		}
	})
	if mnistErr != nil {
		t.Fatalf("MNIST-shaped data: %v", mnistErr)
	}
	return mnistDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if mnistDir != "" {
		os.RemoveAll(mnistDir)
	}
	os.Exit(code)
}

// runBinary runs the built command and returns its exit status, stdout
// and stderr.
func runBinary(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "FUEL_FLOATX=float32")
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

func writeScript(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func noGoTrace(t *testing.T, stderr string) {
	t.Helper()
	for _, bad := range []string{"goroutine ", "panic:", ".go:"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr has a Go trace (%q):\n%s", bad, stderr)
		}
	}
}

func TestRunSuccess(t *testing.T) {
	script := writeScript(t, "ok.star", `
load("tensor", "vector")
load("blocks.config", "config")
x = vector("x")
lr = config.get("lr", 0.1)
print((x * lr).eval({x: [1, 2]}))
`)
	code, out, errs := runBinary(t, "", "run", "--set", "lr=0.5", script)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	if out != "[0.5, 1.]\n" {
		t.Errorf("stdout %q", out)
	}
	// Flags may also follow the script.
	if code, out, errs = runBinary(t, "", "run", script, "--set=lr=2"); code != 0 || out != "[2., 4.]\n" {
		t.Errorf("exit %d, stdout %q, stderr %s", code, out, errs)
	}
}

func TestRunScriptError(t *testing.T) {
	script := writeScript(t, "x.star", `load("tensor", "matrix")
x = matrix("x")
y = x.sum(axis=5)
`)
	code, out, errs := runBinary(t, "", "run", script)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if out != "" {
		t.Errorf("stdout %q", out)
	}
	for _, want := range []string{"Traceback (most recent call last):", "x.star:3", "axis 5 is out of range for a 2-d variable"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	noGoTrace(t, errs)
}

func TestRunErrorInLoadedFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "lib.star"), []byte("def f():\n    return [][1]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.star"), []byte("load(\"lib.star\", \"f\")\n\nf()\n"), 0o644)
	code, _, errs := runBinary(t, "", "run", filepath.Join(dir, "main.star"))
	if code != 1 || !strings.Contains(errs, "main.star:3") || !strings.Contains(errs, "lib.star:2") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	noGoTrace(t, errs)
}

func TestRunSyntaxError(t *testing.T) {
	script := writeScript(t, "bad.star", "x = 1\ny = (\n")
	code, _, errs := runBinary(t, "", "run", script)
	if code != 1 || !strings.Contains(errs, "bad.star:3") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	noGoTrace(t, errs)
}

func TestRunUnusedOverride(t *testing.T) {
	script := writeScript(t, "s.star", "load('blocks.config', 'config')\nn = config.get('epochs', 1)\n")
	code, _, errs := runBinary(t, "", "run", "--set", "epoch=3", script)
	if code != 1 || !strings.Contains(errs, "--set epoch: the script never reads this setting") || !strings.Contains(errs, "did you mean epochs") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string
		err  string
	}{
		{[]string{"version"}, 0, "blocks-repl ", ""},
		{[]string{"help"}, 0, "usage:", ""},
		{[]string{"frobnicate"}, 2, "", "unknown command \"frobnicate\""},
		{[]string{"x.star"}, 2, "", "blocks-repl run x.star"},
		{[]string{"run"}, 2, "", "missing SCRIPT.star"},
		{[]string{"run", "--set", "lr", "x.star"}, 2, "", "want NAME=VALUE"},
		{[]string{"run", "--set", "a=1", "--set", "a=2", "x.star"}, 2, "", "a is set twice"},
		{[]string{"run", "a.star", "b.star"}, 2, "", "unexpected arguments after a.star: b.star"},
		{[]string{"run", "/nonexistent/x.star"}, 1, "", "no such file"},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, strings.NewReader(""), &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out.String(), errb.String())
		}
	}
}

func TestREPL(t *testing.T) {
	input := `x = 1 + 2
x
def f(a):
    return a * 2

f(x)
1 // 0
load("tensor", "vector")
v = vector("v")
(v + 1).eval({v: [1, 2]})
"text"
:help tensor
:nonsense
f(_ if False else 5)
`
	code, out, errs := runBinary(t, input)
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	want := "3\n6\nndarray float32 (2,)  mean=2.5 std=0.5 min=2 max=3\n[2., 3.]\n\"text\"\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("stdout %q, want it to start with %q; stderr:\n%s", out, want, errs)
	}
	if !strings.Contains(out, "module tensor: ") || !strings.Contains(out, "matrix") || !strings.HasSuffix(out, "10\n") {
		t.Errorf("stdout %q", out)
	}
	if !strings.Contains(errs, "<stdin>:1:3: in <expr>") || !strings.Contains(errs, "floored division by zero") || !strings.Contains(errs, "unknown command :nonsense") {
		t.Errorf("stderr %q", errs)
	}
	if strings.Contains(out, ">>>") {
		t.Errorf("prompts on a non-terminal: %q", out)
	}
	noGoTrace(t, errs)
}

// panicWriter panics on Write, standing for a bug below a builtin.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("writer exploded") }

func TestInternalErrorIsReported(t *testing.T) {
	script := writeScript(t, "p.star", "print('boom')\n")
	var errb bytes.Buffer
	code := Main([]string{"run", script}, strings.NewReader(""), panicWriter{}, &errb)
	if code != 1 || !strings.Contains(errb.String(), "blocks-repl: internal error: writer exploded") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	noGoTrace(t, errb.String())
	// The REPL reports it and goes on.
	errb.Reset()
	code = repl(strings.NewReader("print('x')\n"), panicWriter{}, &errb, false, "")
	if code != 0 || !strings.Contains(errb.String(), "internal error: writer exploded") {
		t.Errorf("repl: exit %d, stderr %q", code, errb.String())
	}
}

// Without a CUDA backend, --device cuda fails at once, naming the build.
func TestDeviceCUDARefused(t *testing.T) {
	script := writeScript(t, "never.star", "print('ran')\n")
	code, out, errs := runBinary(t, "", "run", "--device", "cuda:0", script)
	if code != 1 || strings.Contains(out, "ran") || !strings.Contains(errs, "CPU build") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runBinary(t, "", "run", "--device", "cpu", script)
	if code != 0 || out != "ran\n" {
		t.Errorf("--device cpu: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// The other commands that run a script check theirs before reading
	// anything; BLOCKS_DEVICE is the flag's default.
	for _, args := range [][]string{
		{"resume", "--device", "cuda:0", "missing.tar"},
		{"replay", "--device", "cuda", "missing.tar"},
		{"graph", "--device", "cuda:0", script},
	} {
		code, out, errs = runBinary(t, "", args...)
		if code == 0 || strings.Contains(out, "ran") || !strings.Contains(errs, "blocks-repl "+args[0]+": device cuda:0") || !strings.Contains(errs, "CPU build") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	t.Setenv("BLOCKS_DEVICE", "cuda:0")
	code, out, errs = runBinary(t, "", "run", script)
	if code != 1 || strings.Contains(out, "ran") || !strings.Contains(errs, "CPU build") {
		t.Errorf("BLOCKS_DEVICE=cuda:0: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// The flag is the run's device: the script reads it as config.device.
	shows := writeScript(t, "shows.star", "load(\"blocks.config\", \"config\")\nprint(config.device)\nconfig.device = \"cpu\"\nprint(config.device)\n")
	code, out, errs = runBinary(t, "", "run", "--device", "cpu", shows)
	if code != 0 || out != "cpu\ncpu\n" {
		t.Errorf("--device cpu, config.device: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	t.Setenv("BLOCKS_DEVICE", "")
	code, out, errs = runBinary(t, "", "graph", "--device", "cpu", "--var", "nothing", script)
	if code == 0 || !strings.Contains(out+errs, "ran") {
		t.Errorf("graph --device cpu: exit %d, stdout %q, stderr %q; want the script run, then no global nothing", code, out, errs)
	}
}
