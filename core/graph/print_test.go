package graph

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
)

func TestPrintAndDOT(t *testing.T) {
	m := newMLP2(t)
	var b strings.Builder
	if err := m.g.Print(&b, map[string][]int{"x": {6, 3}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"ComputationGraph: ", "W1", "shared", "(3, 4)", "[WEIGHT]", "h2", "(6, 5)", "input", "OUTPUT OF GRAPH"} {
		if !strings.Contains(out, want) {
			t.Errorf("printed graph lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := m.g.WriteDOT(&b, nil); err != nil {
		t.Fatal(err)
	}
	dot := b.String()
	if !strings.HasPrefix(dot, "digraph ComputationGraph {") || !strings.Contains(dot, "->") || !strings.Contains(dot, "WEIGHT") {
		t.Errorf("DOT output:\n%s", dot)
	}
	// Graphviz, when installed, must accept it.
	if path, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command(path, "-Tsvg")
		cmd.Stdin = strings.NewReader(dot)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("dot rejects the output: %v\n%s", err, out)
		}
	}
	_ = core.Weight
}
