package bench

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
)

// rnnConfig is one of ../shared/bench/torch_rnn.py's language models.
type rnnConfig struct {
	cell                         string // "lstm" or "gru"
	vocab, emb, hidden, seq, bat int
	lr                           float64
}

var rnnConfigs = map[string]rnnConfig{
	"lstm-lm":  {"lstm", 64, 100, 256, 50, 32, 0.1},
	"gru-lm":   {"gru", 64, 100, 256, 50, 32, 0.1},
	"lstm-big": {"lstm", 64, 256, 1024, 50, 64, 0.1},
}

// rnnStep builds torch_rnn.py's model from the project's bricks:
// LookupTable(vocab, emb) → Linear(emb, 4·hidden) → LSTM(hidden), or
// Linear(emb, hidden) and Linear(emb, 2·hidden) → GatedRecurrent(hidden),
// then Linear(hidden, vocab) → Softmax, categorical cross-entropy averaged
// over every (time, batch) position, SGD; and returns one training step on
// a fixed batch of random tokens (seq+1, batch): inputs the first seq
// rows, targets the last seq.
func rnnStep(tb testing.TB, name string) func() error {
	tb.Helper()
	m := buildRNN(tb, name)
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{
		Cost: m.cost, Parameters: m.params, StepRule: algorithms.NewScale(nd.Float32, rnnConfigs[name].lr), Device: benchDevice})
	if err != nil {
		tb.Fatal(err)
	}
	if err := gd.Initialize(); err != nil {
		tb.Fatal(err)
	}
	return func() error { return gd.ProcessBatch(m.data) }
}

// rnnModel is one of torch_rnn.py's models built from bricks, with a
// fixed batch.
type rnnModel struct {
	x, y   *core.Variable
	cost   *core.Variable
	params []*core.Variable
	data   map[string]*nd.Array
}

func buildRNN(tb testing.TB, name string) rnnModel {
	tb.Helper()
	c := rnnConfigs[name]
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	cfg := bricks.NewConfig(nd.Float32, 1)
	lookup := bricks.NewLookupTable(cfg, "lookup", c.vocab, c.emb)
	var inits []bricks.Brick
	inits = append(inits, lookup)
	x := core.NewInput("features", nd.Int64, 2)
	y := core.NewInput("targets", nd.Int64, 2)
	e, err := bricks.Apply(lookup, "apply", x)
	must(err)
	linear := func(name string, out int) *bricks.Linear {
		l := bricks.NewLinear(cfg, name)
		l.InputDim, l.OutputDim = c.emb, out
		inits = append(inits, l)
		return l
	}
	var h *core.Variable
	switch c.cell {
	case "lstm":
		fork := linear("fork", 4*c.hidden)
		in, err := bricks.Apply(fork, "apply", e[0])
		must(err)
		lstm := bricks.NewLSTM(cfg, "lstm", c.hidden, nil, nil)
		inits = append(inits, lstm)
		outs, err := bricks.ApplyRecurrent(lstm, "apply", map[string]*core.Variable{"inputs": in[0]}, bricks.RecurrentOptions{})
		must(err)
		h = outs[0]
	case "gru":
		fin, fgate := linear("fork_inputs", c.hidden), linear("fork_gates", 2*c.hidden)
		in, err := bricks.Apply(fin, "apply", e[0])
		must(err)
		gin, err := bricks.Apply(fgate, "apply", e[0])
		must(err)
		gru := bricks.NewGatedRecurrent(cfg, "gru", c.hidden, nil, nil)
		inits = append(inits, gru)
		outs, err := bricks.ApplyRecurrent(gru, "apply", map[string]*core.Variable{"inputs": in[0], "gate_inputs": gin[0]}, bricks.RecurrentOptions{})
		must(err)
		h = outs[0]
	}
	flat, err := core.Reshape(h, []int{-1, c.hidden})
	must(err)
	mlp, err := bricks.NewMLP(cfg, "output", []bricks.Brick{bricks.NewSoftmax(cfg, "")}, []int{c.hidden, c.vocab})
	must(err)
	inits = append(inits, mlp)
	for _, br := range inits {
		must(bricks.SetInitSchemes(br, initialization.Uniform{Width: 0.1}, nil))
		if br != bricks.Brick(lookup) {
			_ = bricks.SetInitSchemes(br, nil, initialization.Constant{Value: 0})
		}
		must(bricks.Initialize(br))
	}
	probs, err := bricks.Apply(mlp, "apply", flat)
	must(err)
	yFlat, err := core.Flatten(y, 1)
	must(err)
	cce, err := bricks.NewCost(cfg, "CategoricalCrossEntropy", "", 1)
	must(err)
	costs, err := bricks.Apply(cce, "apply", yFlat, probs[0])
	must(err)
	cg := graph.New([]*core.Variable{costs[0]})
	rng := numpyrand.New(2)
	xs, ys := nd.New(nd.Int64, c.seq, c.bat), nd.New(nd.Int64, c.seq, c.bat)
	prev := make([]int64, c.bat)
	for b := range c.bat {
		prev[b] = rng.Randint(0, int64(c.vocab))
	}
	for t := range c.seq {
		for b := range c.bat {
			next := rng.Randint(0, int64(c.vocab))
			xs.SetFlat(t*c.bat+b, float64(prev[b]))
			ys.SetFlat(t*c.bat+b, float64(next))
			prev[b] = next
		}
	}
	data := map[string]*nd.Array{"features": xs, "targets": ys}
	return rnnModel{x: x, y: y, cost: costs[0], params: cg.Parameters(), data: data}
}

func benchRNN(b *testing.B, name string) {
	c := rnnConfigs[name]
	step := rnnStep(b, name)
	for range 3 {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*c.seq*c.bat)/b.Elapsed().Seconds(), "tokens/s")
}

// torch_rnn.py's models, one training step each (tokens/s).
func BenchmarkLSTMLMStep(b *testing.B)  { benchRNN(b, "lstm-lm") }
func BenchmarkGRULMStep(b *testing.B)   { benchRNN(b, "gru-lm") }
func BenchmarkLSTMBigStep(b *testing.B) { benchRNN(b, "lstm-big") }

// TestRecurrentStepDoesNotAllocate: after the first steps, a training
// step of the LSTM and GRU language models allocates nothing (the fused
// sequences keep every buffer, scratch included, in the executor's
// reused outputs).
func TestRecurrentStepDoesNotAllocate(t *testing.T) {
	if kernels.BLASName != "OpenBLAS" {
		t.Skipf("the pure-Go build multiplies with %s, whose parallel products allocate; a step allocates nothing in the cgo build", kernels.BLASName)
	}
	for _, name := range []string{"lstm-lm", "gru-lm"} {
		step := rnnStep(t, name)
		for range 2 {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
		// 20 steps: AllocsPerRun floors the mean, so a step that allocates
		// counts, while a few stray mallocs on a loaded machine do not (6 in 3
		// steps at load 8, in none of the step's code: none idle or with GOGC=1).
		if n := testing.AllocsPerRun(20, func() {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per step, want 0", name, n)
		}
	}
}

// TestRecurrentProfile prints where a training step's time goes, op by op
// (the cost and its gradients; BLOCKS_PRINT_PROFILE=lstm-lm, gru-lm or
// lstm-big; BLOCKS_NOFUSE=1 for the Scan of the step graph).
func TestRecurrentProfile(t *testing.T) {
	name := os.Getenv("BLOCKS_PRINT_PROFILE")
	if name == "" {
		t.Skip("set BLOCKS_PRINT_PROFILE=MODEL")
	}
	m := buildRNN(t, name)
	grads, err := core.Grad(m.cost, m.params, core.GradOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := core.Compile([]*core.Variable{m.x, m.y}, append([]*core.Variable{m.cost}, grads...), nil)
	if err != nil {
		t.Fatal(err)
	}
	args := []*nd.Array{m.data["features"], m.data["targets"]}
	ops, err := f.ProfileOps(args, 5)
	if err != nil {
		t.Fatal(err)
	}
	var total time.Duration
	for _, o := range ops {
		total += o.Time
	}
	fmt.Printf("%s: %.1f ms a step (cost and gradients, median load %s)\n", name, total.Seconds()*1e3, loadavg())
	for _, o := range ops {
		if o.Time*200 < total {
			continue
		}
		fmt.Printf("%6.1f ms %5.1f%%  %3d× %s\n", o.Time.Seconds()*1e3, 100*o.Time.Seconds()/total.Seconds(), o.Calls, o.Op)
	}
}

// BenchmarkRecurrentWarmup is the warm-up of each recurrent model, one
// op being: building the bricks and compiling the training step (build),
// the first step (plans, buffers), the next four, and a steady step, each
// in wall-clock and CPU seconds per op (make bench prints it before the
// recurrent rows).
func BenchmarkRecurrentWarmup(b *testing.B) {
	for _, name := range []string{"lstm-lm", "gru-lm", "lstm-big"} {
		b.Run(name, func(b *testing.B) {
			type mark struct{ wall, cpu float64 }
			now := func() mark {
				var ru syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return mark{float64(time.Now().UnixNano()) / 1e9, float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9}
			}
			var sum [4]mark // build, first step, next 4, a steady step
			for range b.N {
				m := [5]mark{now()}
				step := rnnStep(b, name)
				m[1] = now()
				for k, n := range []int{1, 4, 1} {
					for range n {
						if err := step(); err != nil {
							b.Fatal(err)
						}
					}
					m[k+2] = now()
				}
				for k := range sum {
					sum[k].wall += m[k+1].wall - m[k].wall
					sum[k].cpu += m[k+1].cpu - m[k].cpu
				}
			}
			for k, what := range []string{"build", "first-step", "next-4-steps", "steady-step"} {
				b.ReportMetric(sum[k].wall/float64(b.N), what+"-s")
				b.ReportMetric(sum[k].cpu/float64(b.N), what+"-cpu-s")
			}
		})
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
