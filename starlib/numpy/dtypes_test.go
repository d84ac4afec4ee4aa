package numpy_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	"github.com/blocks-go/blocks/starlib/numpy"
)

// unaryOps are expressions of one array a (and b, of the same dtype),
// written so that Python with numpy and Starlark with this module read
// them alike: every op the numpy module and the ndarray value expose.
// Starlark has no elementwise comparison of arrays (its comparisons give
// a bool) and no multi-axis subscript a[:, 1]; tensor variables have
// both, tested in package starlib/tensor.
var unaryOps = []string{
	"a.T", "np.transpose(a)", "np.transpose(a, (1, 0))", "a.reshape((3, 2))", "np.reshape(a, (6,))",
	"a.flatten()", "a.copy()", "np.array(a)", "np.asarray(a)",
	"a[1]", "a[::-1]", "a[1:]", "a[1, 2]", "a[-1]", "a[0][1]",
	"np.concatenate([a, b])", "np.concatenate([a, b], axis=1)", "np.tile(a, (2, 1))", "np.tile(a, 2)",
	"a.sum()", "a.sum(axis=0)", "np.sum(a, axis=1)", "a.max()", "a.max(axis=1)", "a.min(axis=0)", "np.min(a)",
	"a.argmax()", "a.argmax(axis=1)", "a.argmin(axis=0)", "np.argmax(a, axis=0)", "a.prod(axis=0)",
	"a.mean()", "a.mean(axis=0)", "a.std()", "a.var(axis=1)", "a.all()", "a.any(axis=0)",
	"a + b", "a - b", "a * b", "a / b", "-a",
	"a + 1", "a * 2", "3 - a", "a / 2", "a + 0.5", "a * 1.5",
	"np.maximum(a, b)", "np.minimum(a, b)", "np.abs(a)", "np.exp(a)", "np.sqrt(a)", "np.isnan(a)",
	"np.zeros_like(a)", "np.ones_like(a)", "np.dot(a, b.T)", "np.dot(a[0], b[1])",
	"np.allclose(a, b)", "np.array_equal(a, a)", "a.tolist()", "a[1].tolist()",
	"np.zeros((2, 2), dtype=D)", "np.ones(3, dtype=D)", "np.arange(4, dtype=D)",
}

// binaryOps are expressions of a and c, arrays of two dtypes.
var binaryOps = []string{"a + c", "a * c", "np.maximum(a, c)", "np.concatenate([a, c])", "a.astype(E)"}

// dtypeCase is one expression in one or two dtypes.
type dtypeCase struct {
	Expr string `json:"expr"`
	D    string `json:"d"`
	E    string `json:"e"`
}

// dtypeResult is what an expression gives: an error, a number, or an
// array's dtype, shape and values.
type dtypeResult struct {
	Err    string    `json:"err,omitempty"`
	Scalar bool      `json:"scalar,omitempty"`
	DType  string    `json:"dtype,omitempty"`
	Shape  []int     `json:"shape,omitempty"`
	Values []float64 `json:"values,omitempty"`
}

// dtypePrelude makes a and b of dtype D and c of dtype E, with values
// every dtype holds (b has a zero, so a / b divides by zero).
const dtypePrelude = `a = np.array([[1, 2, 3], [4, 5, 6]], dtype=D)
b = np.array([[3, 2, 1], [6, 0, 4]], dtype=D)
c = np.array([[2, 2, 7], [1, 9, 0]], dtype=E)
`

const dtypePython = `
import sys, json, warnings
import numpy as np
warnings.simplefilter("ignore")
out = []
for case in json.load(open(sys.argv[1])):
    env = {"np": np, "D": case["d"], "E": case["e"]}
    try:
        exec(` + "`PRELUDE`" + `, env)
        r = eval(case["expr"], env)
    except Exception as e:
        out.append({"err": type(e).__name__ + ": " + str(e)})
        continue
    if isinstance(r, list):
        r = np.array(r)
    if isinstance(r, np.ndarray):
        out.append({"dtype": str(r.dtype), "shape": list(r.shape), "values": [repr(float(v)) for v in r.ravel()]})
    else:
        out.append({"scalar": True, "values": [repr(float(r))]})
json.dump(out, sys.stdout)
`

// numpyDTypes are the dtypes that numpy and this module both have: nd's
// numeric ones.
func numpyDTypes() []string {
	var out []string
	for _, d := range nd.NumericDTypes() {
		out = append(out, d.String())
	}
	return out
}

// TestEveryDTypeEveryOpMatchesNumpy enumerates (dtype x op): each numeric
// dtype of package nd with each array operation of the numpy module, and
// each pair of dtypes with the mixed-dtype operations, against Debian's
// numpy. Each combination gives numpy's dtype, shape and values, or an
// error that names the dtype; never a silent wrong result (int16 arrays
// once transposed to zeros).
func TestEveryDTypeEveryOpMatchesNumpy(t *testing.T) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is the reference: %v", py, err)
	}
	dts := numpyDTypes()
	var cases []dtypeCase
	for _, d := range dts {
		for _, op := range unaryOps {
			cases = append(cases, dtypeCase{op, d, d})
		}
		for _, e := range dts {
			for _, op := range binaryOps {
				cases = append(cases, dtypeCase{op, d, e})
			}
		}
	}
	want := numpyResults(t, py, cases)
	np := npStruct()
	bad := 0
	for i, c := range cases {
		got := evalCase(np, c)
		if msg := compareResult(c, got, want[i]); msg != "" {
			bad++
			if bad <= 400 {
				t.Errorf("%s with D=%s E=%s: %s", c.Expr, c.D, c.E, msg)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d (dtype x op) cases differ from numpy", bad, len(cases))
	}
}

func numpyResults(t *testing.T, py string, cases []dtypeCase) []dtypeResult {
	t.Helper()
	file := filepath.Join(t.TempDir(), "cases.json")
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFile(file, b); err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(dtypePython, "`PRELUDE`", fmt.Sprintf("%q", dtypePrelude), 1)
	out, err := exec.Command(py, "-c", script, file).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("numpy: %v\n%s", err, msg)
	}
	// Values come as Python's repr, which writes nan and inf as Go
	// parses them (JSON has no NaN).
	var raw []struct {
		dtypeResult
		Values []string `json:"values"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("numpy's output: %v", err)
	}
	res := make([]dtypeResult, len(raw))
	for i, r := range raw {
		res[i] = r.dtypeResult
		for _, v := range r.Values {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("numpy's value %q: %v", v, err)
			}
			res[i].Values = append(res[i].Values, f)
		}
	}
	if len(res) != len(cases) {
		t.Fatalf("numpy gave %d results for %d cases", len(res), len(cases))
	}
	return res
}

// npStruct is the numpy module as one value, np.
func npStruct() starlark.Value {
	members := starlark.StringDict{}
	for _, m := range numpy.Modules() {
		if m.Name == "numpy" {
			for k, v := range m.Members {
				members[k] = v
			}
		}
	}
	return &starlarkstruct.Module{Name: "numpy", Members: members}
}

func evalCase(np starlark.Value, c dtypeCase) (res dtypeResult) {
	defer func() {
		if r := recover(); r != nil {
			res = dtypeResult{Err: fmt.Sprintf("panic: %v", r)}
		}
	}()
	g, err := starlib.ExecFile("case.star", []byte(dtypePrelude+"r = "+c.Expr+"\n"), starlib.Options{
		Library:     all.Library(),
		Predeclared: starlark.StringDict{"np": np, "D": starlark.String(c.D), "E": starlark.String(c.E)},
	})
	if err != nil {
		return dtypeResult{Err: err.Error()}
	}
	r := g["r"]
	if l, ok := r.(*starlark.List); ok {
		a, err := starlib.ToArray(l, nil)
		if err != nil {
			return dtypeResult{Err: err.Error()}
		}
		r = starlib.FromArray(a)
	}
	switch v := r.(type) {
	case *starlib.Array:
		return dtypeResult{DType: v.A.DType().String(), Shape: slices.Clone(v.A.Shape), Values: v.A.Float64s()}
	case starlark.Int:
		f, _ := starlark.AsFloat(v)
		return dtypeResult{Scalar: true, Values: []float64{f}}
	case starlark.Float:
		return dtypeResult{Scalar: true, Values: []float64{float64(v)}}
	case starlark.Bool:
		f := 0.0
		if v {
			f = 1
		}
		return dtypeResult{Scalar: true, Values: []float64{f}}
	}
	return dtypeResult{Err: fmt.Sprintf("result of type %s", r.Type())}
}

// compareResult says how got differs from numpy's want ("" when it
// does not): an error must name a dtype of the case, unless numpy fails
// too.
func compareResult(c dtypeCase, got, want dtypeResult) string {
	switch {
	case got.Err != "" && want.Err != "":
		return ""
	case got.Err != "":
		if strings.Contains(got.Err, c.D) || strings.Contains(got.Err, c.E) {
			return "" // a clear refusal naming the dtype
		}
		return fmt.Sprintf("error %q names no dtype (numpy gives %s%v %v)", got.Err, want.DType, want.Shape, want.Values)
	case want.Err != "":
		return fmt.Sprintf("gives %s%v %v where numpy fails: %s", got.DType, got.Shape, got.Values, want.Err)
	}
	tol := 1e-6
	switch want.DType {
	case "uint64":
		// nd has no uint64: sums and products of unsigned integers
		// are int64 (documented in docs/reference.md, numpy).
		want.DType = "int64"
	case "float16":
		// nd has no float16: numpy's float16 results (exp of int8)
		// are float32, as Theano's upgrade_to_float gives them.
		want.DType, tol = "float32", 1e-3
	}
	if got.Scalar != want.Scalar || got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) || !closeValues(got.Values, want.Values, tol) {
		return fmt.Sprintf("gives %s%v %v (scalar %v), numpy %s%v %v (scalar %v)", got.DType, got.Shape, got.Values, got.Scalar, want.DType, want.Shape, want.Values, want.Scalar)
	}
	return ""
}

func closeValues(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x == y || math.IsNaN(x) && math.IsNaN(y) {
			continue
		}
		if math.Abs(x-y) > tol*math.Abs(y) {
			return false
		}
	}
	return true
}

func writeFile(name string, b []byte) error { return os.WriteFile(name, b, 0o644) }

// A list value out of an integer dtype's range is refused, naming the
// dtype, for every integer dtype (int16 once wrapped 70000 silently).
func TestArrayRefusesOutOfRangeValues(t *testing.T) {
	np := npStruct()
	for _, d := range nd.NumericDTypes() {
		if d.IsFloat() || d == nd.Bool {
			continue
		}
		for _, v := range []string{"70000", "-70000", "1 << 40"} {
			c := dtypeCase{Expr: "np.array([" + v + "], dtype=D)", D: d.String(), E: d.String()}
			got := evalCase(np, c)
			fits := d == nd.Int64 || d == nd.Int32 && v != "1 << 40"
			switch {
			case fits && got.Err != "":
				t.Errorf("%s: %s", c.Expr, got.Err)
			case !fits && !strings.Contains(got.Err, "out of range for "+d.String()):
				t.Errorf("%s with D=%s: got %+v, want an out-of-range error naming %s", c.Expr, d, got, d)
			}
		}
	}
}
