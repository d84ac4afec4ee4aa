package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const graphScript = `
load("tensor", "matrix")
load("blocks.bricks", "MLP", "Tanh")
load("blocks.graph", "ComputationGraph")
x = matrix("features")
mlp = MLP([Tanh()], [3, 2])
cg = ComputationGraph(mlp.apply(x))
`

func TestGraphCommand(t *testing.T) {
	script := writeScript(t, "model.star", graphScript)
	code, out, errOut := runBinary(t, "", "graph", "--shape", "features=5,3", script)
	if code != 0 || !strings.Contains(out, "(5, 2)") || !strings.Contains(out, "[WEIGHT]") {
		t.Fatalf("graph: code %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runBinary(t, "", "graph", "--var", "mlp", script)
	if code != 0 || !strings.Contains(out, "Linear linear_0 (allocated)") {
		t.Errorf("brick tree: code %d\n%s", code, out)
	}
	dot := filepath.Join(t.TempDir(), "g.dot")
	if code, _, errOut := runBinary(t, "", "graph", "--dot", dot, script); code != 0 {
		t.Fatalf("--dot: %d %s", code, errOut)
	}
	b, err := os.ReadFile(dot)
	if err != nil || !strings.HasPrefix(string(b), "digraph ComputationGraph {") {
		t.Errorf("DOT file: %v\n%s", err, b)
	}
	code, _, errOut = runBinary(t, "", "graph", "--var", "nope", script)
	if code != 1 || !strings.Contains(errOut, "no global nope") || !strings.Contains(errOut, "cg, mlp, x") {
		t.Errorf("unknown var: %d %s", code, errOut)
	}
}
