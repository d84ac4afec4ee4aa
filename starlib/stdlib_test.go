package starlib_test

import (
	"bytes"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// max_norm is Blocks' VariableClipping: after a step that grows the
// weights, every column (axis 0) of W has an L2 norm of at most the
// threshold, and a column that stayed below it is unchanged.
func TestStdlibMaxNorm(t *testing.T) {
	src := `
load("tensor", "matrix", "shared")
load("numpy", "array")
load("stdlib/regularization.star", "max_norm")
load("math", "sqrt")
load("blocks.algorithms", "GradientDescent", "CompositeRule", "Scale")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter")
W = shared(array([[0.1, 0.0, 3.0], [0.1, 0.0, 4.0]], dtype = "float32"), name = "W")
x = matrix("x")
# The gradient of -sum(x W) is -x^T 1: a step of 1 adds x's column sums
# (2 and 0) to W's rows, giving columns of norm 2.1, 2 and 6.4.
cost = -(x.dot(W)).sum()
data = IndexableDataset({"x": array([[1.0, 0.0], [1.0, 0.0]], dtype = "float32")})
loop = MainLoop(GradientDescent(cost = cost, parameters = [W], step_rule = CompositeRule([Scale(1.0), max_norm(1.5, axis = 0)])),
                DataStream(data, iteration_scheme = SequentialScheme(2, 2)), extensions = [FinishAfter(after_n_batches = 1)])
loop.run()
w = W.get_value().tolist()
norms = [sqrt(w[0][j] * w[0][j] + w[1][j] * w[1][j]) for j in range(3)]
`
	var out bytes.Buffer
	g, err := starlib.ExecFile("maxnorm.star", []byte(src), starlib.Options{Stdout: &out, FloatX: "float32", Library: all.Library()})
	if err != nil {
		t.Fatalf("%v\n%s", err, starlib.Backtrace(err))
	}
	norms := g["norms"].(*starlark.List)
	for j := 0; j < norms.Len(); j++ {
		n, _ := starlark.AsFloat(norms.Index(j))
		if n > 1.5+1e-6 {
			t.Errorf("column %d has norm %g after max_norm(1.5)", j, n)
		}
	}
	// Every column exceeded the threshold after the step, so every one
	// ends at norm 1.5 exactly (up to float32 rounding).
	for j := 0; j < norms.Len(); j++ {
		if n, _ := starlark.AsFloat(norms.Index(j)); n < 1.5-1e-4 {
			t.Errorf("column %d has norm %g, want 1.5 (it exceeded the threshold)", j, n)
		}
	}
}

// Errors inside the library point at the script line that called it.
func TestStdlibErrorBacktrace(t *testing.T) {
	src := `
load("stdlib/regularization.star", "l2_penalty")
l2_penalty([], 0.1)
`
	_, err := starlib.ExecFile("caller.star", []byte(src), starlib.Options{Library: all.Library()})
	if err == nil {
		t.Fatal("no error")
	}
	bt := starlib.Backtrace(err)
	if !strings.Contains(bt, "caller.star:3") || !strings.Contains(bt, "stdlib/regularization.star") {
		t.Errorf("backtrace:\n%s", bt)
	}
}
