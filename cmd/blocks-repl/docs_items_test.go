package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// What the docs say about subset runs: a slice (Fuel's), a (start, stop)
// tuple, a range and an index list select examples; a slice of another
// step is refused with an error that says what is wanted
// (docs/fuel-data.md).
func TestSubsetAsDocumented(t *testing.T) {
	script := writeScript(t, "subset.star", `load("fuel.datasets", "EmbeddedMNIST")
print("SLICE", EmbeddedMNIST(("train",), subset = slice(10, 20)).num_examples)
print("OPEN", EmbeddedMNIST(("train",), subset = slice(4990, None)).num_examples)
print("TUPLE", EmbeddedMNIST(("train",), subset = (10, 20)).num_examples)
print("RANGE", EmbeddedMNIST(("train",), subset = range(3)).num_examples)
print("LIST", EmbeddedMNIST(("train",), subset = [5, 1, 1]).num_examples)
EmbeddedMNIST(("train",), subset = slice(0, 10, 2))
`)
	code, out, errs := runBinary(t, "", "run", script)
	if code != 1 || !strings.Contains(out, "SLICE 10\nOPEN 10\nTUPLE 10\nRANGE 3\nLIST 2\n") || !strings.Contains(errs, "subset: slice(0, 10, 2): a subset slice must have step 1") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	doc, err := os.ReadFile("../../docs/fuel-data.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "`subset` (Fuel's `slice(start, stop)` of step 1") {
		t.Error("docs/fuel-data.md does not describe subset as it runs")
	}
}

// :help GradientDescent shows every argument GradientDescent takes: its
// own, then UpdatesAlgorithm's, which it takes through **kwargs.
func TestTerminalHelpGradientDescent(t *testing.T) {
	tm := startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + filepath.Join(t.TempDir(), "h")})
	tm.expect(">>> ")
	tm.line(":help GradientDescent")
	tm.expect("known_grads=None, consider_constant=None, **kwargs)")
	tm.expect(`**kwargs: updates=None, theano_func_kwargs=None, on_unused_sources='raise'`)
	tm.exit()
}

// The README and docs/regularization.md quote the same current dropout
// and weight-noise figures.
func TestDropoutFiguresAgree(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := os.ReadFile("../../docs/regularization.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`([0-9.]+%) with dropout \(50 epochs\) vs ([0-9.]+%); ([0-9.]+%) with noise vs ([0-9.]+%)`).FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatal("the README's dropout figures are not where this test looks")
	}
	want := "**" + m[1] + "** with dropout,\n" + m[2] + " without; weight noise after 20 epochs: **" + m[3] + "** with `level=0.05`,\n" + m[4] + " without"
	if !strings.Contains(string(reg), want) {
		t.Errorf("docs/regularization.md's current figures differ from the README's %v", m[1:])
	}
	if !strings.Contains(string(reg), "measured **before** the float32") {
		t.Error("docs/regularization.md's older table is not marked as older")
	}
}
