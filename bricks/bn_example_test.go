package bricks

import (
	"fmt"
	"math"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/fuel/datasets/toy"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
)

type bnExampleResult struct {
	trainMisclass, testMisclass float64
	// worst |population - actual| / actual std over all units, for the
	// moving average of the example (alpha) and after a pass over the
	// training set that averages the statistics of 4 batches of 2000
	// (Blocks' docs' other suggestion)
	emaErr, passErr float64
}

// runBNExample is blocks-examples' batch_normalization main(num_epochs,
// batch_normalized, alpha=0.1): Spiral(10000 examples, 3 arms, noise 0.05),
// an MLP 2-5-5-5-3 of Logistic with a Softmax, IsotropicGaussian(0.2) and
// Constant(0), Adam(0.001), ShuffledScheme over the first 8000 examples in
// batches of 20; the inference graph is monitored on the training and test
// sets after training.
func runBNExample(t *testing.T, epochs int, batchNormalized bool, alpha float64) bnExampleResult {
	cfg := NewConfig(nd.Float32, 1)
	var acts []Brick
	for range 3 {
		a, _ := NewActivation(cfg, "Logistic", "", 0)
		acts = append(acts, a)
	}
	acts = append(acts, NewSoftmax(cfg, ""))
	dims := []int{2, 5, 5, 5, 3}
	var mlp Brick
	var bnmlp *BatchNormalizedMLP
	if batchNormalized {
		m, err := NewBatchNormalizedMLP(cfg, "", acts, dims)
		if err != nil {
			t.Fatal(err)
		}
		m.ConserveMemory = false
		mlp, bnmlp = m, m
	} else {
		m, err := NewMLP(cfg, "", acts, dims)
		if err != nil {
			t.Fatal(err)
		}
		mlp = m
	}
	_ = SetInitSchemes(mlp, initialization.IsotropicGaussian{Std: 0.2}, initialization.Constant{Value: 0})
	if err := Initialize(mlp); err != nil {
		t.Fatal(err)
	}
	o := toy.DefaultSpiral()
	o.NumExamples, o.Classes, o.Noise = 10000, 3, 0.05
	spiral, err := toy.Spiral(o)
	if err != nil {
		t.Fatal(err)
	}
	feat, _ := spiral.Data("features")
	label, _ := spiral.Data("label")
	features := core.NewInput("features", nd.Float32, 2)
	lab := core.NewInput("label", nd.Int64, 1)
	prediction := mustApply(t, mlp, "apply", features)
	ce, _ := NewCost(cfg, "CategoricalCrossEntropy", "", 1)
	cost := mustApply(t, ce, "apply", lab, prediction)
	mr, _ := NewCost(cfg, "MisclassificationRate", "", 1)
	misclass := mustApply(t, mr, "apply", lab, prediction)
	misclass.Name = "misclass"
	original := graph.New([]*core.Variable{cost, misclass})
	cg := original
	var extra []core.Update
	if batchNormalized {
		if cg, err = ApplyBatchNormalization(original); err != nil {
			t.Fatal(err)
		}
		pop, err := BatchNormalizationUpdates(cg, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range pop {
			dt := u.Shared.DType()
			extra = append(extra, core.Update{Shared: u.Shared, Value: core.Add(core.Mul(u.Value, core.Const(dt, alpha)), core.Mul(u.Shared, core.Const(dt, 1-alpha)))})
		}
	}
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: cg.Outputs[0], Parameters: cg.Parameters(), StepRule: algorithms.NewAdam(nd.Float32, 0.001, 0.9, 0.999, 1e-8, 1-1e-8)})
	if err != nil {
		t.Fatal(err)
	}
	if err := gd.AddUpdates(extra); err != nil {
		t.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		t.Fatal(err)
	}
	scheme, err := schemes.ShuffledScheme(schemes.Range(8000), 20, numpyrand.New(1), false)
	if err != nil {
		t.Fatal(err)
	}
	f := feat.F32()
	l := label.I64()
	gather := func(idx []int) map[string]*nd.Array {
		fb := make([]float32, 2*len(idx))
		lb := make([]int64, len(idx))
		for k, i := range idx {
			fb[2*k], fb[2*k+1], lb[k] = f[2*i], f[2*i+1], l[i]
		}
		return map[string]*nd.Array{"features": nd.FromSlice(fb, len(idx), 2), "label": nd.FromSlice(lb, len(idx))}
	}
	for range epochs {
		it, err := scheme.GetRequestIterator()
		if err != nil {
			t.Fatal(err)
		}
		for {
			req, err := it.Next()
			if err != nil {
				break
			}
			if err := gd.ProcessBatch(gather(req.Indices)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Monitor the inference graph (population statistics) as the example
	// does: misclassification on the training and test sets.
	rangeIdx := func(lo, hi int) []int {
		out := make([]int, hi-lo)
		for i := range out {
			out[i] = lo + i
		}
		return out
	}
	var r bnExampleResult
	eval := func(idx []int, outs ...*core.Variable) []*nd.Array {
		fn, err := core.Compile([]*core.Variable{features, lab}, outs, nil)
		if err != nil {
			t.Fatal(err)
		}
		batch := gather(idx)
		v, err := fn.Call([]*nd.Array{batch["features"], batch["label"]})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The training set in batches of 20, averaged (DataStreamMonitoring's
	// mean over batches), and the test set in one batch of 2000.
	trainFn, _ := core.Compile([]*core.Variable{features, lab}, []*core.Variable{misclass}, nil)
	for s := 0; s < 8000; s += 20 {
		batch := gather(rangeIdx(s, s+20))
		v, err := trainFn.Call([]*nd.Array{batch["features"], batch["label"]})
		if err != nil {
			t.Fatal(err)
		}
		r.trainMisclass += v[0].Flat(0) / 400
	}
	r.testMisclass = eval(rangeIdx(8000, 10000), misclass)[0].Flat(0)
	if bnmlp != nil {
		// The population statistics against the mean and standard
		// deviation of each normalization's input over the training set,
		// computed with the inference graph.
		var ins []*core.Variable
		for _, v := range original.Variables {
			if c := v.Tag.ApplicationCall; c != nil && core.HasRole(v, core.Input) {
				if _, ok := c.Brick.(*BatchNormalization); ok {
					ins = append(ins, v)
				}
			}
		}
		compare := func(what string) float64 {
			worst := 0.0
			acts := eval(rangeIdx(0, 8000), ins...)
			for k, bn := range bnmlp.BNs {
				a := acts[k]
				d := a.Shape[1]
				for j := range d {
					var s, s2 float64
					for i := range 8000 {
						x := a.Flat(i*d + j)
						s += x
						s2 += x * x
					}
					mean := s / 8000
					// The divisor is sqrt(var + epsilon), epsilon = 1e-4.
					std := math.Sqrt(s2/8000 - mean*mean + 1e-4)
					em := math.Abs(bn.PopulationMean.Value().Flat(j)-mean) / std
					es := math.Abs(bn.PopulationStdev.Value().Flat(j)-std) / std
					worst = max(worst, em, es)
					if testing.Verbose() {
						fmt.Printf("%s: bn %d unit %d: population mean %.4f stdev %.4f; training set %.4f %.4f\n", what, k, j, bn.PopulationMean.Value().Flat(j), bn.PopulationStdev.Value().Flat(j), mean, std)
					}
				}
			}
			return worst
		}
		r.emaErr = compare("moving average")
		// A pass over the training set in 4 batches of 2000, parameters
		// fixed, making each statistic the running mean of the batches'
		// (p <- p + (m - p)/k at batch k).
		pop, err := BatchNormalizationUpdates(cg, false)
		if err != nil {
			t.Fatal(err)
		}
		w := core.NewShared(nd.Scalar(nd.Float32, 1), "w")
		var ups []core.Update
		for _, u := range pop {
			ups = append(ups, core.Update{Shared: u.Shared, Value: core.Add(u.Shared, core.Mul(core.Sub(u.Value, u.Shared), w))})
		}
		passFn, err := core.Compile([]*core.Variable{features}, nil, ups)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 4 {
			w.Value().SetFlat(0, 1/float64(k+1))
			if _, err := passFn.Call([]*nd.Array{gather(rangeIdx(2000*k, 2000*k+2000))["features"]}); err != nil {
				t.Fatal(err)
			}
		}
		r.passErr = compare("averaged pass")
	}
	return r
}

// Blocks-examples' test_batch_normalization_example: after 2 epochs, with
// batch normalization test_misclass < 0.62 and train_misclass < 0.6;
// without, both > 0.65.
func TestBatchNormalizationExample(t *testing.T) {
	bn := runBNExample(t, 2, true, 0.1)
	t.Logf("with batch normalization: train_misclass %.4f test_misclass %.4f", bn.trainMisclass, bn.testMisclass)
	t.Logf("population statistics vs the training set's (worst unit, in units of its standard deviation): moving average (alpha 0.1) %.1f%%, averaged pass %.2f%%", 100*bn.emaErr, 100*bn.passErr)
	if !(bn.testMisclass < 0.62 && bn.trainMisclass < 0.6) {
		t.Errorf("with batch normalization: test_misclass %.4f (want < 0.62), train_misclass %.4f (want < 0.6)", bn.testMisclass, bn.trainMisclass)
	}
	nbn := runBNExample(t, 2, false, 0.1)
	t.Logf("without: train_misclass %.4f test_misclass %.4f", nbn.trainMisclass, nbn.testMisclass)
	if !(nbn.testMisclass > 0.65 && nbn.trainMisclass > 0.65) {
		t.Errorf("without batch normalization: test_misclass %.4f, train_misclass %.4f (want both > 0.65)", nbn.testMisclass, nbn.trainMisclass)
	}
	// The moving average of batch-20 statistics is noisy (a batch std has
	// relative spread ~1/sqrt(40), the average keeps alpha/(2-alpha) of
	// its variance: ~4% per unit, ~2-3 times that at the worst of 18
	// units); the averaged pass must be within 5%.
	if bn.emaErr > 0.3 {
		t.Errorf("moving-average population statistics off by %.1f%% of the activations' standard deviation (want within 30%%)", 100*bn.emaErr)
	}
	if bn.passErr > 0.05 {
		t.Errorf("population statistics after the averaged pass off by %.1f%% of the activations' standard deviation (want within 5%%)", 100*bn.passErr)
	}
}
