package starlib_test

import (
	"errors"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// TestSelfContainingValuesRefused (issue 32, item 3): a list that
// contains itself, or values nested millions deep, sent shape inference
// and go.starlark.net's JSON decoder into unbounded recursion until Go's
// 1 GB stack overflowed: a fatal error no recover catches, so on the old
// code this test binary itself dies. Each is now an error at the line.
func TestSelfContainingValuesRefused(t *testing.T) {
	pre := "load(\"numpy\", \"array\")\nload(\"json\", \"decode\", \"encode\")\n" +
		"load(\"fuel.datasets\", \"IndexableDataset\")\nload(\"blocks.config\", \"config\")\n" +
		"l = []\nl.append(l)\ndeep = []\nfor i in range(3000):\n    deep = [deep]\n"
	for _, c := range []struct{ name, expr, want string }{
		{"array-cycle", "array(l)", "contains itself"},
		{"array-cycle-inner", "array([l, l])", "contains itself"},
		{"array-deep", "array(deep)", "nested more than 1000 deep"},
		{"indexable-cycle", "IndexableDataset({\"x\": [l, l]})", "does a list contain itself"},
		{"json-decode-deep", "decode(\"[\" * 5000000 + \"]\" * 5000000)", "nested more than 1000 deep"},
		{"json-decode-deep-object", "decode(\"{\\\"a\\\":\" * 2000 + \"1\" + \"}\" * 2000)", "nested more than 1000 deep"},
		{"json-encode-cycle", "encode(l)", "nested more than 1000 deep"},
		{"config-cycle", "config(x = l)", "contains itself"},
		{"config-deep", "config(x = deep)", "nested more than 1000 deep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := pre + "r = " + c.expr + "\n"
			_, err := starlib.ExecFile("nest.star", []byte(src), starlib.Options{FloatX: "float32",
				Stdout: &strings.Builder{}, Library: all.Library()})
			if err == nil {
				t.Fatalf("%s: no error", c.expr)
			}
			msg := err.Error()
			var ee *starlark.EvalError
			if errors.As(err, &ee) {
				msg = ee.Backtrace()
			}
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, "nest.star:10") || strings.Contains(msg, "internal error") {
				t.Errorf("%s: want an error at nest.star:10 with %q, got:\n%s", c.expr, c.want, msg)
			}
		})
	}
	// What is not too deep still works, and a default still answers for
	// an input refused as too deep. Brackets inside strings do not count.
	src := "load(\"json\", \"decode\")\nload(\"numpy\", \"array\")\n" +
		"a = decode(\"[\" * 1000 + \"]\" * 1000)\nb = decode(\"[\" * 1001 + \"]\" * 1001, default = 7)\n" +
		"c = decode('[\"' + \"[\" * 5000 + '\"]')\nd = array([[[1, 2]], [[3, 4]]]).shape\n"
	g, err := starlib.ExecFile("ok.star", []byte(src), starlib.Options{FloatX: "float32", Stdout: &strings.Builder{}, Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	if g["b"].String() != "7" || g["d"].String() != "(2, 1, 2)" || !strings.HasPrefix(g["a"].String(), "[[[") ||
		g["c"].String() != "[\""+strings.Repeat("[", 5000)+"\"]" {
		t.Errorf("a=%.20s b=%s c=%.20s d=%s", g["a"], g["b"], g["c"], g["d"])
	}
}
