package starlib_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// TestSerializationRoundTrip: dump writes a tar whose _parameters member
// numpy reads (checked with /usr/bin/python3, an independent reader) under
// Blocks' mangled names, and load_parameters reads the values back under
// Blocks' hierarchical names.
func TestSerializationRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "params.tar")
	in, err := starlib.NewInterp(starlib.Options{
		Modules:     map[string]*starlarkstruct.Module{"assert": assertModule},
		Predeclared: starlark.StringDict{"PATH": starlark.String(path)}, Library: all.Library(),
	})
	if err != nil {
		t.Fatal(err)
	}
	in.Thread.SetLocal(reporterKey, t)
	_, err = in.ExecFile("serialization.star", []byte(`
load("assert", "assert")
load("blocks.bricks", "MLP", "Tanh")
load("blocks.initialization", "Constant")
load("blocks.serialization", "dump", "load_parameters", unpickle = "load")
mlp = MLP([Tanh()], [3, 2], weights_init=Constant(2), biases_init=Constant(1))
mlp.initialize()
dump(mlp, PATH)
params = load_parameters(PATH)
assert.eq(sorted(params.keys()), ["/mlp/linear_0.W", "/mlp/linear_0.b"])
assert.eq(params["/mlp/linear_0.W"], mlp.linear_transformations[0].W.get_value())
assert.eq(params["/mlp/linear_0.b"], mlp.linear_transformations[0].b.get_value())
assert.fails(lambda: unpickle(PATH), "never")
assert.fails(lambda: dump("a string", PATH), "brick or a Model")
`))
	if err != nil {
		t.Fatal(starlib.Backtrace(err))
	}
	py := "/usr/bin/python3"
	out, err := exec.Command(py, "-c", `
import sys, tarfile, io, numpy
t = tarfile.open(sys.argv[1])
z = numpy.load(io.BytesIO(t.extractfile("_parameters").read()))
for k in sorted(z.files):
    print(k, z[k].shape, float(z[k].sum()))
`, path).CombinedOutput()
	if err != nil {
		t.Skipf("numpy reference unavailable (%s): %v\n%s", py, err, out)
	}
	want := "|mlp|linear_0.W (3, 2) 12.0\n|mlp|linear_0.b (2,) 2.0"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("numpy reads:\n%s\nwant:\n%s", got, want)
	}
}

// TestLoadParametersConfined: a confined run (a resumed checkpoint's
// script) reads parameter files only under its read roots, as every other
// builtin that opens a file a script names.
func TestLoadParametersConfined(t *testing.T) {
	runDir, outside := t.TempDir(), t.TempDir()
	in, err := starlib.NewInterp(starlib.Options{
		Modules:     map[string]*starlarkstruct.Module{"assert": assertModule},
		Predeclared: starlark.StringDict{"OUTSIDE": starlark.String(filepath.Join(outside, "params.tar"))},
		Sandbox:     starlib.Sandbox{Confined: true, RunDir: runDir}, Library: all.Library(),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = in.ExecFile("confined.star", []byte(`
load("assert", "assert")
load("blocks.serialization", "load_parameters")
assert.fails(lambda: load_parameters(OUTSIDE), "outside the directories")
`))
	if err != nil {
		t.Fatal(err)
	}
}
