package bricks

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

func mustApply(t *testing.T, b Brick, app string, in ...*core.Variable) *core.Variable {
	t.Helper()
	out, err := Apply(b, app, in...)
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

func eval(t *testing.T, ins []*core.Variable, args []*nd.Array, outs ...*core.Variable) []*nd.Array {
	t.Helper()
	f, err := core.Compile(ins, outs, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Call(args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMLPNamesAndRoles(t *testing.T) {
	cfg := NewConfig(nd.Float32, 1)
	relu, _ := NewActivation(cfg, "Rectifier", "", 0)
	sm := NewSoftmax(cfg, "")
	mlp, err := NewMLP(cfg, "", []Brick{relu, sm}, []int{784, 100, 10})
	if err != nil {
		t.Fatal(err)
	}
	x := core.NewInput("features", nd.Float32, 2)
	y := mustApply(t, mlp, "apply", x)
	if y.Name != "mlp_apply_output" || !core.HasRole(y, core.Output) {
		t.Errorf("output named %q with roles %v", y.Name, y.Tag.Roles)
	}
	var paths []string
	for _, p := range AllParameters(mlp) {
		paths = append(paths, ParameterPath(p))
	}
	want := "/mlp/linear_0.W /mlp/linear_0.b /mlp/linear_1.W /mlp/linear_1.b"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("parameter paths %q, want %q", got, want)
	}
	if !core.HasRole(mlp.LinearTransformations[0].(*Linear).W, core.Weight) || !core.HasRole(mlp.LinearTransformations[0].(*Linear).W, core.Parameter) || core.HasRole(mlp.LinearTransformations[0].(*Linear).W, core.Bias) {
		t.Errorf("W roles %v", mlp.LinearTransformations[0].(*Linear).W.Tag.Roles)
	}
}

func TestLazyAllocationError(t *testing.T) {
	cfg := NewConfig(nd.Float32, 1)
	l := NewLinear(cfg, "input_to_hidden")
	l.InputDim = 3
	err := Allocate(l)
	if err == nil || !strings.Contains(err.Error(), "output_dim") || !strings.Contains(err.Error(), "input_to_hidden") {
		t.Errorf("allocate with output_dim unset: %v", err)
	}
	l.OutputDim = 2
	if err := Initialize(l); err == nil || !strings.Contains(err.Error(), "biases_init") {
		t.Errorf("initialize without biases_init: %v", err)
	}
}

// TestInitialParametersMatchNumpy checks Blocks' seeding: the tutorial's two
// Linear bricks draw their seeds from RandomState(1).randint(2**31-1) in
// the order they are initialized, then normal(0, 0.01) from
// RandomState(seed), cast to float32. Debian's numpy computes the reference.
func TestInitialParametersMatchNumpy(t *testing.T) {
	py := `
import numpy, json
seed_rng = numpy.random.RandomState(1)
out = []
for shape in [(784, 100), (100, 10)]:
    seed = seed_rng.randint(numpy.iinfo(numpy.int32).max)
    w = numpy.random.RandomState(seed).normal(0, 0.01, size=shape).astype("float32")
    out.append({"seed": int(seed), "sum": float(w.astype("float64").sum()), "first": [float(v) for v in w.flat[:5]], "last": float(w.flat[-1])})
print(json.dumps(out))
`
	raw, err := exec.Command("/usr/bin/python3", "-c", py).Output()
	if err != nil {
		t.Skipf("Debian's python3-numpy is not available (%v); numpyrand's own tests cover the generator", err)
	}
	var ref []struct {
		Seed  int64
		Sum   float64
		First []float64
		Last  float64
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig(nd.Float32, 1)
	l1, l2 := NewLinear(cfg, "input_to_hidden"), NewLinear(cfg, "hidden_to_output")
	for _, c := range []struct {
		l       *Linear
		in, out int
	}{{l1, 784, 100}, {l2, 100, 10}} {
		c.l.InputDim, c.l.OutputDim = c.in, c.out
		c.l.WeightsInit = initialization.IsotropicGaussian{Std: 0.01}
		c.l.BiasesInit = initialization.Constant{}
	}
	for i, l := range []*Linear{l1, l2} {
		if err := Initialize(l); err != nil {
			t.Fatal(err)
		}
		w := l.W.Value().F32()
		if l.Seed() != ref[i].Seed {
			t.Errorf("brick %d seed %d, numpy %d", i, l.Seed(), ref[i].Seed)
		}
		for k, v := range ref[i].First {
			if float64(w[k]) != v {
				t.Errorf("brick %d W[%d] = %v, numpy %v", i, k, w[k], v)
			}
		}
		if float64(w[len(w)-1]) != ref[i].Last {
			t.Errorf("brick %d last W = %v, numpy %v", i, w[len(w)-1], ref[i].Last)
		}
		sum := 0.0
		for _, v := range w {
			sum += float64(v)
		}
		if math.Abs(sum-ref[i].Sum) > 1e-9 {
			t.Errorf("brick %d sum W = %v, numpy %v", i, sum, ref[i].Sum)
		}
		for _, v := range l.B.Value().F32() {
			if v != 0 {
				t.Fatalf("bias %v, want 0", v)
			}
		}
	}
}

// TestBrickGradients checks each brick's gradient with respect to its
// parameters and input against central differences, in float64.
func TestBrickGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cfg := NewConfig(nd.Float64, 1)
	act := func(class string) Brick { a, _ := NewActivation(cfg, class, "", 0.1); return a }
	mlp, _ := NewMLP(cfg, "", []Brick{act("Tanh"), act("Logistic"), act("Softplus"), act("LeakyRectifier"), act("Identity"), NewSoftmax(cfg, "")}, []int{4, 5, 5, 5, 5, 5, 3})
	mlp.WeightsInit = initialization.IsotropicGaussian{Std: 0.5}
	mlp.BiasesInit = initialization.Constant{Value: 0.1}
	if err := Initialize(mlp); err != nil {
		t.Fatal(err)
	}
	xv := nd.New(nd.Float64, 6, 4)
	for i := range xv.F64() {
		xv.F64()[i] = r.Float64()*2 - 1
	}
	x := core.NewShared(xv, "x")
	targets := core.NewConstant(nd.FromSlice([]int64{0, 2, 1, 1, 0, 2}))
	yhat := mustApply(t, mlp, "apply", x)
	ccost, _ := NewCost(cfg, "CategoricalCrossEntropy", "", 0)
	cost := mustApply(t, ccost, "apply", targets, yhat)
	sq, _ := NewCost(cfg, "SquaredError", "", 0)
	cost = core.Add(cost, mustApply(t, sq, "apply", core.NewConstant(nd.New(nd.Float64, 6, 3)), yhat))
	bce, _ := NewCost(cfg, "BinaryCrossEntropy", "", 0)
	cost = core.Add(cost, mustApply(t, bce, "apply", core.NewConstant(nd.FromSlice([]float64{1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0}, 6, 3)), yhat))
	sm := NewSoftmax(cfg, "sm2")
	cost = core.Add(cost, core.MeanAll(mustApply(t, sm, "categorical_cross_entropy", targets, x)))
	wrt := append(AllParameters(mlp), x)
	grads, err := core.Grad(cost, wrt, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := core.Compile(nil, append([]*core.Variable{cost}, grads...), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Call(nil)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-6 // central differences: O(h²) truncation, O(ε/h) rounding
	for k, p := range wrt {
		data := p.Value().F64()
		for i := range data {
			old := data[i]
			data[i] = old + h
			fp, _ := f.Call(nil)
			data[i] = old - h
			fm, _ := f.Call(nil)
			data[i] = old
			num := (fp[0].Flat(0) - fm[0].Flat(0)) / (2 * h)
			sym := res[1+k].Flat(i)
			if rel := math.Abs(num-sym) / math.Max(1e-3, math.Abs(num)+math.Abs(sym)); rel > 1e-6 {
				t.Errorf("d cost/d %s[%d]: symbolic %.10g numeric %.10g", ParameterPath(p), i, sym, num)
			}
		}
	}
}

func TestMisclassificationRate(t *testing.T) {
	cfg := NewConfig(nd.Float32, 1)
	yhat := core.NewConstant(nd.FromSlice([]float32{0.1, 0.7, 0.2, 0.5, 0.3, 0.2, 0.3, 0.3, 0.4, 0.6, 0.2, 0.2}, 4, 3))
	y := core.NewConstant(nd.FromSlice([]int64{1, 1, 0, 2}))
	top1, _ := NewCost(cfg, "MisclassificationRate", "", 1)
	top2, _ := NewCost(cfg, "MisclassificationRate", "", 2)
	res := eval(t, nil, nil, mustApply(t, top1, "apply", y, yhat), mustApply(t, top2, "apply", y, yhat))
	// top-1: rows 0 right, 1 wrong (argmax 0), 2 wrong (argmax 2), 3 wrong → 0.75.
	// top-2: row 1: 0.3 is 2nd → right; row 2: 0.3 ties 0.3 for 2nd, so
	// two scores ≥ it besides itself... (0.3, 0.4) → 2 higher-or-equal → wrong;
	// row 3: 0.2 ties with 0.2 behind 0.6 → 2 → wrong → 0.5.
	if res[0].Flat(0) != 0.75 || res[1].Flat(0) != 0.5 || res[0].DType() != nd.Float32 {
		t.Errorf("misclassification top-1 %v top-2 %v (%s), want 0.75 and 0.5 in float32", res[0], res[1], res[0].DType())
	}
}
