package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The regressions of the second hardening round (issue 24), each through
// the real binary: a clear error at the script's line, never a Go runtime
// dump or a SIGSEGV.

// runScriptExpectError runs src and checks that it fails with exit status
// 1, an error holding every one of want, the script's line, and no Go
// trace.
func runScriptExpectError(t *testing.T, src string, line string, want ...string) string {
	t.Helper()
	script := writeScript(t, "bad.star", src)
	code, _, stderr := runBinary(t, "", "run", script)
	if code != 1 {
		t.Errorf("exit status %d, want 1; stderr:\n%s", code, stderr)
	}
	noGoTrace(t, stderr)
	if line != "" && !strings.Contains(stderr, "bad.star:"+line) {
		t.Errorf("stderr does not name the script line %s:\n%s", line, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	return stderr
}

// TestOverflowingShapesRefused: shapes whose element count overflows an
// int were accepted (zeros((1<<62, 4)).shape printed (4611686018427387904,
// 4)) and dot then handed OpenBLAS truncated dimensions: SIGSEGV.
func TestOverflowingShapesRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	pre := "load(\"numpy\", \"zeros\", \"ones\", \"dot\", \"random\", \"reshape\", \"arange\")\n"
	for _, c := range []struct{ name, expr, want string }{
		{"zeros", "zeros((1 << 62, 4))", "overflows"},
		{"ones", "ones((1 << 32, 1 << 32), dtype = \"float32\")", "overflows"},
		{"uniform", "random.RandomState(1).uniform(size = (1 << 62, 4))", "overflows"},
		{"rand", "random.RandomState(1).rand(1 << 62, 4)", "overflows"},
		{"reshape", "zeros((0,)).reshape((1 << 62, 4, 0, -1))", "cannot reshape"},
		{"reshape-module", "reshape(zeros((4,)), (1 << 62, 1 << 2))", "overflows"},
		{"dot", "dot(zeros((1 << 31, 0), dtype = \"float32\"), zeros((0, 1 << 31), dtype = \"float32\"))", "32-bit limit of BLAS"},
		{"huge", "zeros((1000000, 1000000))", "more than the machine's memory"},
		{"arange", "arange(0, 1e300, 1)", "more than an array can hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := pre + "x = " + c.expr + "\nprint(x.shape)\n"
			stderr := runScriptExpectError(t, src, "2:", c.want)
			if strings.Contains(stderr, "please report this bug") {
				t.Errorf("an internal error instead of a refusal:\n%s", stderr)
			}
		})
	}
}

// TestScriptMemoryBombsRefused: list(range(1 << 40)) killed the process
// with a 180-line Go runtime dump.
func TestScriptMemoryBombsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	runScriptExpectError(t, "x = 1\ny = list(range(1 << 40))\n", "2:", "does not fit in the machine's memory")
	runScriptExpectError(t, "x = 1\ny = sorted(range(1 << 40))\n", "2:", "does not fit")
}

// TestRunLimits: zeros((1000000, 1000000)) and runaway loops had no limit
// a user could set; --max-steps and --max-memory bound them with an error
// at the script's line. --load-root lets load() read a project's shared
// helper above the script's directory (issue 20, item 18), still
// refusing anything outside the roots.
func TestRunLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	loop := writeScript(t, "loop.star", "x = 0\nwhile True:\n    x += 1\n")
	code, _, stderr := runBinary(t, "", "run", "--max-steps", "1000000", loop)
	noGoTrace(t, stderr)
	if code != 1 || !strings.Contains(stderr, "loop.star:") || !strings.Contains(stderr, "--max-steps") {
		t.Errorf("--max-steps: %d\n%s", code, stderr)
	}
	mem := writeScript(t, "mem.star", "load(\"numpy\", \"zeros\")\nx = 1\ny = zeros((1000, 1000, 100))\n")
	code, _, stderr = runBinary(t, "", "run", "--max-memory", "100M", mem)
	if code != 1 || !strings.Contains(stderr, "mem.star:3") || !strings.Contains(stderr, "more than the run's memory budget (--max-memory) (100.0 MiB)") {
		t.Errorf("--max-memory: %d\n%s", code, stderr)
	}
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, "sub"), 0o755)
	os.WriteFile(filepath.Join(proj, "lib.star"), []byte("helper = 42\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "sub", "exp.star"), []byte("load(\"../lib.star\", \"helper\")\nprint(helper)\n"), 0o644)
	code, _, stderr = runBinary(t, "", "run", filepath.Join(proj, "sub", "exp.star"))
	if code != 1 || !strings.Contains(stderr, "--load-root") {
		t.Errorf("load outside the script's directory: %d\n%s", code, stderr)
	}
	code, out, stderr := runBinary(t, "", "run", "--load-root", proj, filepath.Join(proj, "sub", "exp.star"))
	if code != 0 || out != "42\n" {
		t.Errorf("--load-root: %d %q %s", code, out, stderr)
	}
}

// TestSmallItems (issue 24, item 15): --set lr=1e400 and n=1<<70 said
// "got a string"; the REPL's history file was 0644; plot images were
// 0600; a garbage idx file's error named the Go function ReadIDXFile.
func TestSmallItems(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	script := writeScript(t, "c.star", "load(\"blocks.config\", \"config\")\ncfg = config(lr = 0.1, n = 3)\nprint(cfg.lr, cfg.n)\n")
	for set, want := range map[string]string{
		"lr=1e400": "1e400 is out of range for a number",
		"n=1<<70":  "1<<70 is an expression, not a literal",
	} {
		code, _, stderr := runBinary(t, "", "run", "--set", set, script)
		if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "got a string") {
			t.Errorf("--set %s: %d\n%s", set, code, stderr)
		}
	}
	hist := filepath.Join(t.TempDir(), "history")
	tm := startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + hist}, "repl")
	tm.expect(">>> ")
	tm.line("1 + 1")
	tm.expect("2")
	tm.exit()
	if fi, err := os.Stat(hist); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("history file: %v %v, want 0600", fi.Mode(), err)
	}
	dir := t.TempDir()
	for _, n := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		os.WriteFile(filepath.Join(dir, n), []byte("garbage, not idx"), 0o644)
	}
	code, _, stderr := runBinary(t, "", "fuel", "convert", "mnist", "-d", dir, "-o", t.TempDir())
	if code == 0 || strings.Contains(stderr, "ReadIDXFile") || !strings.Contains(stderr, "bad magic number") {
		t.Errorf("garbage idx: %d\n%s", code, stderr)
	}
}

// TestPlotCyclicLogReadOnly (item 12): plot of an SQLite log whose
// resumed_from chain has a cycle never ended (filling /var/tmp), and
// plot switched the user's database to WAL mode.
func TestPlotCyclicLogReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "log.sqlite")
	py := `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute('CREATE TABLE entries (uuid TEXT NOT NULL, time INTEGER NOT NULL, "key" TEXT NOT NULL, value, PRIMARY KEY (uuid, time, "key"))')
c.execute('CREATE TABLE status (uuid TEXT NOT NULL, "key" TEXT NOT NULL, value, PRIMARY KEY (uuid, "key"))')
for u, p in (("a", "b"), ("b", "a")):
    c.execute('INSERT INTO status VALUES (?, ?, ?)', (u, 'resumed_from', p))
    for i in range(1, 4):
        c.execute('INSERT INTO entries VALUES (?, ?, ?, ?)', (u, i, 'cost', 1.0 / i))
c.commit()
`
	if out, err := exec.Command("/usr/bin/python3", "-c", py, db).CombinedOutput(); err != nil {
		t.Fatalf("python: %v %s", err, out)
	}
	start := time.Now()
	code, _, stderr := runBinary(t, "", "plot", db, "--run", "a", "--channels", "cost", "--out", filepath.Join(dir, "p.png"))
	noGoTrace(t, stderr)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("plot took %v", d)
	}
	if code != 0 {
		t.Errorf("plot of a cyclic chain: %d\n%s", code, stderr)
	}
	out, err := exec.Command("/usr/bin/python3", "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode').fetchone()[0])", db).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "delete" {
		t.Errorf("journal mode after plot: %q %v (want delete, as the user left it)", out, err)
	}
}

// TestSplitAttributeWrongType (item 15): a `split` attribute of the wrong
// type said "no `split` attribute"; it must say what the attribute is.
func TestSplitAttributeWrongType(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	dir := t.TempDir()
	py := `import sys, h5py, numpy
d = sys.argv[1]
with h5py.File(d + '/ints.hdf5', 'w') as f:
    f['features'] = numpy.zeros((4, 2), 'float32')
    f.attrs['split'] = numpy.arange(3)
with h5py.File(d + '/text.hdf5', 'w') as f:
    f['features'] = numpy.zeros((4, 2), 'float32')
    f.attrs['split'] = numpy.bytes_('train')
with h5py.File(d + '/fields.hdf5', 'w') as f:
    f['features'] = numpy.zeros((4, 2), 'float32')
    f.attrs['split'] = numpy.array([(1, 2)], dtype=[('split', 'i4'), ('source', 'i4')])
`
	if out, err := exec.Command("/usr/bin/python3", "-c", py, dir).CombinedOutput(); err != nil {
		t.Fatalf("python: %v %s", err, out)
	}
	for name, want := range map[string]string{
		"ints":   "`split` attribute is an array of int64, not Fuel's compound rows",
		"text":   "`split` attribute is an array of S5, not Fuel's compound rows",
		"fields": `split field "split" is not a string`,
	} {
		script := writeScript(t, name+".star", `load("fuel.datasets", "H5PYDataset")
ds = H5PYDataset("`+filepath.Join(dir, name+".hdf5")+`", which_sets = ("train",))
`)
		code, _, stderr := runBinary(t, "", "run", script)
		noGoTrace(t, stderr)
		if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "no `split` attribute") || !strings.Contains(stderr, name+".star:2") {
			t.Errorf("%s: exit %d\n%s", name, code, stderr)
		}
	}
}
