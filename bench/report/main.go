// Command report is make bench's table and scaling plot: it runs the Go
// benchmarks of package bench (a test binary built with go test -c)
// interleaved with their PyTorch twins (../shared/bench/run-torch.sh and
// bench/torch_mlp.py), round after round, and prints the medians, the
// ratios and the share of the matrix-multiply limit as Markdown tables.
//
// The Go side is plain go test -bench output: every line a benchmark
// printed is kept in OUT/go.txt, and PyTorch's results are written in the
// same format to OUT/torch.txt (BenchmarkTorch/MODEL), so that benchstat
// compares rounds, machines or commits:
//
//	go test -c -o /tmp/bench.test ./bench
//	go run ./bench/report -test /tmp/bench.test -runs 5 -out /tmp/bench-out
//	benchstat /tmp/bench-out/go.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// row is one row of the table: a training step here (a benchmark of
// package bench) and the PyTorch model doing the same work.
type row struct {
	label string
	torch string // run-torch.sh's model name
	bench string // the step's benchmark, as -test.bench selects it
	// products, when set, is the benchmark of the step's matrix-multiply
	// limit (BenchmarkProducts).
	products string
	// steps a round on both sides; 0 for one epoch (60000/batch steps
	// here, an epoch of MNIST in PyTorch).
	steps, batch int
	unit         string // "examples" or "tokens"
}

var rows = []row{
	{"MLP 784-100-10 (tutorial), batch 256", "mlp-tutorial", "^BenchmarkMLPTutorialStep$", "^BenchmarkProducts$/^mlp-tutorial$", 0, 256, "examples"},
	{"MLP 784-500-10, batch 128", "mlp-500", "^BenchmarkMLP500Step$", "^BenchmarkProducts$/^mlp-500$", 0, 128, "examples"},
	{"LeNet (PyTorch baseline's), batch 64", "lenet", "^BenchmarkLeNetStep$/^batch=64$", "^BenchmarkProducts$/^lenet$", 200, 64, "examples"},
	{"lstm-lm: LSTM(256) LM, seq 50, batch 32 (tokens/s)", "lstm-lm", "^BenchmarkLSTMLMStep$", "^BenchmarkProducts$/^lstm-lm$", 40, 50 * 32, "tokens"},
	{"gru-lm: GRU(256) LM, seq 50, batch 32 (tokens/s)", "gru-lm", "^BenchmarkGRULMStep$", "^BenchmarkProducts$/^gru-lm$", 40, 50 * 32, "tokens"},
	{"lstm-big: LSTM(1024), seq 50, batch 64 (tokens/s)", "lstm-big", "^BenchmarkLSTMBigStep$", "^BenchmarkProducts$/^lstm-big$", 10, 50 * 64, "tokens"},
}

// scaling configurations (batch, hidden), as BenchmarkMLPScaling names
// them: batch sizes at hidden 500, then hidden sizes at batch 256.
var byBatch = [][2]int{{32, 500}, {64, 500}, {128, 500}, {256, 500}, {512, 500}, {1024, 500}}
var byHidden = [][2]int{{256, 100}, {256, 250}, {256, 500}, {256, 1000}, {256, 2000}}

// scalingSteps gives a configuration about 16384 examples' work per
// round, less for large hidden sizes.
func scalingSteps(c [2]int) int {
	ex := 16384 * 500 / max(c[1], 500)
	return max(16, ex/c[0])
}

type reporter struct {
	test, dir, shared string
	goOut, torchOut   io.Writer
}

func main() {
	test := flag.String("test", "", "the test binary of package bench (go test -c -o PATH ./bench)")
	dir := flag.String("dir", "bench", "package bench's directory (the benchmarks' working directory; torch_mlp.py)")
	runs := flag.Int("runs", 5, "interleaved rounds")
	models := flag.String("models", "", "the table's rows by PyTorch name, comma-separated (default all)")
	table := flag.Bool("table", true, "run the table")
	scaling := flag.Bool("scaling", true, "run the scaling table")
	plotPath := flag.String("plot", "", "write the scaling plot to this .png")
	out := flag.String("out", "", "directory for the benchmark output (go.txt, torch.txt); default a new temporary one")
	tableOut := flag.String("table-out", "", "also write the table to this file")
	scalingOut := flag.String("scaling-out", "", "also write the scaling table to this file")
	shared := flag.String("shared", os.Getenv("BLOCKS_SHARED"), "the shared directory (bench/run-torch.sh)")
	flag.Parse()
	if *test == "" || *shared == "" {
		fmt.Fprintln(os.Stderr, "report: -test and -shared (or BLOCKS_SHARED) are required")
		os.Exit(2)
	}
	if err := run(*test, *dir, *shared, *out, *runs, *models, *table, *scaling, *plotPath, *tableOut, *scalingOut); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(test, dir, shared, out string, runs int, models string, table, scaling bool, plotPath, tableOut, scalingOut string) error {
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "bench-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	goF, err := os.Create(filepath.Join(out, "go.txt"))
	if err != nil {
		return err
	}
	defer goF.Close()
	torchF, err := os.Create(filepath.Join(out, "torch.txt"))
	if err != nil {
		return err
	}
	defer torchF.Close()
	fmt.Fprintf(torchF, "goos: %s\ngoarch: %s\npkg: pytorch\n", runtime.GOOS, runtime.GOARCH)
	r := &reporter{test: test, dir: dir, shared: shared, goOut: goF, torchOut: torchF}
	if table {
		sel := rows
		if models != "" {
			sel = nil
			for _, m := range rows {
				if slices.Contains(strings.Split(models, ","), m.torch) {
					sel = append(sel, m)
				}
			}
		}
		s, err := r.table(sel, runs)
		if err != nil {
			return err
		}
		fmt.Print(s)
		if err := writeOut(tableOut, s); err != nil {
			return err
		}
	}
	if scaling {
		s, err := r.scaling(runs, plotPath)
		if err != nil {
			return err
		}
		fmt.Print(s)
		if err := writeOut(scalingOut, s); err != nil {
			return err
		}
	}
	fmt.Printf("\nbenchstat-ready output: %s (here), %s (PyTorch)\n", goF.Name(), torchF.Name())
	return nil
}

func writeOut(path, s string) error {
	if path == "" {
		return nil
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// result is one benchmark line: its name and metrics by unit.
type result struct {
	name    string
	metrics map[string]float64
}

// bench runs the benchmarks pattern selects, steps iterations each, and
// returns their results; the output goes to go.txt.
func (r *reporter) bench(pattern string, steps int) ([]result, error) {
	cmd := exec.Command(r.test, "-test.run", "^$", "-test.bench", pattern, "-test.benchtime", fmt.Sprintf("%dx", steps),
		"-test.benchmem", "-test.count", "1")
	cmd.Dir = r.dir // as go test runs it
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s -test.bench %s: %v\n%s", r.test, pattern, err, outb)
	}
	if _, err := r.goOut.Write(outb); err != nil {
		return nil, err
	}
	res := parseBench(string(outb))
	if len(res) == 0 {
		return nil, fmt.Errorf("-test.bench %s: no benchmark ran:\n%s", pattern, outb)
	}
	for i := range res {
		res[i].metrics["peak-RSS-MB"] = peakRSSMB(cmd.ProcessState)
	}
	return res, nil
}

// peakRSSMB is the peak RSS of a process that has ended, in MB.
func peakRSSMB(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) * 1024 / 1e6 // Linux: kilobytes
	}
	return 0
}

// parseBench reads the result lines of go test -bench output.
func parseBench(s string) []result {
	var out []result
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		r := result{name: f[0], metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				r.metrics[f[i+1]] = v
			}
		}
		out = append(out, r)
	}
	return out
}

// torchRate runs run-torch.sh MODEL [ARGS] and returns the RESULT line's
// field key; the result goes to torch.txt as BenchmarkTorch/MODEL.
func (r *reporter) torchRate(m row, args ...string) (float64, float64, error) {
	key := map[string]string{"examples": "ex_per_s", "tokens": "tokens_per_s"}[m.unit]
	cmd := exec.Command(filepath.Join(r.shared, "bench", "run-torch.sh"), append([]string{m.torch}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("run-torch.sh %s: %v\n%s", m.torch, err, out)
	}
	// run-torch.sh execs python: the process's peak RSS is PyTorch's.
	rss := peakRSSMB(cmd.ProcessState)
	for _, line := range strings.Split(string(out), "\n") {
		if v := field(line, key); strings.HasPrefix(line, "RESULT") && v != "" {
			rate, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("run-torch.sh %s: %q: %v", m.torch, line, err)
			}
			fmt.Fprintf(r.torchOut, "BenchmarkTorch/%s 1 %.0f ns/op %.0f %s/s %.1f peak-RSS-MB\n", m.torch, 1e9*float64(m.batch)/rate, rate, m.unit, rss)
			return rate, rss, nil
		}
	}
	return 0, 0, fmt.Errorf("run-torch.sh %s: no RESULT line in\n%s", m.torch, out)
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

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// table runs the rows' rounds and returns the table.
func (r *reporter) table(sel []row, runs int) (string, error) {
	for _, m := range sel {
		if m.unit != "tokens" {
			continue
		}
		// Building the model, compiling its step and the first steps.
		res, err := r.bench("^BenchmarkRecurrentWarmup$/^"+m.torch+"$", 1)
		if err != nil {
			return "", err
		}
		w := res[0].metrics
		fmt.Printf("%s: warm-up: build and compile %.2f s, first step %.2f s, next 4 %.2f s; a steady step %.3f s (load %s)\n",
			m.torch, w["build-s"], w["first-step-s"], w["next-4-steps-s"], w["steady-step-s"], loadavg())
	}
	type acc struct{ ours, torch, ratio, allocs, limit, gflops, share, rss, trss []float64 }
	accs := make([]acc, len(sel))
	fmt.Printf("load average before: %s\n", loadavg())
	for round := range runs {
		for i, m := range sel {
			steps := 60000 / m.batch
			var torchArgs []string
			if m.steps > 0 {
				steps = m.steps
				torchArgs = []string{"--steps", strconv.Itoa(m.steps)}
			}
			res, err := r.bench(m.bench, steps)
			if err != nil {
				return "", err
			}
			ex, al := res[0].metrics[m.unit+"/s"], res[0].metrics["allocs/op"]
			tr, trss, err := r.torchRate(m, torchArgs...)
			if err != nil {
				return "", err
			}
			a := &accs[i]
			a.ours, a.torch, a.ratio, a.allocs = append(a.ours, ex), append(a.torch, tr), append(a.ratio, ex/tr), append(a.allocs, al)
			a.rss, a.trss = append(a.rss, res[0].metrics["peak-RSS-MB"]), append(a.trss, trss)
			u := map[string]string{"examples": "ex/s", "tokens": "tokens/s"}[m.unit]
			line := fmt.Sprintf("run %d %-40s here %8.0f %s  torch %8.0f %s  peak RSS %.0f/%.0f MB  (load %s)", round+1, m.label, ex, u, tr, u,
				res[0].metrics["peak-RSS-MB"], trss, loadavg())
			if m.products != "" {
				pres, err := r.bench(m.products, steps)
				if err != nil {
					return "", err
				}
				p := pres[0].metrics
				a.limit, a.gflops, a.share = append(a.limit, p["limit-examples/s"]), append(a.gflops, p["GFLOP/s"]), append(a.share, p["%-of-limit"])
				line += fmt.Sprintf("  products alone %8.0f %s (%.0f GFLOP/s), share %.0f%%", p["limit-examples/s"], u, p["GFLOP/s"], p["%-of-limit"])
			}
			fmt.Println(line)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d interleaved runs, medians; load average after: %s; %s\n\n", runs, loadavg(), blasThreads())
	fmt.Fprintf(&b, "ratio: median of the rounds' ratios; share of limit: median over chunks of 4 steps of (products alone / steps), each pair back to back (BenchmarkProducts; the recurrent models' per-step products run on their own packed-weight kernel where it beats OpenBLAS, so their share can pass 100%%)\n\n")
	fmt.Fprintf(&b, "peak RSS: the benchmark process's (one model's steps on one batch) and PyTorch's process (run-torch.sh: the model and its data set), MB\n\n")
	fmt.Fprintf(&b, "| model | examples/s here | examples/s PyTorch | ratio | allocs/step | peak RSS here / PyTorch (MB) | matmul limit (examples/s, sgemm GFLOP/s) | share of limit |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, m := range sel {
		a := accs[i]
		lim, share := "–", "–"
		if a.limit != nil {
			lim = fmt.Sprintf("%.0f (%.0f)", median(a.limit), median(a.gflops))
			share = fmt.Sprintf("%.0f%%", median(a.share))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.2f× | %.0f | %.0f / %.0f | %s | %s |\n", m.label, median(a.ours), median(a.torch), median(a.ratio), median(a.allocs),
			median(a.rss), median(a.trss), lim, share)
	}
	return b.String(), nil
}

func blasThreads() string {
	if v := os.Getenv("OPENBLAS_NUM_THREADS"); v != "" {
		return "OPENBLAS_NUM_THREADS=" + v
	}
	return "OpenBLAS single-threaded, products split by core"
}

// scaling runs the scaling table: per round and configuration, 4
// alternations of a quarter of the work here (BenchmarkMLPScaling) and in
// torch_mlp.py (one process fed one configuration at a time).
func (r *reporter) scaling(runs int, plotPath string) (string, error) {
	var all [][2]int
	for _, c := range append(slices.Clone(byBatch), byHidden...) {
		if !slices.Contains(all, c) {
			all = append(all, c)
		}
	}
	cmd := exec.Command("/usr/bin/python3", filepath.Join(r.dir, "torch_mlp.py"))
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=passive")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	torch := func(c [2]int, steps int) (float64, error) {
		if _, err := fmt.Fprintf(stdin, "%dx%d:%d\n", c[0], c[1], steps); err != nil {
			return 0, err
		}
		for lines.Scan() {
			if line := lines.Text(); strings.HasPrefix(line, "RESULT") {
				rate, err := strconv.ParseFloat(field(line, "ex_per_s"), 64)
				if err == nil {
					fmt.Fprintf(r.torchOut, "BenchmarkTorch/scaling/batch=%d,hidden=%d 1 %.0f ns/op %.0f examples/s\n", c[0], c[1], 1e9*float64(c[0])/rate, rate)
				}
				return rate, err
			}
		}
		return 0, fmt.Errorf("torch_mlp.py ended: %v", lines.Err())
	}
	ours, theirs, ratios := map[[2]int][]float64{}, map[[2]int][]float64{}, map[[2]int][]float64{}
	for round := range runs {
		for _, c := range all {
			for range 4 {
				steps := scalingSteps(c) / 4
				res, err := r.bench(fmt.Sprintf("^BenchmarkMLPScaling$/^batch=%d,hidden=%d$", c[0], c[1]), steps)
				if err != nil {
					return "", err
				}
				ex := res[0].metrics["examples/s"]
				tr, err := torch(c, steps)
				if err != nil {
					return "", err
				}
				ours[c], theirs[c], ratios[c] = append(ours[c], ex), append(theirs[c], tr), append(ratios[c], ex/tr)
			}
		}
		fmt.Printf("scaling round %d done (load %s)\n", round+1, loadavg())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nMLP 784-h-10 scaling, %d rounds of 4 alternations (here, PyTorch, here, ...) per configuration; medians of the %d measurements (load average %s)\n\n", runs, 4*runs, loadavg())
	fmt.Fprintf(&b, "| batch | hidden | examples/s here | examples/s PyTorch | ratio (median of pairs) |\n|---:|---:|---:|---:|---:|\n")
	for _, c := range all {
		fmt.Fprintf(&b, "| %d | %d | %.0f | %.0f | %.2f× |\n", c[0], c[1], median(ours[c]), median(theirs[c]), median(ratios[c]))
	}
	if plotPath != "" {
		if err := scalingPlot(plotPath, ours, theirs); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\nplot: %s\n", plotPath)
	}
	return b.String(), nil
}
