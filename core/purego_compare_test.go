package core_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/mlp_sgd.golden.json from this build (do it with the cgo build)")

// paramSummary is what the golden file keeps of one trained parameter:
// its sum, its sum of squares and 32 of its elements at fixed places.
type paramSummary struct {
	Shape  []int
	Sum    float64
	SumSq  float64
	Sample []float64
}

func summarize(t *testing.T) []paramSummary {
	params, _ := trainMLP(t)
	var out []paramSummary
	for _, p := range params {
		s := paramSummary{Shape: p.Shape}
		n := p.Size()
		for i := range n {
			v := p.Flat(i)
			s.Sum += v
			s.SumSq += v * v
		}
		for k := range 32 {
			s.Sample = append(s.Sample, p.Flat(k*n/32))
		}
		out = append(out, s)
	}
	return out
}

// TestBuildsAgree trains the 784-300-10 MLP of trainMLP (4 SGD steps; its
// products and fused kernels split across the workers) and compares the
// parameters with testdata/mlp_sgd.golden.json, written by the cgo build
// (OpenBLAS; go test ./core -run TestBuildsAgree -update-golden). The
// pure-Go build (CGO_ENABLED=0: gonum's Go BLAS, make test-purego) sums
// the products in another order, so the two agree within float32
// tolerance, not bit for bit: relative 1e-4 on each sum and on each
// sampled element (absolute 1e-6 near zero).
func TestBuildsAgree(t *testing.T) {
	got := summarize(t)
	const path = "testdata/mlp_sgd.golden.json"
	if *updateGolden {
		if kernels.BLASName != "OpenBLAS" {
			t.Fatalf("write the golden file with the cgo build (this one multiplies with %s)", kernels.BLASName)
		}
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []paramSummary
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d parameters, golden file has %d", len(got), len(want))
	}
	near := func(what string, g, w float64) {
		if math.Abs(g-w) > 1e-4*math.Abs(w)+1e-6 {
			t.Errorf("%s (BLAS %s): got %.9g, the cgo build's golden value is %.9g", what, kernels.BLASName, g, w)
		}
	}
	for i := range want {
		g, w := got[i], want[i]
		if fmt.Sprint(g.Shape) != fmt.Sprint(w.Shape) {
			t.Fatalf("parameter %d: shape %v, golden %v", i, g.Shape, w.Shape)
		}
		near(fmt.Sprintf("parameter %d sum", i), g.Sum, w.Sum)
		near(fmt.Sprintf("parameter %d sum of squares", i), g.SumSq, w.SumSq)
		for k := range w.Sample {
			near(fmt.Sprintf("parameter %d element %d", i, k), g.Sample[k], w.Sample[k])
		}
	}
}
