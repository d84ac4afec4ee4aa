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

// numpy.save and numpy.load against Debian's numpy: what a script saves,
// numpy loads with the same dtype, shape and values, and what numpy saves,
// the script loads.
func TestNumpySaveLoadAgainstNumpy(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err != nil {
		t.Skipf("/usr/bin/python3 with numpy is needed: %v", err)
	}
	dir := t.TempDir()
	_, err := starlib.ExecFile(filepath.Join(dir, "s.star"), []byte(`
load("numpy", "arange", "save")
save(D + "/a", arange(24).reshape((2, 3, 4)))
save(D + "/b.npy", (arange(6, dtype = "float32") / 4).reshape((3, 2)))
save(D + "/c.npy", arange(5, dtype = "uint8"))
`), starlib.Options{Library: all.Library(), Predeclared: starlark.StringDict{"D": starlark.String(dir)}})
	if err != nil {
		t.Fatal(err)
	}
	py := `import sys, numpy
d = sys.argv[1]
for n in "abc":
    a = numpy.load(d + "/" + n + ".npy")
    print(a.dtype, a.shape, a.ravel().tolist())
numpy.save(d + "/p.npy", numpy.arange(12, dtype="int32").reshape(4, 3) * -3)
numpy.save(d + "/q.npy", numpy.linspace(0, 1, 5))
`
	out, err := exec.Command("/usr/bin/python3", "-c", py, dir).Output()
	if err != nil {
		t.Fatalf("numpy: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "int64 (2, 3, 4) [0, 1, 2,") || !strings.HasSuffix(lines[0], "23]") ||
		lines[1] != "float32 (3, 2) [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]" || lines[2] != "uint8 (5,) [0, 1, 2, 3, 4]" {
		t.Errorf("numpy loads what the script saved as\n%s", out)
	}
	in, err := starlib.NewInterp(starlib.Options{Library: all.Library(), Modules: map[string]*starlarkstruct.Module{"assert": assertModule}, Predeclared: starlark.StringDict{"D": starlark.String(dir)}})
	if err != nil {
		t.Fatal(err)
	}
	in.Thread.SetLocal(reporterKey, t)
	if _, err := in.ExecFile(filepath.Join(dir, "l.star"), []byte(`
load("assert", "assert")
load("numpy", np_load = "load")
p = np_load(D + "/p.npy")
assert.eq((str(p.dtype), p.shape), ("int32", (4, 3)))
assert.eq(p.tolist(), [[0, -3, -6], [-9, -12, -15], [-18, -21, -24], [-27, -30, -33]])
q = np_load(D + "/q.npy")
assert.eq((str(q.dtype), q.tolist()), ("float64", [0.0, 0.25, 0.5, 0.75, 1.0]))
assert.fails(lambda: np_load(D + "/none.npy"), "no such file")
`)); err != nil {
		t.Fatal(err)
	}
}
