package algorithms

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/parallel"
)

// tinyNet is a float32 two-layer regression net trained with Adam, with
// the cost and the total gradient norm monitored on the training data.
type tinyNet struct {
	W1, b1, W2 *core.Variable
	gd         *GradientDescent
	costs      []float64
	norms      []float64
	rng        *numpyrand.RandomState // dropout's generator, if any
}

func newTinyNet(t *testing.T, mb *Microbatching) *tinyNet {
	t.Helper()
	return newNet(t, mb, 0)
}

// newNet is newTinyNet with dropout of probability drop on the hidden
// layer when drop > 0 (its generator seeded with 1234).
func newNet(t *testing.T, mb *Microbatching, drop float64) *tinyNet {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	w := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * 0.3)
		}
		return v
	}
	n := &tinyNet{
		W1: core.NewShared(nd.FromSlice(w(5*8), 5, 8), "W1"),
		b1: core.NewShared(nd.FromSlice(w(8), 8), "b1"),
		W2: core.NewShared(nd.FromSlice(w(8*1), 8, 1), "W2"),
	}
	x := core.NewInput("x", nd.Float32, 2)
	y := core.NewInput("y", nd.Float32, 2)
	h1, err := core.Dot(x, n.W1)
	if err != nil {
		t.Fatal(err)
	}
	h := core.Tanh(core.Add(h1, n.b1))
	if drop > 0 {
		n.rng = numpyrand.New(1234)
		mask, err := core.BinomialLike(h, 1-drop, nd.Float32, n.rng)
		if err != nil {
			t.Fatal(err)
		}
		h = core.Mul(h, mask)
	}
	out, err := core.Dot(h, n.W2)
	if err != nil {
		t.Fatal(err)
	}
	cost := core.MeanAll(core.Sqr(core.Sub(out, y)))
	cost.Name = "cost"
	gd, err := NewGradientDescent(GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{n.W1, n.b1, n.W2}, StepRule: NewAdam(nd.Float32, 0.01, 0.9, 0.999, 1e-8, 1-1e-8)})
	if err != nil {
		t.Fatal(err)
	}
	gd.Microbatching = mb
	if err := gd.AddOutputs([]*core.Variable{cost, gd.TotalGradientNorm}, func(v []*nd.Array) error {
		n.costs = append(n.costs, v[0].Flat(0))
		n.norms = append(n.norms, v[1].Flat(0))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n.gd = gd
	return n
}

func batches(steps, size int) []map[string]*nd.Array {
	r := rand.New(rand.NewPCG(3, 4))
	var out []map[string]*nd.Array
	for range steps {
		x := make([]float32, size*5)
		y := make([]float32, size)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for i := range y {
			y[i] = float32(math.Sin(float64(x[5*i]) + float64(x[5*i+1])))
		}
		out = append(out, map[string]*nd.Array{"x": nd.FromSlice(x, size, 5), "y": nd.FromSlice(y, size, 1)})
	}
	return out
}

func (n *tinyNet) train(t *testing.T, bs []map[string]*nd.Array) error {
	if err := n.gd.Initialize(); err != nil {
		return err
	}
	for _, b := range bs {
		if err := n.gd.ProcessBatch(b); err != nil {
			return err
		}
	}
	return nil
}

func (n *tinyNet) params() [][]float32 {
	return [][]float32{n.W1.Value().F32(), n.b1.Value().F32(), n.W2.Value().F32()}
}

func sameF32(a, b [][]float32) bool {
	for i := range a {
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

// trainOn trains n goroutine "processes" with K microbatches and returns
// each one's net.
func trainOn(t *testing.T, procs, k int, bs []map[string]*nd.Array) []*tinyNet {
	t.Helper()
	return trainNets(t, procs, k, bs, 0)
}

// trainNets is trainOn with dropout of probability drop.
func trainNets(t *testing.T, procs, k int, bs []map[string]*nd.Array, drop float64) []*tinyNet {
	t.Helper()
	comms := parallel.NewLocalGroup(procs, 20*time.Second)
	nets := make([]*tinyNet, procs)
	for r := range procs {
		nets[r] = newNet(t, &Microbatching{K: k, Comm: comms[r]}, drop)
	}
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for r := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[r] = nets[r].train(t, bs) }()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%d processes, rank %d: %v", procs, r, err)
		}
	}
	return nets
}

func TestMicrobatchesSameBitsOnAnyNumberOfProcesses(t *testing.T) {
	bs := batches(30, 64)
	bs = append(bs, batches(1, 42)...) // a last batch of unequal microbatches
	ref := trainOn(t, 1, 4, bs)[0]
	for _, procs := range []int{2, 4} {
		for r, n := range trainOn(t, procs, 4, bs) {
			if !sameF32(n.params(), ref.params()) {
				t.Errorf("%d processes: rank %d's parameters differ from one process's", procs, r)
			}
			for i := range ref.costs {
				if n.costs[i] != ref.costs[i] || n.norms[i] != ref.norms[i] {
					t.Fatalf("%d processes, rank %d, step %d: cost %v norm %v, one process %v %v", procs, r, i, n.costs[i], n.norms[i], ref.costs[i], ref.norms[i])
				}
			}
		}
	}
	// K = 1 on one process is the plain algorithm, and microbatches
	// change the rounding only: the step is the full batch's.
	plain := newTinyNet(t, nil)
	if err := plain.train(t, bs); err != nil {
		t.Fatal(err)
	}
	one := newTinyNet(t, &Microbatching{K: 1})
	if err := one.train(t, bs); err != nil {
		t.Fatal(err)
	}
	if !sameF32(one.params(), plain.params()) {
		t.Fatal("K=1 on one process differs from the plain algorithm")
	}
	if sameF32(ref.params(), plain.params()) {
		t.Fatal("4 microbatches gave the same bits as the full batch: the test cannot tell the order of the sums")
	}
	for i, p := range ref.params() {
		for j, v := range p {
			if d := math.Abs(float64(v - plain.params()[i][j])); d > 1e-4 {
				t.Fatalf("parameter %d[%d]: %v with microbatches, %v without", i, j, v, plain.params()[i][j])
			}
		}
	}
	for i := range ref.costs {
		if d := math.Abs(ref.costs[i] - plain.costs[i]); d > 1e-5*math.Max(1, plain.costs[i]) {
			t.Fatalf("step %d: cost %v with microbatches, %v without", i, ref.costs[i], plain.costs[i])
		}
	}
}

func TestMicrobatchErrors(t *testing.T) {
	n := newTinyNet(t, &Microbatching{K: 3, Comm: parallel.NewLocalGroup(2, time.Second)[0]})
	if err := n.gd.Initialize(); err == nil || !strings.Contains(err.Error(), "3 microbatches cannot be shared equally by 2 processes") {
		t.Fatalf("got %v", err)
	}
	n = newTinyNet(t, &Microbatching{K: 8})
	if err := n.train(t, batches(1, 5)); err == nil || !strings.Contains(err.Error(), "a batch of 5 examples cannot be cut into 8 microbatches") {
		t.Fatalf("got %v", err)
	}
	// Processes that built different parameters stop at the start.
	comms := parallel.NewLocalGroup(2, 5*time.Second)
	a := newTinyNet(t, &Microbatching{K: 2, Comm: comms[0]})
	b := newTinyNet(t, &Microbatching{K: 2, Comm: comms[1]})
	b.W1.Value().F32()[3] += 1
	var wg sync.WaitGroup
	var ea, eb error
	wg.Add(2)
	go func() { defer wg.Done(); ea = a.gd.Initialize() }()
	go func() { defer wg.Done(); eb = b.gd.Initialize() }()
	wg.Wait()
	for _, err := range []error{ea, eb} {
		if err == nil || !strings.Contains(err.Error(), "initial parameters and algorithm state") {
			t.Fatalf("got %v", err)
		}
	}
}
