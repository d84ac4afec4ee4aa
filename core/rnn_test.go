package core_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	cpubackend "github.com/blocks-go/blocks/core/exec/cpu"
)

// The fused LSTM and GRU sequences (rnn.go) against the Scan of the
// bricks' step graph (the same expressions as bricks/recurrent.go's LSTM
// and GatedRecurrent steps) and against finite differences.

func maskVar(m *Variable) *Variable {
	md, _ := Dimshuffle(m, []int{0, -1})
	return md
}

func masked(m, next, prev *Variable) *Variable {
	if m == nil {
		return next
	}
	md := maskVar(m)
	return Add(Mul(md, next), Mul(Sub(Const(md.DType(), 1), md), prev))
}

// lstmScan is Blocks' LSTM step as a graph iterated by Scan.
func lstmScan(t testing.TB, x, h0, c0, w, wci, wcf, wco, mask *Variable, d int, reverse bool) (h, c *Variable) {
	seqs := []*Variable{x}
	if mask != nil {
		seqs = append(seqs, mask)
	}
	st, _, err := Scan(ScanSpec{Sequences: seqs, States: []*Variable{h0, c0}, Reverse: reverse},
		func(s, st, _ []*Variable) ([]*Variable, []*Variable, error) {
			hp, cp := st[0], st[1]
			hw, err := Dot(hp, w)
			if err != nil {
				return nil, nil, err
			}
			act := Add(hw, s[0])
			part := make([]*Variable, 4)
			for i := range part {
				part[i], _ = SliceLast(act, i*d, (i+1)*d)
			}
			in := Sigmoid(Add(part[0], Mul(cp, wci)))
			f := Sigmoid(Add(part[1], Mul(cp, wcf)))
			cand := Tanh(part[2])
			nc := Add(Mul(f, cp), Mul(in, cand))
			o := Sigmoid(Add(part[3], Mul(nc, wco)))
			nh := Mul(o, Tanh(nc))
			var m *Variable
			if len(s) > 1 {
				m = s[1]
			}
			return []*Variable{masked(m, nh, hp), masked(m, nc, cp)}, nil, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return st[0], st[1]
}

// gruScan is Blocks' GatedRecurrent step as a graph iterated by Scan.
func gruScan(t testing.TB, x, xg, h0, u, wg, mask *Variable, d int, reverse bool) *Variable {
	seqs := []*Variable{x, xg}
	if mask != nil {
		seqs = append(seqs, mask)
	}
	st, _, err := Scan(ScanSpec{Sequences: seqs, States: []*Variable{h0}, Reverse: reverse},
		func(s, st, _ []*Variable) ([]*Variable, []*Variable, error) {
			h := st[0]
			hg, err := Dot(h, wg)
			if err != nil {
				return nil, nil, err
			}
			gates := Sigmoid(Add(hg, s[1]))
			upd, _ := SliceLast(gates, 0, d)
			rst, _ := SliceLast(gates, d, 2*d)
			hr, err := Dot(Mul(h, rst), u)
			if err != nil {
				return nil, nil, err
			}
			n := Tanh(Add(hr, s[0]))
			next := Add(Mul(n, upd), Mul(h, Sub(Const(upd.DType(), 1), upd)))
			var m *Variable
			if len(s) > 2 {
				m = s[2]
			}
			return []*Variable{masked(m, next, h)}, nil, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return st[0]
}

func rnnRand(r *rand.Rand, dt nd.DType, scale float64, shape ...int) *nd.Array {
	a := nd.New(dt, shape...)
	for i := range a.Size() {
		a.SetFlat(i, scale*(2*r.Float64()-1))
	}
	return a
}

func randMask(r *rand.Rand, dt nd.DType, T, B int) *nd.Array {
	m := nd.New(dt, T, B)
	for i := range m.Size() {
		if r.IntN(4) != 0 {
			m.SetFlat(i, 1)
		}
	}
	return m
}

type rnnCase struct {
	name    string
	gru     bool
	mask    bool
	reverse bool
}

var rnnCases = []rnnCase{
	{"lstm", false, false, false}, {"lstm/mask", false, true, false}, {"lstm/mask/reverse", false, true, true},
	{"gru", true, false, false}, {"gru/mask", true, true, false}, {"gru/reverse", true, false, true},
}

// rnnGraphs builds, for one case, the fused and the scanned outputs, a
// cost Σ out·R (R fixed random weights of every output), the inputs and
// random values for them.
func rnnGraphs(t testing.TB, c rnnCase, dt nd.DType, T, B, d int, seed uint64) (ins []*Variable, vals []*nd.Array, fused, scanned []*Variable) {
	r := rand.New(rand.NewPCG(seed, 1))
	in := func(name string, scale float64, shape ...int) *Variable {
		v := NewInput(name, dt, len(shape))
		ins = append(ins, v)
		vals = append(vals, rnnRand(r, dt, scale, shape...))
		return v
	}
	var mask *Variable
	if c.gru {
		x, xg, h0 := in("x", 1, T, B, d), in("xg", 1, T, B, 2*d), in("h0", 0.5, B, d)
		u, wg := in("u", 0.7, d, d), in("wg", 0.7, d, 2*d)
		if c.mask {
			mask = in("mask", 1, T, B)
			vals[len(vals)-1] = randMask(r, dt, T, B)
		}
		h, err := GRUSequence(x, xg, h0, u, wg, mask, c.reverse)
		if err != nil {
			t.Fatal(err)
		}
		return ins, vals, []*Variable{h}, []*Variable{gruScan(t, x, xg, h0, u, wg, mask, d, c.reverse)}
	}
	x, h0, c0 := in("x", 1, T, B, 4*d), in("h0", 0.5, B, d), in("c0", 0.5, B, d)
	w, wci, wcf, wco := in("w", 0.7, d, 4*d), in("wci", 0.7, d), in("wcf", 0.7, d), in("wco", 0.7, d)
	if c.mask {
		mask = in("mask", 1, T, B)
		vals[len(vals)-1] = randMask(r, dt, T, B)
	}
	h, cc, err := LSTMSequence(x, h0, c0, w, wci, wcf, wco, mask, c.reverse)
	if err != nil {
		t.Fatal(err)
	}
	sh, sc := lstmScan(t, x, h0, c0, w, wci, wcf, wco, mask, d, c.reverse)
	return ins, vals, []*Variable{h, cc}, []*Variable{sh, sc}
}

func weightedCost(t testing.TB, outs []*Variable, seed uint64, T, B, d int) *Variable {
	r := rand.New(rand.NewPCG(seed, 7))
	var cost *Variable
	for _, o := range outs {
		w := NewShared(rnnRand(r, o.DType(), 1, T, B, d), "R")
		s, err := Sum(Mul(o, w), nil, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cost == nil {
			cost = s
		} else {
			cost = Add(cost, s)
		}
	}
	return cost
}

// rnnSizes are the sizes the fused sequences are tested at: a small batch
// (one sequence) and one split by rows (rnn_split.go; the thresholds
// lowered by splitSmallRNNs), in two uneven row blocks.
var rnnSizes = []struct{ T, B, d int }{{5, 3, 4}, {4, 19, 3}, {2, 32, 256}}

// splitSmallRNNs makes every fused sequence of 16 rows or more split by
// rows, for the rest of the test.
func splitSmallRNNs(t *testing.T) {
	t.Cleanup(cpubackend.SplitSmallRNNs())
}

// TestFusedRNNMatchesScan: the fused forward pass and its gradients agree
// with the scan's to rounding (float32 and float64, with and without a
// mask, forward and reversed, in one sequence or split by rows); a split
// sequence gives the same bits run in parallel or serially.
//
// Not bit for bit with the scan: the two paths compute each step's product
// with different calls (the scan's Dot on the whole batch or on
// kernels.SplitGemm's row blocks, the fused sequence on its own row blocks,
// float32 ones up to d = 256 on vec.Gemm32), and OpenBLAS's summation
// order depends on the call's shape and on the CPU: on an AVX2 CPU its
// Haswell kernels sum as Gemm32 does (fused multiply-adds in order from
// zero), but on an AVX-512 CPU, whichever core OPENBLAS_CORETYPE names,
// some shapes sum otherwise (fused 0.5053967237472534, scan
// 0.5053966641426086 on an AMD EPYC). TestFusedRNNAnyOpenBLASCore runs
// this test under each of OpenBLAS's x86-64 cores.
func TestFusedRNNMatchesScan(t *testing.T) {
	splitSmallRNNs(t)
	for _, sz := range rnnSizes {
		T, B, d := sz.T, sz.B, sz.d
		// With OPENBLAS_NUM_THREADS set, OpenBLAS threads and nothing splits.
		if kernels.SplitsProducts() && B >= cpubackend.RNNMinSplitRows && cpubackend.RNNRowParts(T, B, d*d) != 2 {
			t.Fatalf("%d rows do not split", B)
		}
		for _, c := range rnnCases {
			for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
				t.Run(fmt.Sprintf("%s/%s/B=%d", c.name, dt, B), func(t *testing.T) {
					testFusedMatchesScan(t, c, dt, T, B, d)
				})
			}
		}
	}
}

func testFusedMatchesScan(t *testing.T, c rnnCase, dt nd.DType, T, B, d int) {
	ins, vals, fused, scanned := rnnGraphs(t, c, dt, T, B, d, 3)
	f, err := Compile(ins, append(append([]*Variable(nil), fused...), scanned...), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Call(vals)
	if err != nil {
		t.Fatal(err)
	}
	// The forward tolerance is the scale of the products' rounding: each
	// pre-activation is a sum of d+1 terms (h·W and the input), and two
	// summation orders of it differ by up to 2γ_{d+1}·Σ|terms|, γ_n = n·u
	// to first order, u the unit roundoff (Higham, Accuracy and Stability
	// of Numerical Algorithms, §3.1); the terms are of order 1 (|h| < 1,
	// |W| ≤ 0.7, |x| ≤ 1) and each of the T steps adds its own. So
	// 2·T·(d+1)·u, relative to 1+|y| (the cells c grow past 1). The bound
	// over every order (Σ|terms| up to 0.7·d, amplified by the recurrence)
	// would be vacuous; a wrong gate, row, step or mask is off by 1e-2 or
	// more, which this tolerance (6.1e-5 at most here) still catches.
	u := 0x1p-53
	if dt == nd.Float32 {
		u = 0x1p-24
	}
	fwdTol := 2 * float64(T) * float64(d+1) * u
	k := len(fused)
	for i := range k {
		for j := range out[i].Size() {
			if a, b := out[i].Flat(j), out[k+i].Flat(j); math.Abs(a-b) > fwdTol*(1+math.Abs(b)) {
				t.Fatalf("output %d element %d: fused %v, scan %v (differ by %.3g, more than rounding's %.3g)", i, j, a, b, math.Abs(a-b), fwdTol*(1+math.Abs(b)))
			}
		}
	}
	var wrt []*Variable
	for _, v := range ins {
		if v.Name != "mask" {
			wrt = append(wrt, v)
		}
	}
	gf, err := Grad(weightedCost(t, fused, 5, T, B, d), wrt, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := Grad(weightedCost(t, scanned, 5, T, B, d), wrt, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(ins, append(gf, gs...), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Call(vals)
	if err != nil {
		t.Fatal(err)
	}
	// The gradients' products sum over rows and steps as well (T·B terms
	// for the weights, 4d for the states), in orders that differ between
	// the two paths: relative 2e-5 in float32 (1e-12 in float64); the
	// largest difference, under each of OpenBLAS's x86-64 cores on an
	// AVX-512 CPU, was a third of it.
	tol := 1e-12
	if dt == nd.Float32 {
		tol = 2e-5
	}
	for i := range wrt {
		a, b := res[i], res[len(wrt)+i]
		for j := range a.Size() {
			if x, y := a.Flat(j), b.Flat(j); math.Abs(x-y) > tol*(1+math.Abs(y)) {
				t.Fatalf("gradient of %s element %d: fused %v, scan %v", wrt[i], j, x, y)
			}
		}
	}
	// The same again with every split run serially: the same bits.
	defer kernels.SetSerial(kernels.SetSerial(true))
	again, err := g.Call(vals)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wrt {
		for j := range res[i].Size() {
			if x, y := res[i].Flat(j), again[i].Flat(j); x != y {
				t.Fatalf("gradient of %s element %d: %v in parallel, %v serially", wrt[i], j, x, y)
			}
		}
	}
}

// TestFusedRNNGradient checks the fused sequences' gradients in float64
// against central finite differences of the cost.
func TestFusedRNNGradient(t *testing.T) {
	splitSmallRNNs(t)
	for _, sz := range []struct{ T, B, d int }{{4, 2, 3}, {3, 17, 2}} {
		for _, c := range rnnCases {
			t.Run(fmt.Sprintf("%s/B=%d", c.name, sz.B), func(t *testing.T) {
				testFusedGradient(t, c, sz.T, sz.B, sz.d)
			})
		}
	}
}

func testFusedGradient(t *testing.T, c rnnCase, T, B, d int) {
	ins, vals, fused, _ := rnnGraphs(t, c, nd.Float64, T, B, d, 11)
	cost := weightedCost(t, fused, 13, T, B, d)
	var wrt []*Variable
	for _, v := range ins {
		if v.Name != "mask" {
			wrt = append(wrt, v)
		}
	}
	gs, err := Grad(cost, wrt, GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Compile(ins, gs, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := Compile(ins, []*Variable{cost}, nil)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := g.Call(vals)
	if err != nil {
		t.Fatal(err)
	}
	eval := func() float64 {
		out, err := fc.Call(vals)
		if err != nil {
			t.Fatal(err)
		}
		return out[0].Flat(0)
	}
	const eps = 1e-6
	for i := range wrt {
		a := vals[i]
		for j := range a.Size() {
			v := a.Flat(j)
			a.SetFlat(j, v+eps)
			up := eval()
			a.SetFlat(j, v-eps)
			down := eval()
			a.SetFlat(j, v)
			num := (up - down) / (2 * eps)
			if got := grads[i].Flat(j); math.Abs(got-num) > 1e-6*(1+math.Abs(num)) {
				t.Fatalf("d cost / d %s[%d]: %v, finite differences %v", wrt[i], j, got, num)
			}
		}
	}
}

// TestFusedRNNBadShapes: shapes that do not fit are errors naming what was
// expected.
func TestFusedRNNBadShapes(t *testing.T) {
	x := NewInput("x", nd.Float32, 3)
	h0 := NewInput("h0", nd.Float32, 2)
	c0 := NewInput("c0", nd.Float32, 2)
	w := NewInput("w", nd.Float32, 2)
	p := NewInput("p", nd.Float32, 1)
	h, _, err := LSTMSequence(x, h0, c0, w, p, p, p, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Compile([]*Variable{x, h0, c0, w, p}, []*Variable{h}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Call([]*nd.Array{nd.New(nd.Float32, 2, 3, 8), nd.New(nd.Float32, 3, 2), nd.New(nd.Float32, 3, 2),
		nd.New(nd.Float32, 2, 7), nd.New(nd.Float32, 2)})
	if err == nil || !contains(err.Error(), "want (2, 8)") {
		t.Fatalf("want a shape error naming (2, 8), got %v", err)
	}
	if _, _, err := LSTMSequence(x, h0, c0, w, p, p, p, NewInput("m", nd.Float32, 1), false); err == nil {
		t.Fatal("a 1-d mask was accepted")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestOpenBLASCoreTypeHonoured: OpenBLAS reports the core whose kernels
// it runs, and in a process started with OPENBLAS_CORETYPE (as
// TestBitComparisonsAnyOpenBLASCore starts this test) it is that core.
func TestOpenBLASCoreTypeHonoured(t *testing.T) {
	if kernels.BLASName != "OpenBLAS" {
		t.Skipf("this build multiplies with %s", kernels.BLASName)
	}
	core := kernels.BLASCore()
	if core == "" {
		t.Fatalf("OpenBLAS names no core (%s)", kernels.BLASConfig())
	}
	if want := os.Getenv("OPENBLAS_CORETYPE"); want != "" && !strings.EqualFold(core, want) {
		t.Fatalf("OPENBLAS_CORETYPE=%s, but OpenBLAS runs %s's kernels (%s)", want, core, kernels.BLASConfig())
	}
	t.Logf("OpenBLAS core: %s", core)
}

// TestBitComparisonsAnyOpenBLASCore runs the tests that compare two code
// paths' results (the fused recurrent sequences against the Scan, fusions
// on and off, the pure-Go build's golden numbers) again in child
// processes under OpenBLAS's own choice of core and under each x86-64 core
// this CPU can run (OPENBLAS_CORETYPE: Sandybridge for AVX, Haswell and
// Zen for AVX2, SkylakeX and Cooperlake for AVX-512), each also with
// OPENBLAS_NUM_THREADS=1 (OpenBLAS threading, the backend splitting
// nothing): their results must not rest on which kernels OpenBLAS picks
// for the machine. Each child also checks that the core it asked for is
// the one in force.
func TestBitComparisonsAnyOpenBLASCore(t *testing.T) {
	if kernels.BLASName != "OpenBLAS" {
		t.Skipf("this build multiplies with %s", kernels.BLASName)
	}
	if !strings.Contains(kernels.BLASConfig(), "DYNAMIC_ARCH") {
		t.Skipf("OpenBLAS is built for one core (%s): OPENBLAS_CORETYPE has no effect", kernels.BLASConfig())
	}
	if runtime.GOARCH != "amd64" {
		t.Skipf("OpenBLAS's core types here are x86-64's; this is %s", runtime.GOARCH)
	}
	x := cpu.X86
	avx512 := x.HasAVX512F && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL
	cores := []struct {
		name string // "": OpenBLAS's choice for this CPU
		ok   bool
	}{
		{"", true},
		{"Sandybridge", x.HasAVX},
		{"Haswell", x.HasAVX2 && x.HasFMA},
		{"Zen", x.HasAVX2 && x.HasFMA},
		{"SkylakeX", avx512},
		{"Cooperlake", avx512 && x.HasAVX512BF16},
	}
	// The parent's own OPENBLAS_* settings do not reach the children.
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") && !strings.HasPrefix(kv, "OPENBLAS_NUM_THREADS=") {
			base = append(base, kv)
		}
	}
	const tests = "^(TestOpenBLASCoreTypeHonoured|TestFusedRNNMatchesScan|TestFusedRNNGradient|TestFusionBitIdentical|TestBuildsAgree)$"
	for _, c := range cores {
		if !c.ok {
			t.Logf("%s: this CPU lacks its instructions", c.name)
			continue
		}
		for _, threads := range []string{"", "1"} {
			env := append([]string(nil), base...)
			name := "OpenBLAS's choice"
			if c.name != "" {
				env = append(env, "OPENBLAS_CORETYPE="+c.name)
				name = "OPENBLAS_CORETYPE=" + c.name
			}
			if threads != "" {
				env = append(env, "OPENBLAS_NUM_THREADS="+threads)
				name += ", OPENBLAS_NUM_THREADS=" + threads
			}
			cmd := exec.Command(os.Args[0], "-test.run="+tests, "-test.count=1", "-test.v")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s: %v\n%s", name, err, out)
				continue
			}
			if !strings.Contains(string(out), "--- PASS: TestFusedRNNMatchesScan") {
				t.Errorf("%s: TestFusedRNNMatchesScan did not run:\n%s", name, out)
			}
		}
	}
}
