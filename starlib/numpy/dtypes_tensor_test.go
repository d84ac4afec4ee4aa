package numpy_test

import (
	"fmt"
	"os/exec"
	"slices"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// tensorOps pair an expression of symbolic matrices x, y (the tensor
// module) with numpy's expression of the arrays a, b fed to them.
var tensorOps = [][2]string{
	{"x.T", "a.T"}, {"transpose(x)", "a.T"}, {"x.dimshuffle(1, 0)", "a.T"},
	{"x.reshape((3, 2))", "a.reshape((3, 2))"}, {"x.flatten()", "a.flatten()"},
	{"x[1]", "a[1]"}, {`x["::-1"]`, "a[::-1]"}, {`x["1:"]`, "a[1:]"}, {`x[":", 1]`, "a[:, 1]"},
	{`x[":", "::2"]`, "a[:, ::2]"}, {"gt(x, y)", "a > b"},
	{"x + y", "a + b"}, {"x - y", "a - b"}, {"x * y", "a * b"}, {"x * 2", "a * 2"}, {"-x", "-a"},
	{"maximum(x, y)", "np.maximum(a, b)"}, {"minimum(x, y)", "np.minimum(a, b)"},
	{"switch(gt(x, y), x, y)", "np.where(a > b, a, b)"},
	{"x.sum()", "a.sum()"}, {"x.sum(axis=0)", "a.sum(axis=0)"}, {"x.max(axis=1)", "a.max(axis=1)"},
	{"x.min()", "a.min()"}, {"argmax(x, axis=1)", "a.argmax(axis=1)"},
	{"cast(x, 'float32')", "a.astype('float32')"}, {"cast(x, 'int64')", "a.astype('int64')"},
	{"dot(x, y.T)", "np.dot(a, b.T)"},
}

// TestEveryDTypeEveryTensorOpMatchesNumpy feeds arrays of each numeric
// dtype to compiled functions of symbolic variables of that dtype: the
// same kernels as the numpy module, reached through the tensor module and
// function. Values and shapes are numpy's (dtypes may follow Theano's
// rules, which differ for comparisons and sums); an error names the dtype.
func TestEveryDTypeEveryTensorOpMatchesNumpy(t *testing.T) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is the reference: %v", py, err)
	}
	var cases []dtypeCase
	for _, d := range numpyDTypes() {
		for _, op := range tensorOps {
			cases = append(cases, dtypeCase{Expr: op[1], D: d, E: d})
		}
	}
	want := numpyResults(t, py, cases)
	np := npStruct()
	bad := 0
	for i, c := range cases {
		op := tensorOps[i%len(tensorOps)]
		got := evalTensorCase(np, op[0], c.D)
		w := want[i]
		if got.Err == "" && w.Err == "" {
			// Theano's dtypes: compare values and shapes.
			got.DType, w.DType, got.Scalar, w.Scalar = "", "", false, false
			if len(w.Shape) == 0 {
				w.Shape = nil
			}
			if len(got.Shape) == 0 {
				got.Shape = nil
			}
		}
		if msg := compareResult(c, got, w); msg != "" {
			bad++
			t.Errorf("%s with x, y of dtype %s: %s", op[0], c.D, msg)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d (dtype x tensor op) cases differ from numpy", bad, len(cases))
	}
}

func evalTensorCase(np starlark.Value, expr, d string) (res dtypeResult) {
	defer func() {
		if r := recover(); r != nil {
			res = dtypeResult{Err: fmt.Sprintf("panic: %v", r)}
		}
	}()
	src := `load("tensor", "matrix", "transpose", "maximum", "minimum", "switch", "gt", "argmax", "cast", "dot", "function")
` + dtypePrelude + `x = matrix("x", dtype=D)
y = matrix("y", dtype=D)
r = function([x, y], ` + expr + `)(a, b)
`
	g, err := starlib.ExecFile("case.star", []byte(src), starlib.Options{
		Library:     all.Library(),
		Predeclared: starlark.StringDict{"np": np, "D": starlark.String(d), "E": starlark.String(d)},
	})
	if err != nil {
		return dtypeResult{Err: err.Error()}
	}
	a, ok := g["r"].(*starlib.Array)
	if !ok {
		return dtypeResult{Err: fmt.Sprintf("result of type %s", g["r"].Type())}
	}
	return dtypeResult{DType: a.A.DType().String(), Shape: slices.Clone(a.A.Shape), Values: a.A.Float64s()}
}
