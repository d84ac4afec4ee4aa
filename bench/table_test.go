package bench

import (
	"bufio"
	"fmt"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
)

// benchModel is one row of `make bench`'s table: a training step here and
// the PyTorch model of ../shared/bench/run-torch.sh doing the same work.
type benchModel struct {
	Name  string // as printed
	Torch string // run-torch.sh's model name
	Batch int    // examples per step (the same as PyTorch's)
	// Build makes one training step (after Build returns, every call is
	// a full step on a fixed batch).
	Build func(testing.TB) func() error
	// Products, when not nil, are the matrix products of one step as
	// (m, n, k, transA, transB): the step's matrix-multiply limit is the
	// time of these products alone.
	Products []product
	// Steps, when positive, is the number of steps timed per round on
	// both sides (run-torch.sh --steps) instead of one epoch.
	Steps int
	// Unit is what Batch counts ("examples" when empty, "tokens" for the
	// recurrent language models: sequence length × batch); PyTorch's
	// RESULT line gives ex_per_s or tokens_per_s accordingly.
	Unit string
}

func (m benchModel) unit() string {
	if m.Unit == "" {
		return "examples"
	}
	return m.Unit
}

// torchField is the RESULT field of PyTorch's rate in m's unit.
func (m benchModel) torchField() string {
	if m.Unit == "tokens" {
		return "tokens_per_s"
	}
	return "ex_per_s"
}

// rnnRow is a row of torch_rnn.py's language models: Steps steps a round
// on both sides, in tokens/s.
func rnnRow(name, label string, steps int) benchModel {
	c := rnnConfigs[name]
	return benchModel{Name: label, Torch: name, Batch: c.seq * c.bat, Steps: steps, Unit: "tokens",
		Build: func(tb testing.TB) func() error { return rnnStep(tb, name) }}
}

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

func mlpModel(name, torch string, hidden, batch int) benchModel {
	return benchModel{
		Name: name, Torch: torch, Batch: batch,
		Build: func(tb testing.TB) func() error {
			gd, data := mlpStep(tb, []int{784, hidden, 10}, batch, 0.1)
			return func() error { return gd.ProcessBatch(data) }
		},
		Products: mlpProducts(batch, hidden),
	}
}

// benchModels are the rows of the table, in order.
var benchModels = []benchModel{
	mlpModel("MLP 784-100-10 (tutorial), batch 256", "mlp-tutorial", 100, 256),
	mlpModel("MLP 784-500-10, batch 128", "mlp-500", 500, 128),
	{Name: "LeNet (PyTorch baseline's), batch 64", Torch: "lenet", Batch: 64, Build: lenetStep, Steps: 200},
	rnnRow("lstm-lm", "lstm-lm: LSTM(256) LM, seq 50, batch 32 (tokens/s)", 40),
	rnnRow("gru-lm", "gru-lm: GRU(256) LM, seq 50, batch 32 (tokens/s)", 40),
	rnnRow("lstm-big", "lstm-big: LSTM(1024), seq 50, batch 64 (tokens/s)", 10),
}

// stepRate runs step for steps steps after a 3-step warm-up and returns
// examples per second and heap allocations per step.
func stepRate(step func() error, batch, steps int) (float64, float64, error) {
	for range 3 {
		if err := step(); err != nil {
			return 0, 0, err
		}
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	for range steps {
		if err := step(); err != nil {
			return 0, 0, err
		}
	}
	el := time.Since(t0)
	runtime.ReadMemStats(&m1)
	return float64(steps*batch) / el.Seconds(), float64(m1.Mallocs-m0.Mallocs) / float64(steps), nil
}

// stepAndProducts measures steps training steps in a row (after a
// warm-up): examples/s and allocations per step, as training runs them.
// When ps is not nil it then runs as many steps again alternating, in
// chunks of 4, with as many runs of the step's products alone, so that
// both see the same load, and returns steps/s and GFLOP/s of the products
// and the share of the limit: the median over the chunks of (time of the
// products alone / time of the steps), each pair measured back to back.
// (The examples/s come from the uninterrupted run: a step right after a
// chunk of products finds its weights evicted from the caches by the
// products' own matrices, which training never does; that cost the
// 784-500-10 row about 5%.)
func stepAndProducts(step func() error, batch, steps int, ps []product) (ex, allocs, sps, gflops, share float64, err error) {
	if ex, allocs, err = stepRate(step, batch, steps); err != nil || ps == nil {
		return
	}
	prod := newProdRunner(ps)
	prod.time(1)
	var tProd time.Duration
	var shares []float64
	done := 0
	for done < steps {
		k := min(4, steps-done)
		t0 := time.Now()
		for range k {
			if err = step(); err != nil {
				return
			}
		}
		ts := time.Since(t0)
		tp := prod.time(k)
		tProd += tp
		shares = append(shares, tp.Seconds()/ts.Seconds())
		done += k
	}
	sps = float64(steps) / tProd.Seconds()
	gflops = prod.flops * sps / 1e9
	share = median(shares)
	return
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

// productsRate times the products of one step (reps times, after one
// warm-up) and returns steps per second and GFLOP/s.
func productsRate(ps []product, reps int) (float64, float64) {
	r := newProdRunner(ps)
	r.time(1)
	s := r.time(reps).Seconds() / float64(reps)
	return 1 / s, r.flops / s / 1e9
}

func sharedDir() string {
	if d := os.Getenv("BLOCKS_SHARED"); d != "" {
		return d
	}
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..", "shared")
}

// torchRate runs run-torch.sh MODEL [ARGS] (one epoch over MNIST, or
// --steps N) and returns its examples per second.
func torchRate(model string, args ...string) (float64, error) {
	return torchRateField(model, "ex_per_s", args...)
}

// torchRateField is torchRate reading the RESULT line's field key.
func torchRateField(model, key string, args ...string) (float64, error) {
	out, err := exec.Command(filepath.Join(sharedDir(), "bench", "run-torch.sh"), append([]string{model}, args...)...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("run-torch.sh %s: %v\n%s", model, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := field(line, key); strings.HasPrefix(line, "RESULT") && f != "" {
			return strconv.ParseFloat(f, 64)
		}
	}
	return 0, fmt.Errorf("run-torch.sh %s: no RESULT line in\n%s", model, out)
}

func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func runs() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_RUNS")); err == nil && n > 0 {
		return n
	}
	return 5
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// TestBenchTable is `make bench`'s table (BLOCKS_BENCH=1): for each model,
// BENCH_RUNS (default 5) interleaved rounds of one epoch's worth of steps
// here, one epoch of PyTorch (run-torch.sh) and the step's products alone;
// medians. Then the scaling table and plot (TestBenchScaling).
func TestBenchTable(t *testing.T) {
	if os.Getenv("BLOCKS_BENCH") == "" {
		t.Skip("set BLOCKS_BENCH=1 (make bench)")
	}
	n := runs()
	models := selectedModels()
	type row struct{ ours, torch, ratio, allocs, limit, gflops, share []float64 }
	rows := make([]row, len(models))
	steps := make([]func() error, len(models))
	for i, m := range models {
		t0 := time.Now()
		steps[i] = m.Build(t)
		if m.Unit == "tokens" {
			// warm-up: building the model, compiling its training step,
			// and the first 5 steps (plans, buffers)
			for range 5 {
				if err := steps[i](); err != nil {
					t.Fatal(err)
				}
			}
			warm := time.Since(t0)
			t1 := time.Now()
			for range 3 {
				if err := steps[i](); err != nil {
					t.Fatal(err)
				}
			}
			step := time.Since(t1) / 3
			fmt.Printf("%s: warm-up (build, compile, 5 steps) %.2f s, of which %.2f s beyond 5 steady steps of %.3f s (load %s)\n",
				m.Torch, warm.Seconds(), (warm - 5*step).Seconds(), step.Seconds(), loadavg())
		}
	}
	fmt.Printf("load average before: %s\n", loadavg())
	for r := range n {
		for i, m := range models {
			epoch := 60000 / m.Batch
			var torchArgs []string
			if m.Steps > 0 {
				epoch = m.Steps
				torchArgs = []string{"--steps", strconv.Itoa(m.Steps)}
			}
			ex, al, sps, gf, sh, err := stepAndProducts(steps[i], m.Batch, epoch, m.Products)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := torchRateField(m.Torch, m.torchField(), torchArgs...)
			if err != nil {
				t.Fatal(err)
			}
			rows[i].ours = append(rows[i].ours, ex)
			rows[i].torch = append(rows[i].torch, tr)
			rows[i].allocs = append(rows[i].allocs, al)
			rows[i].ratio = append(rows[i].ratio, ex/tr)
			u := map[string]string{"examples": "ex/s", "tokens": "tokens/s"}[m.unit()]
			line := fmt.Sprintf("run %d %-40s here %8.0f %s  torch %8.0f %s  (load %s)", r+1, m.Name, ex, u, tr, u, loadavg())
			if m.Products != nil {
				rows[i].limit = append(rows[i].limit, sps*float64(m.Batch))
				rows[i].gflops = append(rows[i].gflops, gf)
				rows[i].share = append(rows[i].share, sh)
				line += fmt.Sprintf("  products alone %8.0f ex/s (%.0f GFLOP/s), share %.0f%%", sps*float64(m.Batch), gf, 100*sh)
			}
			fmt.Println(line)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d interleaved runs, medians; load average after: %s; GOMAXPROCS %d, %s\n\n",
		n, loadavg(), runtime.GOMAXPROCS(0), blasThreads())
	fmt.Fprintf(&b, "ratio: median of the rounds' ratios; share of limit: median over chunks of 4 steps of (products alone / steps), each pair back to back\n\n")
	fmt.Fprintf(&b, "| model | examples/s here | examples/s PyTorch | ratio | allocs/step | matmul limit (examples/s, sgemm GFLOP/s) | share of limit |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|\n")
	for i, m := range models {
		o, tr := median(rows[i].ours), median(rows[i].torch)
		lim, share := "–", "–"
		if rows[i].limit != nil {
			l := median(rows[i].limit)
			lim = fmt.Sprintf("%.0f (%.0f)", l, median(rows[i].gflops))
			share = fmt.Sprintf("%.0f%%", 100*median(rows[i].share))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.2f× | %.0f | %s | %s |\n", m.Name, o, tr, median(rows[i].ratio), median(rows[i].allocs), lim, share)
	}
	fmt.Print(b.String())
	writeOut(t, "BENCH_TABLE_OUT", b.String())
}

// selectedModels are the table's rows, or those whose PyTorch names
// BENCH_MODELS lists (comma-separated, e.g. lstm-lm,gru-lm).
func selectedModels() []benchModel {
	sel := os.Getenv("BENCH_MODELS")
	if sel == "" {
		return benchModels
	}
	var out []benchModel
	for _, m := range benchModels {
		if slices.Contains(strings.Split(sel, ","), m.Torch) {
			out = append(out, m)
		}
	}
	return out
}

func blasThreads() string {
	if v := os.Getenv("OPENBLAS_NUM_THREADS"); v != "" {
		return "OPENBLAS_NUM_THREADS=" + v
	}
	return "OpenBLAS single-threaded, products split by core"
}

func writeOut(t *testing.T, env, s string) {
	if p := os.Getenv(env); p != "" {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scaling configurations: batch sizes at hidden 500, hidden sizes at
// batch 256.
type config struct{ batch, hidden int }

func scalingConfigs() (byBatch, byHidden []config) {
	for _, b := range []int{32, 64, 128, 256, 512, 1024} {
		byBatch = append(byBatch, config{b, 500})
	}
	for _, h := range []int{100, 250, 500, 1000, 2000} {
		byHidden = append(byHidden, config{256, h})
	}
	return
}

// scalingSteps gives each configuration about 16384 examples' work per
// round, scaled down for large hidden sizes (measured in 4 alternations).
func scalingSteps(c config) int {
	ex := 16384 * 500 / max(c.hidden, 500)
	return max(16, ex/c.batch)
}

// TestBenchScaling is the scaling table and plot (BLOCKS_BENCH=1): the MLP
// 784-h-10 over batch sizes and hidden sizes, here against PyTorch
// (bench/torch_mlp.py, one process fed configurations one at a time), the
// two measured alternately configuration by configuration, BENCH_RUNS
// rounds, medians (the ratio is the median of the paired ratios). The plot
// goes to BENCH_PLOT (a .png path) when set.
func TestBenchScaling(t *testing.T) {
	if os.Getenv("BLOCKS_BENCH") == "" {
		t.Skip("set BLOCKS_BENCH=1 (make bench)")
	}
	byBatch, byHidden := scalingConfigs()
	var all []config
	for _, c := range append(slices.Clone(byBatch), byHidden...) {
		if !slices.Contains(all, c) {
			all = append(all, c)
		}
	}
	cmd := exec.Command("/usr/bin/python3", "torch_mlp.py")
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=passive")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	torch := func(c config) (float64, error) {
		if _, err := fmt.Fprintf(stdin, "%dx%d:%d\n", c.batch, c.hidden, scalingSteps(c)/4); err != nil {
			return 0, err
		}
		for lines.Scan() {
			if line := lines.Text(); strings.HasPrefix(line, "RESULT") {
				return strconv.ParseFloat(field(line, "ex_per_s"), 64)
			}
		}
		return 0, fmt.Errorf("torch_mlp.py ended: %v", lines.Err())
	}
	steps := map[config]func() error{}
	for _, c := range all {
		gd, data := mlpStep(t, []int{784, c.hidden, 10}, c.batch, 0.1)
		steps[c] = func() error { return gd.ProcessBatch(data) }
	}
	ours, theirs, ratios := map[config][]float64{}, map[config][]float64{}, map[config][]float64{}
	for r := range runs() {
		for _, c := range all {
			for range 4 { // 4 alternations of a quarter of the work each
				ex, _, err := stepRate(steps[c], c.batch, scalingSteps(c)/4)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := torch(c)
				if err != nil {
					t.Fatal(err)
				}
				ours[c], theirs[c], ratios[c] = append(ours[c], ex), append(theirs[c], tr), append(ratios[c], ex/tr)
			}
		}
		fmt.Printf("scaling round %d done (load %s)\n", r+1, loadavg())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nMLP 784-h-10 scaling, %d rounds of 4 alternations (here, PyTorch, here, ...) per configuration; medians of the %d measurements (load average %s)\n\n", runs(), 4*runs(), loadavg())
	fmt.Fprintf(&b, "| batch | hidden | examples/s here | examples/s PyTorch | ratio (median of pairs) |\n|---:|---:|---:|---:|---:|\n")
	for _, c := range all {
		fmt.Fprintf(&b, "| %d | %d | %.0f | %.0f | %.2f× |\n", c.batch, c.hidden, median(ours[c]), median(theirs[c]), median(ratios[c]))
	}
	fmt.Print(b.String())
	writeOut(t, "BENCH_SCALING_OUT", b.String())
	if p := os.Getenv("BENCH_PLOT"); p != "" {
		if err := scalingPlot(p, byBatch, byHidden, ours, theirs); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("plot: %s\n", p)
	}
}

// scalingPlot draws examples/s against batch size and against hidden size
// (log-log), here and PyTorch, side by side in one PNG.
func scalingPlot(path string, byBatch, byHidden []config, ours, theirs map[config][]float64) error {
	panel := func(title, xlabel string, cs []config, x func(config) int) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = xlabel
		p.Y.Label.Text = "examples/s"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		var ticks []plot.Tick
		for _, c := range cs {
			ticks = append(ticks, plot.Tick{Value: float64(x(c)), Label: strconv.Itoa(x(c))})
		}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(ticks), plot.LogTicks{Prec: -1}
		p.Legend.Top = true
		for k, src := range []map[config][]float64{ours, theirs} {
			pts := make(plotter.XYs, len(cs))
			for i, c := range cs {
				pts[i].X, pts[i].Y = float64(x(c)), median(src[c])
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			col := []color.Color{color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 255}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 255}}[k]
			l.Color, s.Color = col, col
			p.Add(l, s)
			p.Legend.Add([]string{"blocks-go", "PyTorch"}[k], l, s)
		}
		return p, nil
	}
	p1, err := panel("MLP 784-500-10: batch size", "batch size", byBatch, func(c config) int { return c.batch })
	if err != nil {
		return err
	}
	p2, err := panel("MLP 784-h-10, batch 256: hidden size", "hidden units h", byHidden, func(c config) int { return c.hidden })
	if err != nil {
		return err
	}
	img := vgimg.New(12*vg.Inch, 4.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4, PadY: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8}
	canvases := plot.Align([][]*plot.Plot{{p1, p2}}, tiles, dc)
	p1.Draw(canvases[0][0])
	p2.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
