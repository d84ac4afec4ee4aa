package bench

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
)

// The Go side of make bench's tables is these benchmarks and the step
// benchmarks of mlp_test.go, lenet_test.go and rnn_test.go; bench/report
// runs them (go test -bench output, for benchstat) interleaved with the
// PyTorch twins and writes the tables and the scaling plot.

type product struct {
	m, n, k int
	tA, tB  bool
	// reps is how many such products the step runs one after the other
	// (a recurrent layer's per-time-step products; 0 means 1), each as
	// the Dot op runs it (kernels.Sgemm: split across the two cores when
	// large).
	reps int
	// groups, when above 1, is how many independent products of this
	// shape the step runs side by side, half on each core, each with a
	// single-threaded OpenBLAS call (the convolutions' groups of images,
	// core/exec/cpu/kernels/conv.go).
	groups int
}

// mlpProducts are the products of one SGD step of a 784-h-10 MLP with
// batch b: two forward, three backward (no gradient for the data).
func mlpProducts(b, h int) []product {
	return []product{
		{m: b, n: h, k: 784},           // x·W1
		{m: b, n: 10, k: h},            // h·W2
		{m: b, n: h, k: 10, tB: true},  // g2·W2ᵀ
		{m: 784, n: h, k: b, tA: true}, // xᵀ·g1
		{m: h, n: 10, k: b, tA: true},  // hᵀ·g2
	}
}

// lenetProducts are the GEMMs a step of the benchmark LeNet (batch 64)
// lowers to: its convolutions' (im2col, groups of images side by side:
// conv_0 2 images a group, 25 rows, 576 columns each; conv_1 16 images, 500
// rows, 64 columns each), the filters' gradients (transposed, COL·GZᵀ, as
// convBackwardWeights runs them) and conv_1's image gradient, then the
// 800-500-10 MLP's forward and backward products, the input's gradient
// included (it flows back into the convolutions).
func lenetProducts(b int) []product {
	g0, g1 := b/2, b/16
	return []product{
		{m: 20, n: 2 * 576, k: 25, groups: g0},            // conv_0: W·COL
		{m: 50, n: 16 * 64, k: 500, groups: g1},           // conv_1: W·COL
		{m: b, n: 500, k: 800},                            // flat·W1
		{m: b, n: 10, k: 500},                             // h·W2
		{m: b, n: 500, k: 10, tB: true},                   // g2·W2ᵀ
		{m: 500, n: 10, k: b, tA: true},                   // hᵀ·g2
		{m: b, n: 800, k: 500, tB: true},                  // g1·W1ᵀ
		{m: 800, n: 500, k: b, tA: true},                  // flatᵀ·g1
		{m: 500, n: 16 * 64, k: 50, tA: true, groups: g1}, // conv_1's image gradient: Wᵀ·GZ
		{m: 500, n: 50, k: 16 * 64, tB: true, groups: g1}, // conv_1's filters' gradient: COL·GZᵀ
		{m: 25, n: 20, k: 2 * 576, tB: true, groups: g0},  // conv_0's filters' gradient: COL·GZᵀ
	}
}

// rnnProducts are the products of a training step of one of
// torch_rnn.py's models (rnnConfigs): the input projections and their
// gradients, the recurrent products of every time step (forward h·W, and
// backward dA·Wᵀ), the recurrent weights' gradient over the whole
// sequence, the output layer and its gradients.
func rnnProducts(c rnnConfig) []product {
	tb, d := c.seq*c.bat, c.hidden
	var ps []product
	ins := []int{4 * d} // LSTM: one Linear to the four gates
	steps := []int{4 * d}
	if c.cell == "gru" { // GRU: the candidate's Linear, the gates' Linear
		ins = []int{d, 2 * d}
		steps = []int{2 * d, d} // the gates, then the candidate (r⊙h)·W
	}
	for _, w := range ins {
		ps = append(ps,
			product{m: tb, n: w, k: c.emb},           // x·W_in
			product{m: c.emb, n: w, k: tb, tA: true}, // xᵀ·dA
			product{m: tb, n: c.emb, k: w, tB: true}, // dA·W_inᵀ (the embeddings' gradient)
		)
	}
	for _, w := range steps {
		ps = append(ps,
			product{m: c.bat, n: w, k: d, reps: c.seq},           // h(t-1)·W
			product{m: c.bat, n: d, k: w, tB: true, reps: c.seq}, // dA(t)·Wᵀ
			product{m: d, n: w, k: tb, tA: true},                 // [h0..]ᵀ·dA
		)
	}
	return append(ps,
		product{m: tb, n: c.vocab, k: d},           // h·W_out
		product{m: d, n: c.vocab, k: tb, tA: true}, // hᵀ·g
		product{m: tb, n: d, k: c.vocab, tB: true}, // g·W_outᵀ
	)
}

// productModel is a table row with a matrix-multiply limit: its step, the
// examples (tokens) a step trains, and the step's products.
type productModel struct {
	torch    string // as run-torch.sh names it
	batch    int
	step     func(testing.TB) func() error
	products []product
}

func productModels() []productModel {
	mlp := func(batch, hidden int) func(testing.TB) func() error {
		return func(tb testing.TB) func() error {
			gd, data := mlpStep(tb, []int{784, hidden, 10}, batch, 0.1)
			return func() error { return gd.ProcessBatch(data) }
		}
	}
	ms := []productModel{
		{"mlp-tutorial", 256, mlp(256, 100), mlpProducts(256, 100)},
		{"mlp-500", 128, mlp(128, 500), mlpProducts(128, 500)},
		{"lenet", 64, lenetStep, lenetProducts(64)},
	}
	for _, name := range []string{"lstm-lm", "gru-lm", "lstm-big"} {
		c := rnnConfigs[name]
		ms = append(ms, productModel{name, c.seq * c.bat, func(tb testing.TB) func() error { return rnnStep(tb, name) }, rnnProducts(c)})
	}
	return ms
}

// prodRunner runs the products of one step on preallocated buffers.
type prodRunner struct {
	ps      []product
	a, b, c [][]float32
	flops   float64
}

func newProdRunner(ps []product) *prodRunner {
	r := &prodRunner{ps: ps}
	for _, p := range ps {
		copies := max(1, p.groups) // each group its own matrices, as each image group has
		a, b := make([]float32, copies*p.m*p.k), make([]float32, copies*p.k*p.n)
		for i := range a {
			a[i] = float32(i%7) * 0.1
		}
		for i := range b {
			b[i] = float32(i%5) * 0.1
		}
		r.a, r.b, r.c = append(r.a, a), append(r.b, b), append(r.c, make([]float32, copies*p.m*p.n))
		r.flops += 2 * float64(p.m*p.n*p.k) * float64(max(1, p.reps)*max(1, p.groups))
	}
	return r
}

// runGroups runs product p's groups g0, g0+2, ... with single-threaded
// OpenBLAS calls.
func (r *prodRunner) runGroups(i, g0 int) {
	p := r.ps[i]
	lda, ldb := p.k, p.n
	if p.tA {
		lda = p.m
	}
	if p.tB {
		ldb = p.k
	}
	mk, kn, mn := p.m*p.k, p.k*p.n, p.m*p.n
	for g := g0; g < p.groups; g += 2 {
		kernels.Gemm(p.tA, p.tB, p.m, p.n, p.k, r.a[i][g*mk:(g+1)*mk], lda, r.b[i][g*kn:(g+1)*kn], ldb, 0, r.c[i][g*mn:(g+1)*mn], p.n)
	}
}

// time runs the products reps times and returns the time taken.
func (r *prodRunner) time(reps int) time.Duration {
	t0 := time.Now()
	for range reps {
		for i, p := range r.ps {
			if p.groups > 1 {
				var wg sync.WaitGroup
				wg.Add(1)
				go func() { defer wg.Done(); r.runGroups(i, 1) }()
				r.runGroups(i, 0)
				wg.Wait()
				continue
			}
			for range max(1, p.reps) {
				kernels.Sgemm(p.tA, p.tB, p.m, p.n, p.k, r.a[i], r.b[i], r.c[i])
			}
		}
	}
	return time.Since(t0)
}

// BenchmarkProducts is the matrix-multiply limit of a table row's
// training step: its products alone (OpenBLAS through kernels.Sgemm, as
// the Dot op runs them; a convolution's groups side by side on the two
// cores, as its kernels run them), at the step's shapes, in examples/s
// (tokens/s for the recurrent models) and GFLOP/s, and the share of that
// limit the step reaches. The products run in chunks of 4 alternating
// with chunks of 4 steps, so that both see the same load; the share is
// the median over the pairs of chunks of (products' time / steps' time).
// (make bench takes the step's examples/s from its uninterrupted
// benchmark: a step right after a chunk of products finds its weights
// evicted from the caches by the products' own matrices, which training
// never does.) The recurrent models' fused sequences run their per-step
// products on their own packed-weight kernel (vec.Gemm32) where it beats
// OpenBLAS, so their share can pass 100%.
func BenchmarkProducts(b *testing.B) {
	for _, m := range productModels() {
		b.Run(m.torch, func(b *testing.B) {
			run := m.step(b)
			step := func() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			for range 3 {
				step()
			}
			r := newProdRunner(m.products)
			r.time(1) // warm-up
			b.ResetTimer()
			var tProd time.Duration
			var shares []float64
			for done := 0; done < b.N; {
				k := min(4, b.N-done)
				t0 := time.Now()
				for range k {
					step()
				}
				ts := time.Since(t0)
				tp := r.time(k)
				tProd += tp
				shares = append(shares, tp.Seconds()/ts.Seconds())
				done += k
			}
			slices.Sort(shares)
			share := shares[len(shares)/2]
			if len(shares)%2 == 0 {
				share = (shares[len(shares)/2-1] + share) / 2
			}
			b.ReportMetric(float64(b.N*m.batch)/tProd.Seconds(), "limit-examples/s")
			b.ReportMetric(r.flops*float64(b.N)/tProd.Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(100*share, "%-of-limit")
		})
	}
}

// scalingConfigs are the scaling table's configurations of the 784-h-10
// MLP: batch sizes at hidden 500, then hidden sizes at batch 256.
func scalingConfigs() (byBatch, byHidden [][2]int) {
	for _, b := range []int{32, 64, 128, 256, 512, 1024} {
		byBatch = append(byBatch, [2]int{b, 500})
	}
	for _, h := range []int{100, 250, 500, 1000, 2000} {
		byHidden = append(byHidden, [2]int{256, h})
	}
	return
}

// BenchmarkMLPScaling is the Go side of make bench's scaling table and
// plot: one SGD step of the 784-h-10 MLP per configuration
// (batch=B,hidden=H), beside bench/torch_mlp.py's.
func BenchmarkMLPScaling(b *testing.B) {
	byBatch, byHidden := scalingConfigs()
	seen := map[[2]int]bool{}
	for _, c := range append(byBatch, byHidden...) {
		if seen[c] {
			continue
		}
		seen[c] = true
		b.Run(fmt.Sprintf("batch=%d,hidden=%d", c[0], c[1]), func(b *testing.B) { benchStep(b, []int{784, c[1], 10}, c[0]) })
	}
}
