package main

import (
	"strings"
	"testing"
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
