package starlib_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestExecFilePrintAndGlobals(t *testing.T) {
	var out bytes.Buffer
	g, err := starlib.ExecFile("x.star", []byte("load('tensor', 'matrix')\nx = matrix('x')\nprint(x.type)\nn = 2\n"), starlib.Options{Stdout: &out, FloatX: "float64", Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "TensorType(float64, matrix)\n" {
		t.Errorf("print wrote %q", got)
	}
	if g["n"] != starlark.MakeInt(2) {
		t.Errorf("globals: n = %v", g["n"])
	}
	v, ok := g["x"].(*starlib.Variable)
	if !ok || v.V.Trace != "x.star:2:11" {
		t.Errorf("x = %v, trace %q; want a variable made at x.star:2:11", g["x"], v.V.Trace)
	}
}

// An error in a loaded file is an EvalError whose backtrace goes through
// the load statement into the loaded file.
func TestBacktraceThroughLoad(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"main.star":    "x = 1\nload('sub/lib.star', 'f')\n",
		"sub/lib.star": "def g():\n    return 1 // 0\n\nf = g()\n",
	})
	main := filepath.Join(dir, "main.star")
	_, err := starlib.ExecFile(main, nil, starlib.Options{FloatX: "float32", Library: all.Library()})
	var ev *starlark.EvalError
	if !errors.As(err, &ev) {
		t.Fatalf("got %T %v, want *starlark.EvalError", err, err)
	}
	if _, ok := err.(*starlark.EvalError); !ok {
		t.Errorf("error is %T, want *starlark.EvalError itself", err)
	}
	bt := ev.Backtrace()
	for _, want := range []string{"main.star:2:1: in <toplevel>", "lib.star:4:6: in <toplevel>", "lib.star:2:14: in g", "cannot load sub/lib.star: floored division by zero"} {
		if !strings.Contains(bt, want) {
			t.Errorf("backtrace lacks %q:\n%s", want, bt)
		}
	}
	if starlib.Backtrace(err) != bt {
		t.Errorf("Backtrace(err) = %q, want %q", starlib.Backtrace(err), bt)
	}
}

func TestLoadCachesFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"main.star": "load('a.star', 'x')\nload('b.star', 'y')\n",
		"a.star":    "load('c.star', 'n')\nx = n\n",
		"b.star":    "load('c.star', 'n')\ny = n\n",
		"c.star":    "print('c runs')\nn = 1\n",
	})
	var out bytes.Buffer
	in, err := starlib.NewInterp(starlib.Options{Stdout: &out, FloatX: "float32", Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.ExecFile(filepath.Join(dir, "main.star"), nil); err != nil {
		t.Fatal(err)
	}
	if out.String() != "c runs\n" {
		t.Errorf("c.star ran %q times", out.String())
	}
	var names []string
	for _, f := range in.Loaded() {
		names = append(names, filepath.Base(f))
	}
	if got := strings.Join(names, " "); got != "a.star c.star b.star" {
		t.Errorf("Loaded() = %s", got)
	}
}

func TestUnusedOverride(t *testing.T) {
	src := []byte("load('blocks.config', 'config')\nlr = config.get('learning_rate', 0.1)\n")
	_, err := starlib.ExecFile("x.star", src, starlib.Options{FloatX: "float32", Overrides: map[string]string{"learning_rat": "0.5"}, Library: all.Library()})
	if err == nil || !strings.Contains(err.Error(), "--set learning_rat: the script never reads this setting with config.get (it reads: learning_rate); did you mean learning_rate") {
		t.Errorf("got %v", err)
	}
	g, err := starlib.ExecFile("x.star", src, starlib.Options{FloatX: "float32", Overrides: map[string]string{"learning_rate": "0.5"}, Library: all.Library()})
	if err != nil || g["lr"] != starlark.Float(0.5) {
		t.Errorf("got %v, %v", g["lr"], err)
	}
}

func TestParseOverride(t *testing.T) {
	for text, want := range map[string]string{
		"0.05":        "0.05",
		"-3":          "-3",
		"1e-3":        "0.001",
		"True":        "True",
		"None":        "None",
		`"a b"`:       `"a b"`,
		"[200, 100]":  "[200, 100]",
		"(1, 'x')":    `(1, "x")`,
		"{'a': 1}":    `{"a": 1}`,
		"mnist":       `"mnist"`,
		"len('abc')":  `"len('abc')"`,
		"0.o5":        `"0.o5"`,
		"[1, x]":      `"[1, x]"`,
		"1 + 2":       `"1 + 2"`,
		"/tmp/a.hdf5": `"/tmp/a.hdf5"`,
	} {
		v, err := starlib.ParseOverride(text)
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		got := v.String()
		if s, ok := v.(starlark.String); ok {
			got = s.String()
		}
		if got != want {
			t.Errorf("ParseOverride(%q) = %s, want %s", text, got, want)
		}
	}
}

func TestLibraryParentsAndDynamic(t *testing.T) {
	lib, err := starlib.NewLibrary(&starlarkstruct.Module{Name: "testonly.leaf.deep", Members: starlark.StringDict{
		"answer": starlark.MakeInt(42),
		"fx": &starlib.Dynamic{Name: "fx", Get: func(thread *starlark.Thread) starlark.Value {
			return starlark.String(starlib.FloatX(thread).String())
		}},
		"boom": starlark.NewBuiltin("boom", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			var m map[string]int
			m["x"] = 1 // a nil-map panic, as a buggy builtin would
			return starlark.None, nil
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := lib.Lookup("testonly")
	if !ok {
		t.Fatal("no testonly parent")
	}
	if names := m.AttrNames(); len(names) != 1 || names[0] != "leaf" {
		t.Errorf("testonly members: %v", names)
	}
	if _, ok := lib.Lookup("testonly.nothing"); ok {
		t.Error("Lookup found an undefined module")
	}
	found := false
	for _, n := range lib.Names() {
		found = found || n == "testonly.leaf"
	}
	if !found {
		t.Errorf("Names() lacks the parent testonly.leaf: %v", lib.Names())
	}

	src := `
load("testonly", "leaf")
load("testonly.leaf.deep", "fx")
a = leaf.deep.answer
f = fx
`
	g, err := starlib.ExecFile("x.star", []byte(src), starlib.Options{FloatX: "float64", Library: lib})
	if err != nil {
		t.Fatal(err)
	}
	if g["a"] != starlark.MakeInt(42) || g["f"] != starlark.String("float64") {
		t.Errorf("a = %v, f = %v", g["a"], g["f"])
	}

	_, err = starlib.ExecFile("y.star", []byte("load('testonly.leaf.deep', 'boom')\n\nboom()\n"), starlib.Options{FloatX: "float32", Library: lib})
	var ev *starlark.EvalError
	if !errors.As(err, &ev) {
		t.Fatalf("panic in a builtin: got %v, want an EvalError", err)
	}
	if bt := ev.Backtrace(); !strings.Contains(bt, "y.star:3:5") || !strings.Contains(bt, "internal error in boom: assignment to entry in nil map") {
		t.Errorf("backtrace:\n%s", bt)
	}

	// Without a library, only files load, and the error says why.
	_, err = starlib.ExecFile("z.star", []byte("load('testonly', 'leaf')\n"), starlib.Options{FloatX: "float32"})
	if err == nil || !strings.Contains(err.Error(), "no module library") {
		t.Errorf("load without a Library: %v", err)
	}
}

func TestLibraryRefusesBadNames(t *testing.T) {
	for _, name := range []string{"", "a..b", "x.star", "1abc"} {
		if _, err := starlib.NewLibrary(&starlarkstruct.Module{Name: name}); err == nil {
			t.Errorf("NewLibrary(%q) did not fail", name)
		}
	}
	if _, err := starlib.NewLibrary(nil); err == nil {
		t.Error("NewLibrary(nil) did not fail")
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	in, err := starlib.NewInterp(starlib.Options{Context: ctx, FloatX: "float32", Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := in.ExecFile("loop.star", []byte("while True:\n    pass\n"))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not stop the script")
	}
	if err := starlib.Cancelled(in.Thread); err == nil {
		t.Error("Cancelled(thread) is nil after cancel")
	}
}

func TestExecREPL(t *testing.T) {
	var out bytes.Buffer
	in, err := starlib.NewInterp(starlib.Options{Stdout: &out, FloatX: "float32", Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, step := range []struct{ src, want string }{
		{"load('tensor', 'vector')\n", "None"},
		{"x = vector('x')\n", "None"},
		{"x.ndim + 1\n", "2"},
		{"_ * 10\n", "20"},
		{"def f(a):\n    return a * 3\n", "None"},
		{"f(2)\n", "6"},
		{"(x * 2).eval({x: [1, 2]})\n", "[2., 4.]"},
		{"print('hi')\n", "None"},
	} {
		v, err := in.ExecREPL(ctx, step.src)
		if err != nil {
			t.Fatalf("%q: %v", step.src, err)
		}
		if v.String() != step.want {
			t.Errorf("%q = %s, want %s", step.src, v, step.want)
		}
	}
	if out.String() != "hi\n" {
		t.Errorf("printed %q", out.String())
	}
	// Errors do not end the session; a cancelled chunk does not cancel the
	// next.
	if _, err := in.ExecREPL(ctx, "1 // 0\n"); err == nil {
		t.Error("1 // 0 did not fail")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := in.ExecREPL(cctx, "while True:\n    pass\n"); err == nil {
		t.Error("cancelled chunk ran")
	}
	if v, err := in.ExecREPL(ctx, "f(3)\n"); err != nil || v.String() != "9" {
		t.Errorf("after cancel: %v, %v", v, err)
	}
}

func TestConversions(t *testing.T) {
	x := core.NewInput("x", nd.Float32, 1)
	for _, c := range []struct {
		v     starlark.Value
		dtype string
		ndim  int
	}{
		{&starlib.Variable{V: x}, "float32", 1},
		{starlark.MakeInt(3), "int64", 0},
		{starlark.Float(0.5), "float32", 0},
		{starlark.True, "int64", 0},
		{starlark.NewList([]starlark.Value{starlark.Float(1), starlark.MakeInt(2)}), "float32", 1},
		{starlark.Tuple{starlark.MakeInt(1)}, "int64", 1},
		{&starlib.Array{A: nd.New(nd.Uint8, 2, 2)}, "uint8", 2},
	} {
		v, err := starlib.ToVariable(c.v, nd.Float32)
		if err != nil {
			t.Errorf("%s: %v", c.v, err)
			continue
		}
		if v.DType().String() != c.dtype || v.NDim() != c.ndim {
			t.Errorf("ToVariable(%s) = %s %d-d, want %s %d-d", c.v, v.DType(), v.NDim(), c.dtype, c.ndim)
		}
	}
	if _, err := starlib.ToVariable(starlark.NewDict(0), nd.Float32); err == nil {
		t.Error("ToVariable(dict) did not fail")
	}
	a, err := starlib.ToArray(starlark.NewList([]starlark.Value{
		starlark.Tuple{starlark.MakeInt(1), starlark.MakeInt(2)},
		starlark.Tuple{starlark.MakeInt(3), starlark.MakeInt(4)},
	}), nil)
	if err != nil || a.DType() != nd.Int64 || !nd.SameShape(a.Shape, []int{2, 2}) || a.Flat(3) != 4 {
		t.Errorf("ToArray = %v, %v", a, err)
	}
	if v, ok := starlib.FromArray(a).(*starlib.Array); !ok || v.A != a {
		t.Error("FromArray copied or changed type")
	}
}

func TestLibraryMergesModulesOfOneName(t *testing.T) {
	lib, err := starlib.NewLibrary(
		&starlarkstruct.Module{Name: "testonly.extended", Members: starlark.StringDict{"a": starlark.MakeInt(1)}},
		&starlarkstruct.Module{Name: "testonly.extended", Members: starlark.StringDict{"b": starlark.MakeInt(2)}},
		&starlarkstruct.Module{Name: "testonly.extended", Members: starlark.StringDict{"c": starlark.MakeInt(3)}},
	)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := lib.Lookup("testonly.extended")
	if !ok {
		t.Fatal("module not found")
	}
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := m.Members[k]; !ok {
			t.Errorf("member %s missing: %v", k, m.Members)
		}
	}
	_, err = starlib.NewLibrary(
		&starlarkstruct.Module{Name: "testonly.extended", Members: starlark.StringDict{"a": starlark.MakeInt(1)}},
		&starlarkstruct.Module{Name: "testonly.extended", Members: starlark.StringDict{"a": starlark.MakeInt(4)}},
	)
	if err == nil || !strings.Contains(err.Error(), "defines a twice") {
		t.Errorf("a member defined twice: %v", err)
	}
}
