package monitoring

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/parallel"
)

// The batches of an evaluation shared among 2 and 3 processes give the
// same bits as one process (means, a weighted mean, a maximum, a
// concatenation), 11 batches so that the processes get unequal shares.
func TestEvaluateSplitSameBits(t *testing.T) {
	t.Setenv("FUEL_FLOATX", "float32")
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]float32, 110*3)
	for i := range data {
		data[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2)))
	}
	evaluate := func(comm parallel.Comm) map[string]*nd.Array {
		x := core.NewInput("features", nd.Float32, 2)
		m := core.MeanAll(core.Sqr(x))
		m.Name = "mean_sq"
		w := MeanOf(core.SumAll(x), numRows(x))
		w.Name = "weighted"
		mx := MaximumOf(core.SumAll(x))
		mx.Name = "max_sum"
		cat := ConcatenateOf(core.Tanh(x))
		cat.Name = "tanh"
		ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{m, w, mx, cat}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ev.SetComm(comm)
		vals, err := ev.Evaluate(&arrayStream{sources: []string{"features"}, data: []*nd.Array{nd.FromSlice(data, 110, 3)}, batchSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		return vals
	}
	want := evaluate(nil)
	for _, n := range []int{2, 3} {
		comms := parallel.NewLocalGroup(n, 10*time.Second)
		got := make([]map[string]*nd.Array, n)
		var wg sync.WaitGroup
		for k := range n {
			wg.Add(1)
			go func() { defer wg.Done(); got[k] = evaluate(comms[k]) }()
		}
		wg.Wait()
		for k := range n {
			for name, v := range want {
				g := got[k][name]
				if g == nil || !nd.SameShape(g.Shape, v.Shape) || string(parallel.RawBytes(g)) != string(parallel.RawBytes(v)) {
					t.Errorf("%d processes, process %d: %s = %v, one process %v", n, k, name, g, v)
				}
			}
		}
	}
}

// An evaluation that draws random numbers (a dropout mask) is not shared:
// every process computes every batch, drawing what one process draws.
func TestEvaluateRandomNotSplit(t *testing.T) {
	t.Setenv("FUEL_FLOATX", "float32")
	data := make([]float32, 50*4)
	for i := range data {
		data[i] = float32(i%7) - 3
	}
	evaluate := func(comm parallel.Comm) (*nd.Array, numpyrand.State) {
		x := core.NewInput("features", nd.Float32, 2)
		rng := numpyrand.New(9)
		mask, err := core.BinomialLike(x, 0.5, nd.Float32, rng)
		if err != nil {
			t.Fatal(err)
		}
		m := core.MeanAll(core.Mul(x, mask))
		m.Name = "masked"
		ev, err := NewDatasetEvaluator(device.Device{}, []*core.Variable{m}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ev.SetComm(comm)
		vals, err := ev.Evaluate(&arrayStream{sources: []string{"features"}, data: []*nd.Array{nd.FromSlice(data, 50, 4)}, batchSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		return vals["masked"], rng.State()
	}
	want, wantRNG := evaluate(nil)
	comms := parallel.NewLocalGroup(2, 10*time.Second)
	var wg sync.WaitGroup
	for k := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, rng := evaluate(comms[k])
			if string(parallel.RawBytes(got)) != string(parallel.RawBytes(want)) || rng != wantRNG {
				t.Errorf("process %d: masked = %v, one process %v (or the generator moved otherwise)", k, got, want)
			}
		}()
	}
	wg.Wait()
}
