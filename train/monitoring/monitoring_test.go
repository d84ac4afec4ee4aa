package monitoring

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/algorithms"
)

func f32(xs ...float32) []float32 { return xs }

// numRows is the number of rows of a matrix, as a float32 variable.
func numRows(x *core.Variable) *core.Variable {
	s, err := core.Sum(x, []int{1}, false, nil)
	if err != nil {
		panic(err)
	}
	return core.SumAll(core.Add(core.Mul(s, core.Const(nd.Float32, 0)), core.Const(nd.Float32, 1)))
}

func TestUnweightedMeanOverBatches(t *testing.T) {
	t.Setenv("FUEL_FLOATX", "float32")
	// 5 examples in batches of 2, 2 and 1.
	stream := &arrayStream{sources: []string{"features"}, data: []*nd.Array{nd.FromSlice(f32(0, 1, 2, 3, 4), 5, 1)}, batchSize: 2}
	x := core.NewInput("features", nd.Float32, 2)
	m := core.MeanAll(x)
	m.Name = "mean_x"
	weighted := MeanOf(core.SumAll(x), numRows(x))
	weighted.Name = "weighted_mean_x"
	ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{m, weighted}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := ev.Evaluate(stream)
	if err != nil {
		t.Fatal(err)
	}
	// Batch means 0.5, 2.5 and 4 count equally: 7/3, not the example mean 2.
	got := vals["mean_x"]
	if got.DType() != nd.Float32 || got.NDim() != 0 {
		t.Fatalf("mean_x is %s %v", got.DType(), got.Shape)
	}
	if want := float32(7) / 3; got.F32()[0] != want {
		t.Errorf("mean_x = %v, want %v (unweighted mean of batch means)", got.F32()[0], want)
	}
	if w := vals["weighted_mean_x"].Flat(0); w != 2 {
		t.Errorf("weighted mean = %v, want 2", w)
	}
	if names := ev.Names(); len(names) != 2 || names[0] != "mean_x" || names[1] != "weighted_mean_x" {
		t.Errorf("names %v", names)
	}
	// A second evaluation starts afresh.
	vals, err = ev.Evaluate(stream)
	if err != nil {
		t.Fatal(err)
	}
	if got := vals["mean_x"].F32()[0]; got != float32(7)/3 {
		t.Errorf("second evaluation: %v", got)
	}
}

func features5x2() *nd.Array {
	return nd.FromSlice(f32(0, 3, 2, 9, 2, 4, 5, 1, 6, 7), 5, 2)
}

// Blocks' tests/monitoring/test_aggregation.py::_test_mean_like_aggregator.
func TestMeanAndPerplexitySchemes(t *testing.T) {
	for _, perplexity := range []bool{false, true} {
		stream := &arrayStream{sources: []string{"features"}, data: []*nd.Array{features5x2()}, batchSize: 2}
		x := core.NewInput("features", nd.Float32, 2)
		y, _ := core.Sum(core.Sqrt(x), []int{0}, false, nil)
		y.Name = "y"
		z := core.SumAll(y)
		z.Name = "z"
		if perplexity {
			y.Tag.Aggregation = &Perplexity{y, numRows(x)}
			z.Tag.Aggregation = &Perplexity{z, numRows(x)}
		} else {
			y.Tag.Aggregation = &Mean{y, numRows(x)}
			z.Tag.Aggregation = &Mean{z, numRows(x)}
		}
		ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{y, z}, nil)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := ev.Evaluate(stream)
		if err != nil {
			t.Fatal(err)
		}
		f := features5x2().F32()
		var ywant [2]float64
		zwant := 0.0
		for i := 0; i < 5; i++ {
			for j := 0; j < 2; j++ {
				ywant[j] += math.Sqrt(float64(f[2*i+j])) / 5
				zwant += math.Sqrt(float64(f[2*i+j])) / 5
			}
		}
		fn := func(v float64) float64 {
			if perplexity {
				return math.Exp(-v)
			}
			return v
		}
		for j := 0; j < 2; j++ {
			if got := vals["y"].Flat(j); math.Abs(got-fn(ywant[j])) > 1e-5 {
				t.Errorf("perplexity=%v: y[%d] = %v, want %v", perplexity, j, got, fn(ywant[j]))
			}
		}
		if got := vals["z"].Flat(0); math.Abs(got-fn(zwant)) > 1e-5 {
			t.Errorf("perplexity=%v: z = %v, want %v", perplexity, got, fn(zwant))
		}
	}
}

// Blocks' test_min_max_aggregators.
func TestMinMaxAggregators(t *testing.T) {
	x := core.NewInput("features", nd.Float32, 2)
	y, _ := core.Sum(core.Sqr(x), []int{0}, false, nil)
	y.Name = "y"
	z, _ := core.Min(y, nil, false)
	z.Name = "z"
	y.Tag.Aggregation = &Maximum{y}
	z.Tag.Aggregation = &Minimum{z}
	ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{y, z}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(data []float32, wantY []float64, wantZ float64) {
		t.Helper()
		vals, err := ev.Evaluate(&arrayStream{sources: []string{"features"}, data: []*nd.Array{nd.FromSlice(data, 4, 2)}, batchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := vals["y"].Float64s(); got[0] != wantY[0] || got[1] != wantY[1] {
			t.Errorf("y = %v, want %v", got, wantY)
		}
		if got := vals["z"].Flat(0); got != wantZ {
			t.Errorf("z = %v, want %v", got, wantZ)
		}
	}
	check(f32(2, 3, 2, 9, 2, 4, 5, 1), []float64{29, 90}, 8)
	check(f32(2, 1, 1, 3, 1, -1, 2.5, 1), []float64{7.25, 10}, 2)
}

func TestTakeLastAndConcatenate(t *testing.T) {
	x := core.NewInput("features", nd.Float32, 2)
	s := core.SumAll(x)
	s.Name = "s"
	last := TakeLastOf(s)
	all := ConcatenateOf(s)
	all.Name = "all_s"
	ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{last, all}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := ev.Evaluate(&arrayStream{sources: []string{"features"}, data: []*nd.Array{features5x2()}, batchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := vals["s"].Flat(0); got != 13 {
		t.Errorf("take_last = %v, want 13", got)
	}
	if got := vals["all_s"]; !nd.SameShape(got.Shape, []int{3}) || got.Flat(0) != 14 || got.Flat(1) != 12 || got.Flat(2) != 13 {
		t.Errorf("concatenate = %v %v", got.Shape, got)
	}
}

func TestDataIndependentComputedOnce(t *testing.T) {
	W := core.NewShared(nd.FromSlice([]float64{1, 2}), "W")
	wsum := core.SumAll(W).Copy()
	wsum.Name = "W_sum"
	stream := &arrayStream{sources: []string{"features"}, data: []*nd.Array{features5x2()}, batchSize: 2}
	ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{wsum}, nil)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := ev.Evaluate(stream)
	if err != nil {
		t.Fatal(err)
	}
	if vals["W_sum"].Flat(0) != 3 || stream.epochs != 0 {
		t.Errorf("W_sum = %v, stream read %d times (want 3, 0)", vals["W_sum"], stream.epochs)
	}
	// With data-dependent variables the stream is read once per evaluation.
	x := core.NewInput("features", nd.Float32, 2)
	m := core.MeanAll(x)
	m.Name = "m"
	ev, err = NewDatasetEvaluator(device.Device{}, []*core.Variable{wsum, m}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(stream); err != nil || stream.epochs != 1 {
		t.Errorf("err %v, epochs %d", err, stream.epochs)
	}
	if in := ev.Inputs(); len(in) != 1 || in[0] != x {
		t.Errorf("inputs %v", in)
	}
}

func TestEvaluatorErrors(t *testing.T) {
	x := core.NewInput("features", nd.Float32, 2)
	a := core.MeanAll(x)
	if _, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{a}, nil); err == nil || !strings.Contains(err.Error(), "must have names") {
		t.Errorf("unnamed: %v", err)
	}
	a.Name = "a"
	b := core.SumAll(x)
	b.Name = "a"
	if _, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{a, b}, nil); err == nil || !strings.Contains(err.Error(), "Duplicates: a") {
		t.Errorf("duplicates: %v", err)
	}
	b.Name = "b"
	ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Extra sources are ignored; a missing one is named.
	_, err = ev.Evaluate(&arrayStream{sources: []string{"targets"}, data: []*nd.Array{features5x2()}, batchSize: 2})
	var se *algorithms.SourcesError
	if !errors.As(err, &se) || se.Missing[0] != "features" {
		t.Errorf("missing source: %v", err)
	}
	if _, err := ev.Evaluate(&arrayStream{sources: []string{"targets", "features"}, data: []*nd.Array{features5x2(), features5x2()}, batchSize: 2}); err != nil {
		t.Errorf("extra source: %v", err)
	}
	_, err = ev.Evaluate(&arrayStream{sources: []string{"features"}, data: []*nd.Array{nd.New(nd.Float32, 4, 1, 2, 2)}, batchSize: 2})
	if err == nil || err.Error() != `source "features" has shape (2, 1, 2, 2) but the input variable features is a matrix (2-d)` {
		t.Errorf("shape error: %v", err)
	}
	a.Tag.Aggregation = "mean"
	if _, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{a}, nil); err == nil {
		t.Error("bad scheme: no error")
	}
}

func TestAggregationBufferTakeLastForDataIndependent(t *testing.T) {
	x := core.NewInput("features", nd.Float32, 2)
	V := core.NewShared(nd.Scalar(nd.Float32, 7), "V")
	m := core.MeanAll(x)
	m.Name = "m"
	buf, err := NewAggregationBuffer(device.Device{}, []*core.Variable{V, m}, true)
	if err != nil {
		t.Fatal(err)
	}
	if req := buf.Requires(); len(req) != 2 || req[0] != V || req[1] != m {
		t.Fatalf("requires %v", req)
	}
	if _, err := buf.GetAggregatedValues(); err == nil {
		t.Error("readout before initialization: no error")
	}
	buf.InitializeAggregators()
	for i := 1; i <= 3; i++ {
		if err := buf.Aggregate([]*nd.Array{nd.Scalar(nd.Float32, float64(i)), nd.Scalar(nd.Float32, float64(10*i))}); err != nil {
			t.Fatal(err)
		}
	}
	vals, err := buf.GetAggregatedValues()
	if err != nil {
		t.Fatal(err)
	}
	if vals["V"].Flat(0) != 3 || vals["m"].Flat(0) != 20 {
		t.Errorf("V = %v (take last), m = %v (mean)", vals["V"], vals["m"])
	}
	buf.InitializeAggregators()
	vals, _ = buf.GetAggregatedValues()
	if !math.IsNaN(vals["m"].Flat(0)) {
		t.Errorf("mean over no batches = %v, want nan (0/0)", vals["m"])
	}
}
