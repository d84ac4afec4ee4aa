package starlib_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// hashlib against Python's hashlib (Debian's /usr/bin/python3 with numpy):
// bytes, incremental updates, copies and numpy arrays of several dtypes
// (Fuel's tests hash arrays: md5(data).hexdigest()) give the same digests.
func TestHashlibAgainstPython(t *testing.T) {
	// The same expressions, in Starlark and in Python.
	const exprs = `[
 hashlib.md5(b"").hexdigest(),
 hashlib.md5(b"Hello world!").hexdigest(),
 hashlib.sha1(b"abc").hexdigest(),
 hashlib.sha256(b"abc").hexdigest(),
 hashlib.sha512(b"abc").hexdigest(),
 hashlib.new("sha256", b"fuel").hexdigest(),
 hashlib.md5(numpy.arange(24, dtype="uint8").reshape((2, 3, 4))).hexdigest(),
 hashlib.md5(numpy.arange(10, dtype="int64")).hexdigest(),
 hashlib.sha1(numpy.arange(6, dtype="float32") / 7).hexdigest(),
 hashlib.md5(numpy.arange(6, dtype="float64").reshape((3, 2)) - 2.5).hexdigest(),
 hashlib.md5(numpy.arange(30, dtype="uint8").reshape((5, 6))[1:3]).hexdigest(),
 hashlib.md5(b"ab").digest_size, hashlib.sha256().block_size, hashlib.sha1().name,
]`
	const incremental = `
h = hashlib.md5()
h.update(b"Hello ")
c = h.copy()
h.update(b"world!")
c.update(b"there")
out.append(h.hexdigest())
out.append(c.hexdigest())
out.append(h.digest() == hashlib.md5(b"Hello world!").digest())
`
	py := "import json, hashlib, numpy\nout = " + exprs + "\n" + incremental + "print(json.dumps(out))\n"
	raw, err := exec.Command("/usr/bin/python3", "-c", py).Output()
	if err != nil {
		t.Skipf("Debian's python3-numpy is not available (%v)", err)
	}
	var want []any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	hl, _ := all.Library().Lookup("hashlib")
	np, _ := all.Library().Lookup("numpy")
	js, _ := all.Library().Lookup("json")
	script := "out = " + exprs + "\n" + incremental + "encoded = json.encode(out)\n"
	g, err := starlib.ExecFile("hashlib.star", []byte(script), starlib.Options{Library: all.Library(), Predeclared: starlark.StringDict{"hashlib": hl, "numpy": np, "json": js}})
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	if err := json.Unmarshal([]byte(g["encoded"].(starlark.String)), &got); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("Starlark's hashlib: %s\nPython's hashlib:  %s", gb, wb)
	}
}

// hashlib refuses a str as Python 3 does, and data that has no bytes.
func TestHashlibErrors(t *testing.T) {
	for src, want := range map[string]string{
		`md5("text")`:               "Strings must be encoded before hashing",
		`md5([1, 2])`:               "buffer API required",
		`new("crc32", b"")`:         "unsupported hash type crc32",
		`md5(b"").update(None)`:     "buffer API required",
		`md5(b"", b"")`:             "md5: got 2 arguments, want at most 1",
		`sha1(data = "x").digest()`: "Strings must be encoded",
	} {
		_, err := starlib.ExecFile("e.star", []byte(`load("hashlib", "md5", "sha1", "new")
x = `+src+"\n"), starlib.Options{Library: all.Library()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", src, err, want)
		}
	}
}
