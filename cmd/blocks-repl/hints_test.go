package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Python habits get a hint pointing to the Starlark way, and an unclosed
// bracket is reported where it was opened.
func TestPythonHabitHints(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"import numpy as np\n", `Starlark has no import: theano and numpy are predeclared (import numpy as np: np = numpy;`},
		{"x = np.zeros(3)\n", `undefined: np (numpy is predeclared: np = numpy is Python's import numpy as np)`},
		{"x = T.matrix()\n", `undefined: T (T = theano.tensor is Python's import theano.tensor as T)`},
		{"from numpy import zeros\n", `Starlark has no import`},
		{"x = 2 ** 3\n", `Starlark has no **: write x * x, pow(x, y) for numbers (load("math", "pow"))`},
		{"a = [1]\nb = a[:, 0]\n", `write x[":", 0] for x[:, 0]`},
		{"x = (1,\ny = 2\n", `got '=', want ')' (the "(" opened at line 1, column 5 is not closed)`},
		{"x = f(1\n", `(the "(" opened at line 1, column 6 is not closed)`},
		{"Rectifer()\n", `undefined: Rectifer (did you mean Rectifier? load("blocks.bricks", "Rectifier"))`},
		{"n = config.get(\"n\", 1)\n", `undefined: config (it comes from a module: load("blocks.config", "config"))`},
	} {
		script := writeScript(t, "habit.star", c.src)
		code, _, errs := runBinary(t, "", "run", script)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant %q", c.src, code, errs, c.want)
		}
	}
}

// At the prompt: the hints, a did-you-mean for a misspelt global, and
// errors in files run by repl FILE and :load named by the file.
func TestTerminalHintsAndFileNames(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.star")
	writeFile(t, bad, "x = 1\ny = x +\n")
	worse := filepath.Join(dir, "worse.star")
	writeFile(t, worse, "z = 1\nundefined_thing()\n")
	tm := startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + filepath.Join(dir, "h")}, "repl", bad)
	tm.expect("bad.star:2:8: got newline")
	tm.expect(">>> ")
	tm.line("import numpy as np")
	tm.expect("Starlark has no import")
	tm.line("2 ** 3")
	tm.expect("Starlark has no **")
	tm.line(`load("blocks.bricks", "Rectifier")`)
	tm.line("Rectifer()")
	tm.expect("undefined: Rectifer (did you mean Rectifier?)")
	tm.line(":load " + worse)
	tm.expect("worse.star:2:1: undefined: undefined_thing")
	tm.exit()
	if strings.Contains(tm.screen(), "<stdin>:2") {
		t.Errorf("a file's error is labelled <stdin>:\n%s", tm.screen())
	}
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
