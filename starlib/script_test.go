package starlib_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// TestScripts runs the golden scripts testdata/*.star, in the style of
// go.starlark.net's own tests: a file holds chunks separated by lines
// "---", each run on its own; a comment ### "regexp" on a line says that
// the chunk fails at that line with an error matching regexp (a chunk may
// have one such line); scripts check values with the assert module
// (assert.eq, ne, true, fails, close, contains, array_equal, warns;
// assert.tempdir() gives a new empty directory). Lines
// "# option:floatX=float64", "# option:set NAME=VALUE" and "# option:env NAME=VALUE"
// in a chunk set the run's floatX, overrides and an environment variable ($VARS in
// VALUE expanded: Fuel's MNIST tests find their data with
// "# option:fixture mnist" and env FUEL_DATA_PATH=$TEST_TMPDIR; $TEST_TMPDIR
// is a new empty directory of the chunk's own). "# option:fixture NAME" writes a
// generated fixture into $TEST_TMPDIR first (upstream_fixtures_test.go:
// the fake files an upstream setUp writes that are too large to keep in
// testdata).
// Files loaded by the chunks live in subdirectories of testdata.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.star")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			for _, c := range readChunks(t, file) {
				runChunk(t, c)
			}
		})
	}
}

type chunk struct {
	file      string
	source    string
	firstLine int
	wants     map[int]*regexp.Regexp // line -> expected error
	floatX    string
	overrides map[string]string
	env       map[string]string // environment variables set for the chunk
	serve     string            // a script whose global stream a data server serves during the chunk
	fixtures  []string          // fixture generators run into $TEST_TMPDIR first (upstream_fixtures_test.go)
}

var wantRE = regexp.MustCompile(`###\s*(.*)$`)

func readChunks(t *testing.T, file string) []*chunk {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var chunks []*chunk
	start := 0
	flush := func(end int) {
		c := &chunk{file: file, firstLine: start + 1, wants: map[int]*regexp.Regexp{}, floatX: "float32", overrides: map[string]string{}}
		var b strings.Builder
		for i := 0; i < start; i++ {
			b.WriteByte('\n') // keep line numbers
		}
		for i := start; i < end; i++ {
			line := lines[i]
			b.WriteString(line)
			b.WriteByte('\n')
			if m := wantRE.FindStringSubmatch(line); m != nil {
				// The pattern is written between double quotes, which are
				// stripped (nothing is unescaped: write regexps as is).
				pat := strings.TrimSpace(m[1])
				if len(pat) >= 2 && pat[0] == '"' && pat[len(pat)-1] == '"' {
					pat = pat[1 : len(pat)-1]
				}
				re, err := regexp.Compile(pat)
				if err != nil {
					t.Fatalf("%s:%d: bad regexp: %v", file, i+1, err)
				}
				c.wants[i+1] = re
			}
			if opt, ok := strings.CutPrefix(strings.TrimSpace(line), "# option:"); ok {
				switch {
				case strings.HasPrefix(opt, "floatX="):
					c.floatX = strings.TrimPrefix(opt, "floatX=")
				case strings.HasPrefix(opt, "set "):
					k, v, _ := strings.Cut(strings.TrimPrefix(opt, "set "), "=")
					c.overrides[k] = v
				case strings.HasPrefix(opt, "fixture "):
					c.fixtures = append(c.fixtures, strings.TrimSpace(strings.TrimPrefix(opt, "fixture ")))
				case strings.HasPrefix(opt, "serve "):
					c.serve = strings.TrimSpace(strings.TrimPrefix(opt, "serve "))
				case strings.HasPrefix(opt, "env "):
					k, v, _ := strings.Cut(strings.TrimPrefix(opt, "env "), "=")
					if c.env == nil {
						c.env = map[string]string{}
					}
					c.env[k] = v
				default:
					t.Fatalf("%s:%d: unknown option %q", file, i+1, opt)
				}
			}
		}
		c.source = b.String()
		chunks = append(chunks, c)
	}
	for i, line := range lines {
		if line == "---" {
			flush(i)
			start = i + 1
		}
	}
	flush(len(lines))
	return chunks
}

// runChunk runs one chunk and checks its error against its wants.
func runChunk(t *testing.T, c *chunk) {
	// $TEST_TMPDIR is a directory of the chunk's own, for an option such
	// as "# option:env FUEL_DATA_PATH=$TEST_TMPDIR" (a test that writes
	// its data files where the dataset classes look).
	t.Setenv("TEST_TMPDIR", t.TempDir())
	for _, name := range c.fixtures {
		makeFixture(t, c, name, os.Getenv("TEST_TMPDIR"))
	}
	for k, v := range c.env {
		t.Setenv(k, os.ExpandEnv(v))
	}
	if c.serve != "" {
		serveForChunk(t, c)
	}
	var out bytes.Buffer
	opts := starlib.Options{
		Stdout:    &out,
		FloatX:    c.floatX,
		Overrides: c.overrides,
		Modules:   map[string]*starlarkstruct.Module{"assert": assertModule}, Library: all.Library(),
	}
	in, err := starlib.NewInterp(opts)
	if err != nil {
		t.Fatalf("%s:%d: %v", c.file, c.firstLine, err)
	}
	in.Thread.SetLocal(reporterKey, t)
	_, err = in.ExecFile(c.file, []byte(c.source))
	if err == nil {
		err = in.CheckOverrides()
	}
	got := map[int]string{}
	if err != nil {
		line, msg := errorLine(c.file, err)
		if line == 0 {
			t.Errorf("%s (chunk at line %d): unexpected error: %v", c.file, c.firstLine, starlib.Backtrace(err))
		} else {
			got[line] = msg
		}
	}
	for line, msg := range got {
		re, ok := c.wants[line]
		if !ok {
			t.Errorf("%s:%d: unexpected error: %s", c.file, line, msg)
			continue
		}
		if !re.MatchString(msg) {
			t.Errorf("%s:%d: error %q does not match %q", c.file, line, msg, re)
		}
	}
	for line, re := range c.wants {
		if _, ok := got[line]; !ok {
			t.Errorf("%s:%d: expected an error matching %q, got none", c.file, line, re)
		}
	}
}

// errorLine is the line of the chunk's file an error is reported at: the
// outermost frame in the file for an evaluation error.
func errorLine(file string, err error) (int, string) {
	var ev *starlark.EvalError
	if errors.As(err, &ev) {
		for _, fr := range ev.CallStack {
			if fr.Pos.Filename() == file {
				return int(fr.Pos.Line), ev.Msg
			}
		}
		return 0, ev.Msg
	}
	var se syntax.Error
	if errors.As(err, &se) {
		return int(se.Pos.Line), se.Msg
	}
	var re resolve.ErrorList
	if errors.As(err, &re) && len(re) > 0 {
		return int(re[0].Pos.Line), re[0].Msg
	}
	return 0, err.Error()
}

const reporterKey = "test.reporter"

// assertModule is the golden scripts' assert module, used as
// load("assert", "assert"); assert.eq(x, y). A failed assertion is
// reported to the test (with the script position) and execution goes on,
// as with go.starlark.net's assert.
var assertModule = &starlarkstruct.Module{
	Name:    "assert",
	Members: starlark.StringDict{"assert": assertFuncs},
}

var assertFuncs = &starlarkstruct.Module{
	Name: "assert",
	Members: starlark.StringDict{
		"eq":    starlark.NewBuiltin("eq", assertEq),
		"ne":    starlark.NewBuiltin("ne", assertEq),
		"true":  starlark.NewBuiltin("true", assertTrue),
		"fails": starlark.NewBuiltin("fails", assertFails),
		"close": starlark.NewBuiltin("close", assertClose),
		// allclose is numpy.testing.assert_allclose(a, b, rtol=1e-7,
		// atol=0): |a - b| <= atol + rtol * |b| elementwise.
		"allclose": starlark.NewBuiltin("allclose", assertAllclose),
		"contains": starlark.NewBuiltin("contains", assertContains),
		// array_equal is numpy.testing.assert_equal: see assertArrayEqual.
		"array_equal": starlark.NewBuiltin("array_equal", assertArrayEqual),
		"warns":       starlark.NewBuiltin("warns", assertWarns),
		// tempdir() is a new empty directory, removed after the test
		// (Python's tempfile.mkdtemp in the ported tests).
		"tempdir": starlark.NewBuiltin("tempdir", assertTempdir),
	},
}

func report(thread *starlark.Thread, format string, args ...any) {
	t := thread.Local(reporterKey).(*testing.T)
	t.Helper()
	pos := "?"
	for d := 0; d < thread.CallStackDepth(); d++ {
		if p := thread.CallFrame(d).Pos; p.Filename() != "<builtin>" {
			pos = p.String()
			break
		}
	}
	t.Errorf("%s: %s", pos, fmt.Sprintf(format, args...))
}

func assertEq(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &x, &y); err != nil {
		return nil, err
	}
	eq, err := starlib.Equal(x, y) // a script's ==
	if err != nil {
		return nil, err
	}
	if b.Name() == "eq" && !eq {
		report(thread, "%s != %s", x, y)
	}
	if b.Name() == "ne" && eq {
		report(thread, "%s == %s", x, y)
	}
	return starlark.None, nil
}

func assertTrue(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cond starlark.Value
	msg := "assertion failed"
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &cond, &msg); err != nil {
		return nil, err
	}
	if !cond.Truth() {
		report(thread, "%s", msg)
	}
	return starlark.None, nil
}

func assertContains(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &x, &y); err != nil {
		return nil, err
	}
	if s, ok := x.(starlark.String); ok {
		if sub, ok := y.(starlark.String); ok {
			if !strings.Contains(string(s), string(sub)) {
				report(thread, "%q does not contain %q", s, sub)
			}
			return starlark.None, nil
		}
	}
	if m, ok := x.(starlark.Mapping); ok { // a dict: its keys
		_, found, err := m.Get(y)
		if err != nil {
			return nil, err
		}
		if !found {
			report(thread, "%s does not contain %s", x, y)
		}
		return starlark.None, nil
	}
	c, ok := x.(starlark.Container)
	if !ok {
		return nil, fmt.Errorf("contains: %s is not a container", x.Type())
	}
	found, err := c.Has(y)
	if err != nil {
		return nil, err
	}
	if !found {
		report(thread, "%s does not contain %s", x, y)
	}
	return starlark.None, nil
}

func assertFails(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Callable
	var pattern string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &fn, &pattern); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	_, err = starlark.Call(thread, fn, nil, nil)
	if err != nil {
		// A stream error met inside a for loop or list() cancels the
		// thread (Starlark iterators cannot return errors); the failure
		// is caught here, as Python's try/except would catch it.
		thread.Uncancel()
	}
	switch {
	case err == nil:
		report(thread, "evaluation succeeded unexpectedly (want error matching %q)", pattern)
	case !re.MatchString(err.Error()):
		report(thread, "error %q does not match %q", err.Error(), pattern)
	}
	return starlark.None, nil
}

// assertWarns calls fn and checks that what it prints (Blocks' warnings
// are printed lines "WARNING: ...") matches pattern; the printed text is
// not passed on.
func assertTempdir(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	t := thread.Local(reporterKey).(*testing.T)
	return starlark.String(t.TempDir()), nil
}

func assertWarns(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Callable
	var pattern string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &fn, &pattern); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	print := thread.Print
	var printed strings.Builder
	thread.Print = func(_ *starlark.Thread, msg string) { printed.WriteString(msg + "\n") }
	_, err = starlark.Call(thread, fn, nil, nil)
	thread.Print = print
	if err != nil {
		return nil, err
	}
	if !re.MatchString(printed.String()) {
		report(thread, "printed %q, want a warning matching %q", printed.String(), pattern)
	}
	return starlark.None, nil
}

// assertClose checks numbers, arrays or nested lists of equal shape for
// |a - b| <= tol * max(1, |b|) elementwise.
func assertClose(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	tol := starlib.FloatArg(1e-6)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &x, "b", &y, "tol?", &tol); err != nil {
		return nil, err
	}
	return closeElements(thread, x, y, func(q float64) float64 { return float64(tol) * max(1, abs(q)) })
}

func assertAllclose(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	rtol, atol := starlib.FloatArg(1e-7), starlib.FloatArg(0)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &x, "b", &y, "rtol?", &rtol, "atol?", &atol); err != nil {
		return nil, err
	}
	return closeElements(thread, x, y, func(q float64) float64 { return float64(atol) + float64(rtol)*abs(q) })
}

// closeElements reports the first element of x farther than allowed(y's
// element) from y's.
func closeElements(thread *starlark.Thread, x, y starlark.Value, allowed func(q float64) float64) (starlark.Value, error) {
	f64 := nd.Float64
	a, err := starlib.ToArray(x, &f64)
	if err != nil {
		return nil, fmt.Errorf("close: a: %v", err)
	}
	c, err := starlib.ToArray(y, &f64)
	if err != nil {
		return nil, fmt.Errorf("close: b: %v", err)
	}
	// A single value (a number, a 1-element array) is compared with every
	// element of the other side, as numpy.testing.assert_allclose
	// broadcasts it.
	ai, ci := func(i int) int { return i }, func(i int) int { return i }
	n := a.Size()
	if !nd.SameShape(a.Shape, c.Shape) {
		switch {
		case c.Size() == 1:
			ci = func(int) int { return 0 }
		case a.Size() == 1:
			ai, n = func(int) int { return 0 }, c.Size()
		default:
			report(thread, "shapes differ: %v and %v", a.Shape, c.Shape)
			return starlark.None, nil
		}
	}
	for i := 0; i < n; i++ {
		p, q := a.Flat(ai(i)), c.Flat(ci(i))
		if !(abs(p-q) <= allowed(q)) {
			report(thread, "not close (allowed %g): element %d: %v vs %v (relative %.3g)\n%s\n%s", allowed(q), i, p, q, abs(p-q)/abs(q), x, y)
			break
		}
	}
	return starlark.None, nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// assertArrayEqual is numpy.testing.assert_equal(actual, desired), as
// Fuel's and Blocks' tests use it: dicts key by key, lists and tuples
// (either kind) element by element, an ndarray as its nested lists
// (tolist), numbers by value (1 == 1.0; nan equals nan), anything else
// with ==. It lets a port compare a batch of arrays with the plain
// values a Python test writes.
func assertArrayEqual(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &x, &y); err != nil {
		return nil, err
	}
	if msg := valuesDiffer(x, y, ""); msg != "" {
		report(thread, "not equal: %s\n actual: %s\ndesired: %s", msg, x, y)
	}
	return starlark.None, nil
}

// valuesDiffer says where x and y differ ("" when they are equal in
// numpy.testing.assert_equal's sense); path locates the difference.
func valuesDiffer(x, y starlark.Value, path string) string {
	if s, ok := x.(*starlib.Scalar); ok {
		x = s.Number()
	}
	if s, ok := y.(*starlib.Scalar); ok {
		y = s.Number()
	}
	if a, ok := x.(*starlib.Array); ok {
		x = starlib.ToList(a.A, 0, 0)
	}
	if a, ok := y.(*starlib.Array); ok {
		y = starlib.ToList(a.A, 0, 0)
	}
	if dx, ok := x.(*starlark.Dict); ok {
		dy, ok := y.(*starlark.Dict)
		if !ok {
			return fmt.Sprintf("%s: dict vs %s", path, y.Type())
		}
		if dx.Len() != dy.Len() {
			return fmt.Sprintf("%s: %d keys vs %d", path, dx.Len(), dy.Len())
		}
		for _, kv := range dx.Items() {
			v, found, err := dy.Get(kv[0])
			if err != nil || !found {
				return fmt.Sprintf("%s: key %s missing", path, kv[0])
			}
			if msg := valuesDiffer(kv[1], v, fmt.Sprintf("%s[%s]", path, kv[0])); msg != "" {
				return msg
			}
		}
		return ""
	}
	sx, okx := x.(starlark.Indexable)
	sy, oky := y.(starlark.Indexable)
	_, strx := x.(starlark.String)
	_, stry := y.(starlark.String)
	if okx && oky && !strx && !stry {
		if sx.Len() != sy.Len() {
			return fmt.Sprintf("%s: length %d vs %d", path, sx.Len(), sy.Len())
		}
		for i := 0; i < sx.Len(); i++ {
			if msg := valuesDiffer(sx.Index(i), sy.Index(i), fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return msg
			}
		}
		return ""
	}
	if fx, ok := starlark.AsFloat(x); ok {
		if _, isBool := x.(starlark.Bool); !isBool {
			if fy, ok := starlark.AsFloat(y); ok {
				if fx == fy || fx != fx && fy != fy {
					return ""
				}
				return fmt.Sprintf("%s: %s vs %s", path, x, y)
			}
		}
	}
	if eq, err := starlark.Equal(x, y); err != nil || !eq {
		return fmt.Sprintf("%s: %s vs %s", path, x, y)
	}
	return ""
}
