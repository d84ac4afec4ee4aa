package algorithms

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

func vec(xs ...float64) *nd.Array { return nd.FromSlice(append([]float64(nil), xs...)) }

// quadratic is sum((W - c)^2) with W a float64 parameter.
func quadratic(w0, c []float64) (W *core.Variable, cost *core.Variable) {
	W = core.NewShared(vec(w0...), "W")
	core.AddRole(W, core.Weight)
	cost = core.SumAll(core.Sqr(core.Sub(W, core.NewConstant(vec(c...)))))
	cost.Name = "cost"
	return W, cost
}

func TestScaleOneStepExact(t *testing.T) {
	w0 := []float64{3, -1, 0.5, 10}
	c := []float64{1, 1, 1, 1}
	W, cost := quadratic(w0, c)
	scale := NewScale(nd.Float32, 0.25)
	if !core.HasRole(scale.LearningRate, core.AlgorithmHyperparameter) || scale.LearningRate.Name != "learning_rate" {
		t.Fatalf("learning rate: name %q roles %v", scale.LearningRate.Name, scale.LearningRate.Tag.Roles)
	}
	if scale.LearningRate.NDim() != 0 || !scale.LearningRate.DType().IsFloat() {
		t.Fatalf("learning rate is %s", scale.LearningRate.TypeString())
	}
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W}, StepRule: scale})
	if err != nil {
		t.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		t.Fatal(err)
	}
	if len(gd.Inputs()) != 0 {
		t.Fatalf("inputs %v", gd.Inputs())
	}
	if err := gd.ProcessBatch(map[string]*nd.Array{}); err != nil {
		t.Fatal(err)
	}
	got := W.Value().F64()
	for i := range w0 {
		want := w0[i] - 0.25*2*(w0[i]-c[i])
		if got[i] != want {
			t.Errorf("W[%d] = %v, want %v", i, got[i], want)
		}
	}
	// A schedule changes the learning rate through the shared variable.
	if err := scale.LearningRate.SetValue(nd.Scalar(scale.LearningRate.DType(), 0.5)); err != nil {
		t.Fatal(err)
	}
	before := append([]float64(nil), got...)
	if err := gd.ProcessBatch(map[string]*nd.Array{}); err != nil {
		t.Fatal(err)
	}
	for i := range w0 {
		if want := before[i] - 0.5*2*(before[i]-c[i]); W.Value().F64()[i] != want {
			t.Errorf("after lr change W[%d] = %v, want %v", i, W.Value().F64()[i], want)
		}
	}
}

func TestDefaultStepRuleIsScaleOne(t *testing.T) {
	W, cost := quadratic([]float64{2}, []float64{1.5})
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W}})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := gd.StepRule.(*Scale)
	if !ok || s.LearningRate.Value().Flat(0) != 1 {
		t.Fatalf("default step rule %#v", gd.StepRule)
	}
	if err := gd.Initialize(); err != nil {
		t.Fatal(err)
	}
	if err := gd.ProcessBatch(nil); err != nil {
		t.Fatal(err)
	}
	if got := W.Value().F64()[0]; got != 2-2*(2-1.5) {
		t.Fatalf("W = %v", got)
	}
}

func TestCompositeRuleChains(t *testing.T) {
	W, cost := quadratic([]float64{4, 0}, []float64{0, 2})
	rule := NewCompositeRule(NewScale(nd.Float32, 0.5), NewScale(nd.Float32, 0.25))
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W}, StepRule: rule})
	if err != nil {
		t.Fatal(err)
	}
	var gnorm, snorm float64
	if err := gd.AddOutputs([]*core.Variable{gd.TotalGradientNorm, gd.TotalStepNorm}, func(v []*nd.Array) error {
		gnorm, snorm = v[0].Flat(0), v[1].Flat(0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if gd.TotalGradientNorm.Name != "total_gradient_norm" || gd.TotalStepNorm.Name != "total_step_norm" {
		t.Fatalf("norm names %q %q", gd.TotalGradientNorm.Name, gd.TotalStepNorm.Name)
	}
	if err := gd.Initialize(); err != nil {
		t.Fatal(err)
	}
	if err := gd.ProcessBatch(nil); err != nil {
		t.Fatal(err)
	}
	// gradient 2(W-c) = (8, -4); step = 0.125 * gradient.
	if want := math.Sqrt(64 + 16); gnorm != want {
		t.Errorf("total_gradient_norm = %v, want %v (before the update)", gnorm, want)
	}
	if want := 0.125 * math.Sqrt(64+16); snorm != want {
		t.Errorf("total_step_norm = %v, want %v", snorm, want)
	}
	if got := W.Value().F64(); got[0] != 3 || got[1] != 0.5 {
		t.Errorf("W = %v, want [3 0.5]", got)
	}
	if err := gd.AddOutputs(nil, nil); err == nil {
		t.Error("AddOutputs after Initialize: no error")
	}
	if err := gd.AddUpdates(nil); err == nil {
		t.Error("AddUpdates after Initialize: no error")
	}
}

// solve solves the square system A x = b by Gaussian elimination with
// partial pivoting.
func solve(A [][]float64, b []float64) []float64 {
	n := len(b)
	for k := 0; k < n; k++ {
		p := k
		for i := k + 1; i < n; i++ {
			if math.Abs(A[i][k]) > math.Abs(A[p][k]) {
				p = i
			}
		}
		A[k], A[p] = A[p], A[k]
		b[k], b[p] = b[p], b[k]
		for i := k + 1; i < n; i++ {
			f := A[i][k] / A[k][k]
			for j := k; j < n; j++ {
				A[i][j] -= f * A[k][j]
			}
			b[i] -= f * b[k]
		}
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for j := i + 1; j < n; j++ {
			s -= A[i][j] * x[j]
		}
		x[i] = s / A[i][i]
	}
	return x
}

func TestLinearRegressionConvergesToLeastSquares(t *testing.T) {
	const n, d = 40, 3
	r := rand.New(rand.NewPCG(3, 4))
	X := nd.New(nd.Float64, n, d)
	y := nd.New(nd.Float64, n)
	trueW := []float64{1.5, -2, 0.5}
	for i := 0; i < n; i++ {
		s := 0.7
		for j := 0; j < d; j++ {
			v := r.NormFloat64()
			X.F64()[i*d+j] = v
			s += trueW[j] * v
		}
		y.F64()[i] = s + 0.3*r.NormFloat64()
	}
	// Closed form: the normal equations of [X 1] [w; b] = y.
	A := make([][]float64, d+1)
	rhs := make([]float64, d+1)
	for a := 0; a <= d; a++ {
		A[a] = make([]float64, d+1)
		for bb := 0; bb <= d; bb++ {
			for i := 0; i < n; i++ {
				xa, xb := 1.0, 1.0
				if a < d {
					xa = X.F64()[i*d+a]
				}
				if bb < d {
					xb = X.F64()[i*d+bb]
				}
				A[a][bb] += xa * xb
			}
		}
		for i := 0; i < n; i++ {
			xa := 1.0
			if a < d {
				xa = X.F64()[i*d+a]
			}
			rhs[a] += xa * y.F64()[i]
		}
	}
	want := solve(A, rhs)

	x := core.NewInput("features", nd.Float64, 2)
	target := core.NewInput("targets", nd.Float64, 1)
	W := core.NewShared(nd.New(nd.Float64, d), "W")
	b := core.NewShared(nd.Scalar(nd.Float64, 0), "b")
	xw, err := core.Dot(x, W)
	if err != nil {
		t.Fatal(err)
	}
	cost := core.MeanAll(core.Sqr(core.Sub(core.Add(xw, b), target)))
	cost.Name = "cost"
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W, b}, StepRule: NewScale(nd.Float32, 0.2)})
	if err != nil {
		t.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		t.Fatal(err)
	}
	if in := gd.Inputs(); len(in) != 2 || in[0] != x || in[1] != target {
		t.Fatalf("inputs %v, want [features targets]", in)
	}
	batch := map[string]*nd.Array{"features": X, "targets": y}
	for it := 0; it < 1000; it++ {
		if err := gd.ProcessBatch(batch); err != nil {
			t.Fatal(err)
		}
	}
	got := append(append([]float64(nil), W.Value().F64()...), b.Value().Flat(0))
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("parameter %d = %.12f, least squares %.12f", i, got[i], want[i])
		}
	}
}

func regression(t *testing.T, policy string) (*GradientDescent, *core.Variable) {
	t.Helper()
	x := core.NewInput("features", nd.Float32, 2)
	y := core.NewInput("targets", nd.Float32, 1)
	W := core.NewShared(nd.New(nd.Float32, 3), "W")
	xw, err := core.Dot(x, W)
	if err != nil {
		t.Fatal(err)
	}
	cost := core.MeanAll(core.Sqr(core.Sub(xw, y)))
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W}, OnUnusedSources: policy})
	if err != nil {
		t.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		t.Fatal(err)
	}
	return gd, W
}

func TestSourceNameMismatch(t *testing.T) {
	X := nd.New(nd.Float32, 2, 3)
	Y := nd.New(nd.Float32, 2)
	extra := nd.New(nd.Float32, 2)

	gd, _ := regression(t, "")
	err := gd.ProcessBatch(map[string]*nd.Array{"features": X, "targets": Y, "weights": extra})
	var se *SourcesError
	if !errors.As(err, &se) {
		t.Fatalf("unused source under 'raise': got %v", err)
	}
	for _, s := range []string{`"features", "targets", "weights"`, `input variables are ["features", "targets"]`, `unused: ["weights"]`, "on_unused_sources"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}

	err = gd.ProcessBatch(map[string]*nd.Array{"features": X})
	if !errors.As(err, &se) || len(se.Missing) != 1 || se.Missing[0] != "targets" {
		t.Fatalf("missing source: got %v", err)
	}
	if !strings.Contains(err.Error(), `no data source for the input variable ["targets"]`) {
		t.Errorf("missing-source error %q does not name the input", err)
	}

	gd, _ = regression(t, "warn")
	var warnings []string
	gd.Warn = func(m string) { warnings = append(warnings, m) }
	for i := 0; i < 2; i++ {
		if err := gd.ProcessBatch(map[string]*nd.Array{"features": X, "targets": Y, "weights": extra}); err != nil {
			t.Fatalf("'warn': %v", err)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "weights") {
		t.Errorf("'warn' warnings: %q", warnings)
	}

	gd, _ = regression(t, "ignore")
	if err := gd.ProcessBatch(map[string]*nd.Array{"features": X, "targets": Y, "weights": extra}); err != nil {
		t.Fatalf("'ignore': %v", err)
	}

	if _, err := NewGradientDescent(GradientDescentConfig{Cost: core.SumAll(core.Sqr(core.NewShared(vec(1), "p"))), Parameters: nil}); err == nil {
		t.Error("no parameters: no error")
	}
	W, cost := quadratic([]float64{1}, []float64{0})
	if _, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{W}, OnUnusedSources: "sometimes"}); err == nil {
		t.Error("bad on_unused_sources: no error")
	}
}

func TestSourceShapeAndDTypeErrors(t *testing.T) {
	gd, _ := regression(t, "")
	err := gd.ProcessBatch(map[string]*nd.Array{"features": nd.New(nd.Float32, 256, 1, 28, 28), "targets": nd.New(nd.Float32, 256)})
	want := `source "features" has shape (256, 1, 28, 28) but the input variable features is a matrix (2-d)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	var se *SourceError
	var ie *core.InputError
	if !errors.As(err, &se) || se.Source != "features" || !errors.As(err, &ie) {
		t.Errorf("error %T does not unwrap to SourceError and core.InputError", err)
	}

	err = gd.ProcessBatch(map[string]*nd.Array{"features": nd.New(nd.Float32, 4, 3), "targets": nd.New(nd.Float64, 4)})
	if err == nil || !strings.Contains(err.Error(), `source "targets" has dtype float64 (shape (4,)) but the input variable targets is TensorType(float32, vector)`) {
		t.Fatalf("dtype mismatch: %v", err)
	}
	err = gd.ProcessBatch(map[string]*nd.Array{"features": nd.New(nd.Int64, 4, 3), "targets": nd.New(nd.Float32, 4)})
	if err == nil || !strings.Contains(err.Error(), "integer data cannot feed a float variable") {
		t.Fatalf("int into float: %v", err)
	}
	// uint8 data feeds an int64 variable (MNIST's targets into lmatrix).
	x := core.NewInput("targets", nd.Int64, 2)
	p := core.NewShared(vec(1), "p")
	cost := core.Add(core.SumAll(core.Sqr(p)), core.Cast(core.SumAll(x), nd.Float64))
	g2, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Initialize(); err != nil {
		t.Fatal(err)
	}
	if err := g2.ProcessBatch(map[string]*nd.Array{"targets": nd.New(nd.Uint8, 5, 1)}); err != nil {
		t.Fatalf("uint8 into int64: %v", err)
	}
}

func TestPrecomputedGradientsAndUpdates(t *testing.T) {
	a := core.NewShared(vec(3, 4), "a")
	b := core.NewShared(vec(1), "b")
	ga := core.Mul(core.Const(nd.Float64, 2), a) // gradient of sum(a^2)
	gb := core.Mul(core.Const(nd.Float64, 0), b)
	counter := core.NewShared(nd.Scalar(nd.Float64, 0), "counter")
	gd, err := NewGradientDescent(GradientDescentConfig{
		Gradients: []Gradient{{b, gb}, {a, ga}},
		StepRule:  NewScale(nd.Float32, 0.5),
	})
	if err != nil {
		t.Fatal(err)
	}
	if gd.Parameters[0] != b || gd.Parameters[1] != a {
		t.Fatalf("parameters not in the gradients' order: %v", gd.Parameters)
	}
	if err := gd.AddUpdates([]core.Update{{Shared: counter, Value: core.Add(counter, core.SumAll(a))}}); err != nil {
		t.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		t.Fatal(err)
	}
	if err := gd.ProcessBatch(nil); err != nil {
		t.Fatal(err)
	}
	if got := a.Value().F64(); got[0] != 0 || got[1] != 0 {
		t.Errorf("a = %v, want [0 0]", got)
	}
	if got := counter.Value().Flat(0); got != 7 {
		t.Errorf("added update saw a = %v, want the value before the step (sum 7)", got)
	}
	if _, err := NewGradientDescent(GradientDescentConfig{Gradients: []Gradient{{a, ga}}, ConsiderConstant: []*core.Variable{}}); err == nil {
		t.Error("consider_constant with gradients: no error")
	}
}

func TestBufferIsTagged(t *testing.T) {
	W := core.NewShared(nd.New(nd.Float64, 2, 3), "W")
	buf, err := NewBuffer(W, "velocity", nd.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if !core.HasRole(buf, core.AlgorithmBuffer) || !core.HasRole(buf, core.AlgorithmState) {
		t.Errorf("buffer roles %v", buf.Tag.Roles)
	}
	if !nd.SameShape(buf.Value().Shape, []int{2, 3}) || buf.Tag.ForParameter != W {
		t.Errorf("buffer shape %v parameter %v", buf.Value().Shape, buf.Tag.ForParameter)
	}
}
