package bench

import (
	"fmt"
	"slices"
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
}

// mlpProducts are the products of one SGD step of a 784-h-10 MLP with
// batch b: two forward, three backward (no gradient for the data).
func mlpProducts(b, h int) []product {
	return []product{
		{b, h, 784, false, false}, // x·W1
		{b, 10, h, false, false},  // h·W2
		{b, h, 10, false, true},   // g2·W2ᵀ
		{784, h, b, true, false},  // xᵀ·g1
		{h, 10, b, true, false},   // hᵀ·g2
	}
}

// productModels are the table's rows with a matrix-multiply limit: the
// MLPs, named as run-torch.sh names them.
var productModels = []struct {
	torch         string
	batch, hidden int
}{
	{"mlp-tutorial", 256, 100},
	{"mlp-500", 128, 500},
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
		a, b := make([]float32, p.m*p.k), make([]float32, p.k*p.n)
		for i := range a {
			a[i] = float32(i%7) * 0.1
		}
		for i := range b {
			b[i] = float32(i%5) * 0.1
		}
		r.a, r.b, r.c = append(r.a, a), append(r.b, b), append(r.c, make([]float32, p.m*p.n))
		r.flops += 2 * float64(p.m*p.n*p.k)
	}
	return r
}

// time runs the products reps times and returns the time taken.
func (r *prodRunner) time(reps int) time.Duration {
	t0 := time.Now()
	for range reps {
		for i, p := range r.ps {
			kernels.Sgemm(p.tA, p.tB, p.m, p.n, p.k, r.a[i], r.b[i], r.c[i])
		}
	}
	return time.Since(t0)
}

// BenchmarkMLPProducts is the matrix-multiply limit of an MLP's training
// step: its products alone (kernels.Sgemm, as the Dot op runs them, at the
// step's shapes) in examples/s and GFLOP/s, and the share of that limit
// the step reaches. The products run in chunks of 4 alternating with
// chunks of 4 steps, so that both see the same load; the share is the
// median over the pairs of chunks of (products' time / steps' time).
// (make bench takes the step's examples/s from its uninterrupted
// benchmark: a step right after a chunk of products finds its weights
// evicted from the caches by the products' own matrices, which training
// never does.)
func BenchmarkMLPProducts(b *testing.B) {
	for _, m := range productModels {
		b.Run(m.torch, func(b *testing.B) {
			gd, data := mlpStep(b, []int{784, m.hidden, 10}, m.batch, 0.1)
			step := func() {
				if err := gd.ProcessBatch(data); err != nil {
					b.Fatal(err)
				}
			}
			for range 3 {
				step()
			}
			r := newProdRunner(mlpProducts(m.batch, m.hidden))
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
