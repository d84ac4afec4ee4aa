package monitoring

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/parallel"
	"github.com/blocks-go/blocks/nd"
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
		ev, err := NewDatasetEvaluator([]*core.Variable{m, w, mx, cat}, nil)
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
