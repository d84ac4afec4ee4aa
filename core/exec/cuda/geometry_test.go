package cuda

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
)

// These tests run the kernels' Go mirrors (mirror_test.go) the way the op
// kernels (kernels_*.go) launch them and compare with the CPU backend.

func randF32(rng *numpyrand.RandomState, shape ...int) *nd.Array {
	a := nd.New(nd.Float32, shape...)
	for i := range a.Size() {
		a.SetFlat(i, 2*rng.RandomSample()-1)
	}
	return a
}

// cpuRun compiles outs on the CPU and calls it.
func cpuRun(t *testing.T, ins, outs []*core.Variable, args []*nd.Array) []*nd.Array {
	t.Helper()
	f, err := core.CompileOn(cpu.Backend{}, ins, outs, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Call(args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func closeTo(t *testing.T, what string, got []float32, want *nd.Array, rel float64) {
	t.Helper()
	if len(got) != want.Size() {
		t.Fatalf("%s: %d elements, CPU %d", what, len(got), want.Size())
	}
	for i := range got {
		g, w := float64(got[i]), want.Flat(i)
		if math.Abs(g-w) > rel*(math.Abs(w)+1e-2) {
			t.Fatalf("%s[%d]: mirror %v, CPU %v", what, i, g, w)
		}
	}
}

// mirrorConv computes conv2d, its images' and its filters' gradients as
// convKernel launches them, in groups of m images.
func mirrorConv(x, w, b, gz []float32, g convGeom, m int) (y, gx, gw []float32) {
	k, p := g.k(), g.p()
	chw, fp := g.c*g.h*g.w, g.f*p
	geom := g.meta()
	col, tmp := make([]float32, k*m*p), make([]float32, g.f*m*p)
	y, gx, gw = make([]float32, g.n*fp), make([]float32, g.n*chw), make([]float32, g.f*k)
	part := make([]float32, g.f*k)
	for n0 := 0; n0 < g.n; n0 += m {
		mm := min(m, g.n-n0)
		// conv2d
		mIm2col(col, x[n0*chw:], int64(mm), geom)
		mGemm(false, false, g.f, mm*p, k, w, col, tmp)
		mConvScatter(y[n0*fp:], tmp, b, int64(mm), int64(g.f), int64(p))
		// conv2d_grad_input
		mConvGather(tmp, gz[n0*fp:], int64(mm), int64(g.f), int64(p))
		mGemm(true, false, k, mm*p, g.f, w, tmp, col)
		mCol2im(gx[n0*chw:], col, int64(mm), geom)
		// conv2d_grad_weights
		mIm2col(col, x[n0*chw:], int64(mm), geom)
		mConvGather(tmp, gz[n0*fp:], int64(mm), int64(g.f), int64(p))
		dst := gw
		if n0 > 0 {
			dst = part
		}
		mGemm(false, true, g.f, k, mm*p, tmp, col, dst)
		if n0 > 0 {
			for j := range gw {
				gw[j] += part[j]
			}
		}
	}
	return y, gx, gw
}

func TestConvKernelsMatchCPU(t *testing.T) {
	for _, c := range []struct {
		xs, ws []int
		opts   core.Conv2dOptions
		limit  int // colFloats for the test: forces groups
	}{
		{[]int{5, 1, 28, 28}, []int{4, 1, 5, 5}, core.Conv2dOptions{}, 2 * 25 * 576},
		{[]int{3, 3, 9, 11}, []int{5, 3, 3, 2}, core.Conv2dOptions{Step: [2]int{2, 3}, Border: core.Border{Mode: "full"}}, 1},
		{[]int{4, 2, 8, 7}, []int{3, 2, 3, 3}, core.Conv2dOptions{Border: core.Border{Mode: "half"}, NoFlip: true}, 1 << 24},
		{[]int{2, 2, 6, 6}, []int{2, 2, 2, 3}, core.Conv2dOptions{Step: [2]int{2, 1}, Border: core.Border{Pad: [2]int{1, 2}}}, 100},
	} {
		t.Run(fmt.Sprint(c.xs, c.ws, c.opts), func(t *testing.T) {
			rng := numpyrand.New(5)
			x := core.NewInput("x", nd.Float32, 4)
			w := core.NewInput("w", nd.Float32, 4)
			b := core.NewInput("b", nd.Float32, 1)
			r := core.NewInput("r", nd.Float32, 4)
			y, err := core.Conv2dBias(x, w, b, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			cost := core.SumAll(core.Mul(y, r))
			grads, err := core.Grad(cost, []*core.Variable{x, w, b}, core.GradOptions{})
			if err != nil {
				t.Fatal(err)
			}
			xa, wa, ba := randF32(rng, c.xs...), randF32(rng, c.ws...), randF32(rng, c.ws[0])
			spec := core.Spec(y.Op()).Conv
			g := convGeometry(c.xs, c.ws, spec)
			ra := randF32(rng, g.n, g.f, g.oh, g.ow)
			want := cpuRun(t, []*core.Variable{x, w, b, r}, append([]*core.Variable{y}, grads...), []*nd.Array{xa, wa, ba, ra})
			if !slices.Equal(want[0].Shape, []int{g.n, g.f, g.oh, g.ow}) {
				t.Fatalf("geometry %v, CPU output %v", []int{g.n, g.f, g.oh, g.ow}, want[0].Shape)
			}
			m := g.group(c.limit)
			gy, gx, gw := mirrorConv(f32(xa), f32(wa), f32(ba), f32(ra), g, m)
			closeTo(t, "conv2d", gy, want[0], 1e-4)
			closeTo(t, "gradient wrt the images", gx, want[1], 1e-4)
			closeTo(t, "gradient wrt the filters", gw, want[2], 1e-4)
			// map_sum (the biases' gradient) as reduce_strided's meta
			// says: axis 1 kept, 0, 2, 3 reduced.
			gb := make([]float32, g.f)
			for f := range g.f {
				s := 0.0
				for n := range g.n {
					for q := range g.p() {
						s += float64(f32(ra)[(n*g.f+f)*g.p()+q])
					}
				}
				gb[f] = float32(s)
			}
			closeTo(t, "gradient wrt the biases", gb, want[3], 1e-5)
		})
	}
}

func TestPoolKernelsMatchCPU(t *testing.T) {
	for _, o := range []core.PoolOptions{
		{Size: [2]int{2, 2}, IgnoreBorder: true, Mode: "max"},
		{Size: [2]int{3, 2}, Step: [2]int{1, 2}, Mode: "max"},
		{Size: [2]int{3, 3}, Step: [2]int{2, 2}, Pad: [2]int{1, 1}, IgnoreBorder: true, Mode: "max"},
		{Size: [2]int{2, 3}, Step: [2]int{1, 1}, Mode: "sum"},
		{Size: [2]int{3, 3}, Step: [2]int{2, 2}, Pad: [2]int{2, 1}, IgnoreBorder: true, Mode: "average_inc_pad"},
		{Size: [2]int{3, 3}, Step: [2]int{2, 2}, Pad: [2]int{2, 1}, IgnoreBorder: true, Mode: "average_exc_pad"},
		{Size: [2]int{2, 2}, Mode: "average_exc_pad"},
	} {
		t.Run(fmt.Sprint(o), func(t *testing.T) {
			rng := numpyrand.New(9)
			xs := []int{2, 3, 7, 9}
			x := core.NewInput("x", nd.Float32, 4)
			r := core.NewInput("r", nd.Float32, 4)
			y, err := core.Pool2d(x, o)
			if err != nil {
				t.Fatal(err)
			}
			g := poolGeometry(xs, core.Spec(y.Op()).Pool)
			cost := core.SumAll(core.Mul(y, r))
			grads, err := core.Grad(cost, []*core.Variable{x}, core.GradOptions{})
			if err != nil {
				t.Fatal(err)
			}
			xa := randF32(rng, xs...)
			ra := randF32(rng, 2, 3, g.oh, g.ow)
			want := cpuRun(t, []*core.Variable{x, r}, []*core.Variable{y, grads[0]}, []*nd.Array{xa, ra})
			if !slices.Equal(want[0].Shape, []int{2, 3, g.oh, g.ow}) {
				t.Fatalf("geometry %dx%d, CPU output %v", g.oh, g.ow, want[0].Shape)
			}
			mode := poolModes[o.Mode]
			meta := g.meta(mode)
			out := make([]float32, g.planes*g.oh*g.ow)
			mPool2d(out, f32(xa), int64(g.planes), meta)
			closeTo(t, "pool2d", out, want[0], 1e-6)
			gx := make([]float32, g.planes*g.h*g.w)
			mPool2dGrad(gx, f32(xa), out, f32(ra), int64(g.planes), meta)
			closeTo(t, "pool2d_grad", gx, want[1], 1e-6)
		})
	}
}

func TestTakeKernelsMatchCPU(t *testing.T) {
	rng := numpyrand.New(3)
	w := core.NewInput("w", nd.Float32, 2)
	idx := core.NewInput("idx", nd.Int64, 2)
	r := core.NewInput("r", nd.Float32, 3)
	y, err := core.Take(w, idx)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := core.Grad(core.SumAll(core.Mul(y, r)), []*core.Variable{w}, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows, row := 7, 5
	wa := randF32(rng, rows, row)
	ia := nd.New(nd.Int64, 6, 4)
	for i := range ia.Size() {
		ia.SetFlat(i, float64(rng.Randint(0, int64(rows-1)))) // row rows-1 never picked
	}
	ra := randF32(rng, 6, 4, row)
	want := cpuRun(t, []*core.Variable{w, idx, r}, []*core.Variable{y, grads[0]}, []*nd.Array{wa, ia, ra})
	out := make([]float32, 24*row)
	mTake(out, f32(wa), ia.Data.([]int64), 24, int64(row))
	closeTo(t, "take", out, want[0], 0)
	perm, start := make([]int64, 24), make([]int64, rows+1)
	if err := groupRows(ia.Data.([]int64), rows, perm, start); err != nil {
		t.Fatal(err)
	}
	gw := make([]float32, rows*row)
	mTakeGrad(gw, f32(ra), perm, start, int64(rows), int64(row))
	closeTo(t, "take_grad", gw, want[1], 0)
	if err := groupRows([]int64{0, 7}, rows, perm, start); err == nil {
		t.Error("an index past the table was accepted")
	}
}

// The step rules' fused updates: fused_rule's loops, with the arities the
// dispatcher checks, give the CPU kernels' bits.
func TestFusedRulesMatchCPU(t *testing.T) {
	for _, c := range []struct {
		name string
		rule algorithms.StepRule
	}{
		{"momentum", algorithms.NewBasicMomentum(nd.Float32, 0.9)},
		{"adadelta", must(algorithms.NewAdaDelta(nd.Float32, 0.95, 1e-6))},
		{"rmsprop", must(algorithms.NewBasicRMSProp(nd.Float32, 0.9, 1e5))},
		{"adagrad", algorithms.NewAdaGrad(nd.Float32, 0.01, 1e-6)},
		{"adam", algorithms.NewAdam(nd.Float32, 0.002, 0.9, 0.999, 1e-8, 1-1e-8)},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := numpyrand.New(4)
			param := core.NewShared(randF32(rng, 6, 5), "W")
			g := core.NewInput("g", nd.Float32, 2)
			steps, updates, err := c.rule.ComputeSteps([]*core.Variable{param}, []*core.Variable{g})
			if err != nil {
				t.Fatal(err)
			}
			fused := steps[0]
			for fused.Op() != nil && core.Spec(fused.Op()).Kind == "view_at" {
				fused = fused.Inputs()[0]
			}
			spec := core.Spec(fused.Op())
			if spec.Kind != "fused" || spec.Func != c.name {
				t.Fatalf("the step is %s (%q %q), want a fused %s", fused.Op(), spec.Kind, spec.Func, c.name)
			}
			ar := fusedArity[c.name]
			if spec.FullInputs != ar[0] || len(fused.Inputs()) != ar[0]+ar[1] {
				t.Fatalf("%d inputs, %d full; the dispatcher expects %v", len(fused.Inputs()), spec.FullInputs, ar)
			}
			// The buffers' values after a first update, then the fused
			// kernel's inputs and outputs on the CPU.
			outs := []*core.Variable{fused}
			outs = append(outs, fused.Inputs()...)
			upd := make([]core.Update, len(updates))
			copy(upd, updates)
			f, err := core.CompileOn(cpu.Backend{}, []*core.Variable{g}, outs, upd)
			if err != nil {
				t.Fatal(err)
			}
			var res []*nd.Array
			for range 2 {
				if res, err = f.Call([]*nd.Array{randF32(rng, 6, 5)}); err != nil {
					t.Fatal(err)
				}
			}
			in := res[1:]
			n := int64(in[0].Size())
			var full [3][]float32
			var sc [4]float32
			for k, a := range in {
				if k < ar[0] {
					full[k] = f32(a)
				} else {
					sc[k-ar[0]] = float32(a.Flat(0))
				}
			}
			c0 := 0.0
			if len(spec.Consts) > 0 {
				c0 = spec.Consts[0]
			}
			got := make([]float32, int64(spec.Parts)*n)
			mFusedRule(got, full[0], full[1], full[2], sc[0], sc[1], sc[2], sc[3], n, fusedRules[c.name], c0)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(float32(res[0].Flat(i))) {
					t.Fatalf("element %d: mirror %v, CPU %v", i, got[i], res[0].Flat(i))
				}
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func ip(i int) *int { return &i }

// Subtensors (slices with steps, negative steps, integer indices) and
// their gradients as ew_strided and strided_scatter walk them.
func TestSubtensorMetaMatchesCPU(t *testing.T) {
	for k, idx := range [][]core.Index{
		{{Slice: true, Start: ip(1), Stop: ip(5), Step: ip(2)}},
		{{I: -2}, {Slice: true, Step: ip(-1)}},
		{{Slice: true, Start: ip(-1), Stop: ip(0), Step: ip(-2)}, {I: 3}, {Slice: true, Start: ip(1)}},
		{{Slice: true}, {Slice: true, Stop: ip(2)}, {I: 0}},
	} {
		t.Run(fmt.Sprint("case ", k), func(t *testing.T) {
			rng := numpyrand.New(6)
			xs := []int{6, 5, 4}
			x := core.NewInput("x", nd.Float32, 3)
			y, err := core.Subtensor(x, idx)
			if err != nil {
				t.Fatal(err)
			}
			r := core.NewInput("r", nd.Float32, y.NDim())
			grads, err := core.Grad(core.SumAll(core.Mul(y, r)), []*core.Variable{x}, core.GradOptions{})
			if err != nil {
				t.Fatal(err)
			}
			spec := core.Spec(y.Op())
			rs, err := spec.Ranges(xs)
			if err != nil {
				t.Fatal(err)
			}
			base, counts, strides := subtensorMeta(xs, rs)
			n := int64(1)
			for _, c := range counts {
				n *= c
			}
			var ys []int
			for k, c := range counts {
				if k >= len(idx) || idx[k].Slice {
					ys = append(ys, int(c))
				}
			}
			xa, ra := randF32(rng, xs...), randF32(rng, ys...)
			want := cpuRun(t, []*core.Variable{x, r}, []*core.Variable{y, grads[0]}, []*nd.Array{xa, ra})
			out := make([]float32, n)
			mStridedGather(out, f32(xa), base, counts, strides)
			closeTo(t, "subtensor", out, want[0], 0)
			gx := make([]float32, xa.Size())
			mStridedScatter(gx, f32(ra), base, n, counts, strides)
			closeTo(t, "subtensor's gradient", gx, want[1], 0)
		})
	}
}

func TestMaxoutAndArgmaxMatchCPU(t *testing.T) {
	rng := numpyrand.New(8)
	x := core.NewInput("x", nd.Float32, 3)
	r := core.NewInput("r", nd.Float32, 3)
	y, err := core.Maxout(x, 3)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := core.Grad(core.SumAll(core.Mul(y, r)), []*core.Variable{x}, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	xa := randF32(rng, 4, 5, 12)
	xa.SetFlat(1, xa.Flat(0)) // a tie: both pieces get the gradient
	ra := randF32(rng, 4, 5, 4)
	outs := []*core.Variable{y, grads[0]}
	var argOuts []struct {
		axis *int
		max  bool
	}
	for _, axis := range []*int{nil, ip(0), ip(1), ip(2)} {
		for _, isMax := range []bool{true, false} {
			f := core.Argmax
			if !isMax {
				f = core.Argmin
			}
			a, err := f(x, axis, false)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, a)
			argOuts = append(argOuts, struct {
				axis *int
				max  bool
			}{axis, isMax})
		}
	}
	want := cpuRun(t, []*core.Variable{x, r}, outs, []*nd.Array{xa, ra})
	spec := core.Spec(y.Op())
	n := int64(ra.Size())
	got := make([]float32, n)
	mMaxout(got, f32(xa), int64(spec.Pieces), n)
	closeTo(t, "maxout", got, want[0], 0)
	gx := make([]float32, xa.Size())
	mMaxoutGrad(gx, f32(xa), got, f32(ra), int64(spec.Pieces), n)
	closeTo(t, "maxout's gradient", gx, want[1], 0)
	for k, a := range argOuts {
		s := core.Spec(outs[2+k].Op())
		if s.ArgMax != a.max {
			t.Fatalf("spec %+v", s)
		}
		outer, nn, inner := argGeometry(xa.Shape, s.Axis, s.Flat)
		res := make([]int64, outer*inner)
		mArgReduce(res, f32(xa), int64(outer), int64(nn), int64(inner), s.ArgMax)
		w := want[2+k]
		if w.Size() != len(res) {
			t.Fatalf("arg %v: %d results, CPU %d", a, len(res), w.Size())
		}
		for i, v := range res {
			if float64(v) != w.Flat(i) {
				t.Fatalf("arg %v [%d]: mirror %d, CPU %v", a, i, v, w.Flat(i))
			}
		}
	}
}
