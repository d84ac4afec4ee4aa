package nd

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// ShapeString writes shapes as Python's repr of a tuple, as numpy's
// .shape prints: a one-element tuple keeps its comma.
func TestShapeString(t *testing.T) {
	for _, c := range []struct {
		shape []int
		want  string
	}{
		{nil, "()"},
		{[]int{}, "()"},
		{[]int{5}, "(5,)"},
		{[]int{0}, "(0,)"},
		{[]int{256, 784}, "(256, 784)"},
		{[]int{2, 3, 4, 5}, "(2, 3, 4, 5)"},
	} {
		if got := ShapeString(c.shape); got != c.want {
			t.Errorf("ShapeString(%v) = %q, want %q", c.shape, got, c.want)
		}
	}
}

// TupleString writes formatted items as Python's repr of a tuple: str()
// of tuple(items) for items that are themselves reprs.
func TestTupleString(t *testing.T) {
	for _, c := range []struct {
		items []string
		want  string
	}{
		{nil, "()"},
		{[]string{}, "()"},
		{[]string{"'train'"}, "('train',)"},
		{[]string{"'train'", "'test'"}, "('train', 'test')"},
		{[]string{"None", "3", "None"}, "(None, 3, None)"},
		{[]string{"None"}, "(None,)"},
	} {
		if got := TupleString(c.items); got != c.want {
			t.Errorf("TupleString(%q) = %q, want %q", c.items, got, c.want)
		}
	}
}

// ShapeString and TupleString print what numpy and Python print: the
// .shape of numpy arrays, and repr of tuples of strings, None and ints.
func TestTupleStringMatchesPython(t *testing.T) {
	const python = "/usr/bin/python3" // Debian's python3 with python3-numpy
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is not available (%v); TestShapeString and TestTupleString cover the notation alone", python, err)
	}
	shapes := [][]int{{}, {5}, {0}, {256, 784}, {2, 3, 4, 5}}
	items := [][]string{{}, {"'train'"}, {"'train'", "'test'"}, {"None"}, {"None", "3", "None"}}
	in, err := json.Marshal(map[string]any{"shapes": shapes, "items": items})
	if err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys, numpy as np
c = json.loads(sys.argv[1])
for s in c["shapes"]:
    print(repr(np.zeros(s).shape))
for i in c["items"]:
    print(repr(tuple(eval(x) for x in i)))
`
	out, err := exec.Command(python, "-c", script, string(in)).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	var got []string
	for _, s := range shapes {
		got = append(got, ShapeString(s))
	}
	for _, i := range items {
		got = append(got, TupleString(i))
	}
	if want := strings.TrimSpace(string(out)); strings.Join(got, "\n") != want {
		t.Errorf("got\n%s\npython printed\n%s", strings.Join(got, "\n"), want)
	}
}
