package bricks

import (
	"math"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

func normalArray(rng *numpyrand.RandomState, loc, scale float64, shape ...int) *nd.Array {
	a := nd.New(nd.Float64, shape...)
	rng.FillNormal(a.F64(), loc, scale)
	return a
}

// bnReference normalizes the columns of x (n × d) by their mean and
// sqrt(var + eps), then scales and shifts: float64 loops.
func bnReference(x []float64, n, d int, eps float64, scale, shift []float64) (out, mean, std []float64) {
	out, mean, std = make([]float64, n*d), make([]float64, d), make([]float64, d)
	for j := range d {
		for i := range n {
			mean[j] += x[i*d+j]
		}
		mean[j] /= float64(n)
		v := 0.0
		for i := range n {
			v += (x[i*d+j] - mean[j]) * (x[i*d+j] - mean[j])
		}
		std[j] = math.Sqrt(v/float64(n) + eps)
		for i := range n {
			out[i*d+j] = (x[i*d+j]-mean[j])/std[j]*scale[j] + shift[j]
		}
	}
	return
}

func TestBatchNormalizationModesAndRoles(t *testing.T) {
	cfg := NewConfig(nd.Float64, 1)
	bn := NewBatchNormalization(cfg, "")
	bn.InputDim, bn.InputDimTuple = Size{3}, true
	bn.ScaleInit = initialization.Constant{Value: 2}
	if err := Initialize(bn); err != nil {
		t.Fatal(err)
	}
	if bn.Name != "batchnormalization" || len(bn.Parameters) != 2 {
		t.Fatalf("name %q, parameters %v", bn.Name, bn.Parameters)
	}
	x := core.NewInput("x", nd.Float64, 2)
	y := mustApply(t, bn, "apply", x)
	g := graph.New([]*core.Variable{y})
	before := slices.Clone(g.Variables)
	tg, err := ApplyBatchNormalization(g)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, g.Variables) || g.Outputs[0] != y {
		t.Fatal("apply_batch_normalization changed the original graph")
	}
	xv := normalArray(numpyrand.New(2), 3, 2, 7, 3)
	o := eval(t, []*core.Variable{x}, []*nd.Array{xv}, y, tg.Outputs[0])
	// Inference mode with fresh statistics (mean 0, stdev 1): y = 2x.
	for i, v := range o[0].F64() {
		if math.Abs(v-2*xv.F64()[i]) > 1e-12 {
			t.Fatalf("inference output %v, want 2x = %v", v, 2*xv.F64()[i])
		}
	}
	want, mean, std := bnReference(xv.F64(), 7, 3, 1e-4, []float64{2, 2, 2}, []float64{0, 0, 0})
	for i, v := range o[1].F64() {
		if math.Abs(v-want[i]) > 1e-12 {
			t.Fatalf("training output[%d] %v, reference %v", i, v, want[i])
		}
	}
	// Every batch-norm role is somewhere in the graphs.
	all := append(slices.Clone(g.Variables), tg.Variables...)
	for _, r := range []*core.Role{core.BatchNormPopulationMean, core.BatchNormPopulationStdev, core.BatchNormPopulationStatistics,
		core.BatchNormOffset, core.BatchNormDivisor, core.BatchNormGraphVariable, core.BatchNormMinibatchEstimate,
		core.BatchNormScaleParameter, core.BatchNormShiftParameter} {
		if !slices.ContainsFunc(all, func(v *core.Variable) bool { return core.HasRole(v, r) }) {
			t.Errorf("no variable with role %s", r)
		}
	}
	// cg.parameters holds the scale and shift, not the population statistics.
	ps := tg.Parameters()
	if len(ps) != 2 || !slices.Contains(ps, bn.Scale) || !slices.Contains(ps, bn.Shift) {
		t.Errorf("parameters %v", ps)
	}
	// The updates pair the population statistics with the minibatch ones.
	ups, err := BatchNormalizationUpdates(tg, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || ups[0].Shared != bn.PopulationMean || ups[1].Shared != bn.PopulationStdev {
		t.Fatalf("updates %v", ups)
	}
	st := eval(t, []*core.Variable{x}, []*nd.Array{xv}, ups[0].Value, ups[1].Value)
	for j := range 3 {
		if math.Abs(st[0].F64()[j]-mean[j]) > 1e-12 || math.Abs(st[1].F64()[j]-std[j]) > 1e-12 {
			t.Errorf("minibatch statistics %v %v, reference %v %v", st[0].F64(), st[1].F64(), mean, std)
		}
	}
	if _, err := BatchNormalizationUpdates(g, false); err == nil {
		t.Error("updates of an inference graph: no error")
	}
	// The context form gives the same training graph.
	var y2 *core.Variable
	if err := WithBatchNormalization([]Brick{bn}, func() error {
		var err error
		outs, err := Apply(bn, "apply", x)
		y2 = outs[0]
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if bn.TrainingMode() {
		t.Error("still in training mode")
	}
	o2 := eval(t, []*core.Variable{x}, []*nd.Array{xv}, y2)
	for i, v := range o2[0].F64() {
		if math.Abs(v-want[i]) > 1e-12 {
			t.Fatalf("batch_normalization() output %v, reference %v", v, want[i])
		}
	}
}

// Finite differences of Σ c ⊙ BN(x) (training mode) with respect to the
// input, the scale and the shift.
func TestBatchNormalizationGradient(t *testing.T) {
	cfg := NewConfig(nd.Float64, 1)
	bn := NewBatchNormalization(cfg, "")
	bn.InputDim, bn.InputDimTuple = Size{3}, true
	if err := Initialize(bn); err != nil {
		t.Fatal(err)
	}
	rng := numpyrand.New(9)
	bn.Scale.Value().CopyFrom(normalArray(rng, 1, 0.3, 3))
	bn.Shift.Value().CopyFrom(normalArray(rng, 0, 0.3, 3))
	xs := core.NewShared(normalArray(rng, 1, 2, 5, 3), "xs")
	c := core.NewConstant(normalArray(rng, 0, 1, 5, 3))
	bn.Enter()
	y := mustApply(t, bn, "apply", xs)
	bn.Exit()
	cost := core.SumAll(core.Mul(y, c))
	wrt := []*core.Variable{xs, bn.Scale, bn.Shift}
	grads, err := core.Grad(cost, wrt, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := core.Compile(nil, append([]*core.Variable{cost}, grads...), nil)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := f.Call(nil)
	// h = 1e-6: truncation O(h²) and rounding ~1e-16/h; 1e-6 relative
	// tolerance is loose for both.
	const h = 1e-6
	for k, p := range wrt {
		for i := range p.Value().Size() {
			old := p.Value().Flat(i)
			p.Value().SetFlat(i, old+h)
			fp, _ := f.Call(nil)
			p.Value().SetFlat(i, old-h)
			fm, _ := f.Call(nil)
			p.Value().SetFlat(i, old)
			fd := (fp[0].Flat(0) - fm[0].Flat(0)) / (2 * h)
			g := o[k+1].Flat(i)
			if math.Abs(fd-g) > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("d cost / d %s[%d] = %v, finite differences %v", p, i, g, fd)
			}
		}
	}
}

func TestSpatialBatchNormalization(t *testing.T) {
	cfg := NewConfig(nd.Float64, 1)
	bn := NewSpatialBatchNormalization(cfg, "")
	bn.InputDim, bn.InputDimTuple = Size{2, 3, 3}, true
	if err := Initialize(bn); err != nil {
		t.Fatal(err)
	}
	if s := bn.PopulationMean.Value().Shape; !slices.Equal(s, []int{2, 1, 1}) {
		t.Fatalf("population_mean shape %v, want (2, 1, 1)", s)
	}
	x := core.NewInput("x", nd.Float64, 4)
	bn.Enter()
	y := mustApply(t, bn, "apply", x)
	bn.Exit()
	xv := normalArray(numpyrand.New(4), 1, 3, 4, 2, 3, 3)
	out := eval(t, []*core.Variable{x}, []*nd.Array{xv}, y)[0].F64()
	// Each channel is normalized over batch and space: mean 0, variance
	// var/(var+eps) ≈ 1.
	for ch := range 2 {
		var s, s2 float64
		n := 0
		for b := range 4 {
			for k := range 9 {
				v := out[(b*2+ch)*9+k]
				s += v
				s2 += v * v
				n++
			}
		}
		if m := s / float64(n); math.Abs(m) > 1e-12 || math.Abs(s2/float64(n)-1) > 1e-4 {
			t.Errorf("channel %d: mean %v, second moment %v", ch, m, s2/float64(n))
		}
	}
}

func TestBatchNormalizedMLPStructure(t *testing.T) {
	cfg := NewConfig(nd.Float64, 1)
	acts := []Brick{}
	for range 2 {
		a, _ := NewActivation(cfg, "Tanh", "", 0)
		acts = append(acts, a)
	}
	m, err := NewBatchNormalizedMLP(cfg, "", acts, []int{4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	m.WeightsInit = initialization.IsotropicGaussian{Std: 0.1}
	if err := Initialize(m); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range AllParameters(m) {
		names = append(names, ParameterPath(p))
	}
	want := []string{"/batchnormalizedmlp/linear_0.W", "/batchnormalizedmlp/batch_norm_activation_0/batchnormalization.batch_norm_shift",
		"/batchnormalizedmlp/batch_norm_activation_0/batchnormalization.batch_norm_scale", "/batchnormalizedmlp/linear_1.W",
		"/batchnormalizedmlp/batch_norm_activation_1/batchnormalization.batch_norm_shift", "/batchnormalizedmlp/batch_norm_activation_1/batchnormalization.batch_norm_scale"}
	if !slices.Equal(names, want) {
		t.Errorf("parameters\n%v\nwant\n%v", names, want)
	}
	if d := m.BNs[1].PopulationMean.Value().Shape; !slices.Equal(d, []int{6}) {
		t.Errorf("second BN population_mean %v", d)
	}
	// Two layers: the training graph's second normalization sees the
	// first in training mode (replacements rewrite later ones).
	x := core.NewInput("x", nd.Float64, 2)
	y := mustApply(t, m, "apply", x)
	tg, err := ApplyBatchNormalization(graph.New([]*core.Variable{y}))
	if err != nil {
		t.Fatal(err)
	}
	ups, err := BatchNormalizationUpdates(tg, false)
	if err != nil || len(ups) != 4 {
		t.Fatalf("updates %v %v", ups, err)
	}
	est, _ := (&graph.VariableFilter{Roles: []*core.Role{core.BatchNormMinibatchEstimate}}).Apply(tg.Variables)
	if len(est) != 4 {
		t.Errorf("%d minibatch estimates in the training graph, want 4", len(est))
	}
	for _, v := range core.Ancestors([]*core.Variable{ups[2].Value}) {
		if core.HasRole(v, core.BatchNormPopulationMean) {
			t.Error("the second layer's minibatch mean depends on a population mean: the first layer is not in training mode")
		}
	}
}
