package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// dashScript trains a small MLP on random labels (the cost falls as it
// memorizes them), logging the cost of every batch and, per epoch, the
// cost and error rate; it checkpoints after every epoch and after
// training.
const dashScript = `load("tensor", "matrix", "lmatrix")
load("blocks.config", "config")
load("blocks.bricks", "MLP", "Tanh", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy", "MisclassificationRate")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("blocks.graph", "ComputationGraph")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme")
load("blocks.algorithms", "GradientDescent", "Adam")
load("blocks.extensions.monitoring", "TrainingDataMonitoring")
load("blocks.extensions.saveload", "Checkpoint")
load("blocks.extensions", "FinishAfter")
load("blocks.main_loop", "MainLoop")
load("numpy", "random")

cfg = config(epochs = 20, batch_size = 20, examples = 400, learning_rate = 0.01, hidden = 64)
rng = random.RandomState(5)
feats = rng.normal(size = (cfg.examples, 20)).astype("float32")
targs = rng.randint(0, 4, size = (cfg.examples, 1))
data = IndexableDataset({"features": feats, "targets": targs})
x = matrix("features")
y = lmatrix("targets")
mlp = MLP(activations = [Tanh(), Softmax()], dims = [20, cfg.hidden, 4],
          weights_init = IsotropicGaussian(0.1), biases_init = Constant(0))
mlp.initialize()
p = mlp.apply(x)
cost = CategoricalCrossEntropy().apply(y.flatten(), p)
cost.name = "cost"
err = MisclassificationRate().apply(y.flatten(), p)
err.name = "error_rate"
stream = DataStream(data, iteration_scheme = ShuffledScheme(cfg.examples, batch_size = cfg.batch_size))
alg = GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters,
                      step_rule = Adam(learning_rate = cfg.learning_rate))
loop = MainLoop(algorithm = alg, data_stream = stream, extensions = [
    TrainingDataMonitoring([cost], prefix = "train", after_batch = True),
    TrainingDataMonitoring([cost, err], prefix = "epoch", after_epoch = True),
    FinishAfter(after_n_epochs = cfg.epochs),
    Checkpoint("exp.tar", every_n_epochs = 1),
])
loop.run()
print("finished", loop.status["iterations_done"])
`

type apiRun struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Live   bool   `json:"live"`
}

func dashRuns(t *testing.T, base string) []apiRun {
	t.Helper()
	resp, err := http.Get(base + "/api/runs?token=tok")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var body struct{ Runs []apiRun }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Runs
}

// TestBrowserDashboard drives the dashboard in headless Chromium while a
// real run trains: the run appears, its curves grow, it overlays a
// finished run, the page survives a restart of the server, and the stop
// button stops the run, which saves its checkpoint and exits 0. Run by
// make test-browser (BLOCKS_BROWSER=1), which installs Chromium and
// chromedriver; BLOCKS_DASHBOARD_SCREENSHOT=FILE.png saves a screenshot.
func TestBrowserDashboard(t *testing.T) {
	if os.Getenv("BLOCKS_BROWSER") != "1" {
		t.Skip("the browser test runs in make test-browser (BLOCKS_BROWSER=1)")
	}
	start := time.Now()
	bin, _ := killBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(dashScript), 0o644); err != nil {
		t.Fatal(err)
	}
	// A finished run to compare with.
	runToEnd(t, bin, dir, "run", "--log", "runs.sqlite", "--set", "epochs=40", "--set", "learning_rate=0.003", "exp.star")

	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	startDash := func() *child {
		d := startChild(t, bin, dir, []string{"GOTRACEBACK=all"}, "dashboard", "--port", strconv.Itoa(port), "--token", "tok", ".")
		deadline := time.Now().Add(15 * time.Second)
		for dashRuns(t, base) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("the dashboard did not start:\n%s", d.stderr)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return d
	}
	dash := startDash()
	defer func() { _ = dash.cmd.Process.Kill() }()

	run := startChild(t, bin, dir, nil, "run", "--log", "runs.sqlite", "--set", "epochs=100000", "exp.star")
	defer func() { _ = run.cmd.Process.Kill() }()
	var live apiRun
	deadline := time.Now().Add(20 * time.Second)
	for live.ID == "" {
		for _, r := range dashRuns(t, base) {
			if r.Live {
				live = r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never became live:\n%s", run.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var finished apiRun
	for _, r := range dashRuns(t, base) {
		if r.Status == "finished" {
			finished = r
		}
	}
	if finished.ID == "" {
		t.Fatal("the finished run is not listed")
	}

	w := startBrowser(t, 1280, 1700)
	w.navigate(base + "/?token=tok")
	w.waitFor("the two runs listed", 15*time.Second, `return document.querySelectorAll("#runs input[type=checkbox]").length === 2 && document.getElementById("conn").textContent === "live"`)
	// points(name) is the number of points the train_cost chart shows for
	// a run (from the chart's text description).
	points := func(name string) int {
		q, _ := json.Marshal(name + ": ")
		var n int
		w.eval(`const c = document.querySelector('figure[data-channel="train_cost"] .chart');
			const l = c ? c.getAttribute("aria-label") || "" : "";
			const i = l.indexOf(`+string(q)+`);
			return i < 0 ? 0 : parseInt(l.slice(i + `+strconv.Itoa(len(name)+2)+`), 10);`, &n)
		return n
	}
	w.waitFor("the live run's curve", 15*time.Second, `return !!document.querySelector('figure[data-channel="train_cost"] .chart')`)
	n1 := points(live.Name)
	deadline = time.Now().Add(20 * time.Second)
	for points(live.Name) <= n1 {
		if time.Now().After(deadline) {
			w.fail(fmt.Sprintf("the curve did not grow from %d points (the server has %s)", n1, dashRunsText(base)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Both runs overlaid, each a series of the legend.
	if n := points(finished.Name); n != 800 {
		t.Errorf("the finished run shows %d points of train_cost, want 800 (40 epochs of 20 batches)", n)
	}
	var legend []string
	w.eval(`return [...document.querySelectorAll('figure[data-channel="train_cost"] .u-legend .u-series .u-label')].map(e => e.textContent)`, &legend)
	if len(legend) != 3 || !strings.Contains(strings.Join(legend, "|"), live.Name) || !strings.Contains(strings.Join(legend, "|"), finished.Name) {
		t.Errorf("legend %q, want the x axis and both runs", legend)
	}
	// The keyboard: the space bar on a run's checkbox hides and shows it.
	cb := w.find(`#runs input[data-run="` + finished.ID + `"]`)
	w.keys(cb, "\ue00d")
	w.waitFor("the finished run hidden", 5*time.Second, `return document.querySelectorAll('figure[data-channel="train_cost"] .u-legend .u-series').length === 2`)
	w.keys(w.find(`#runs input[data-run="`+finished.ID+`"]`), "\ue00d")
	w.waitFor("the finished run shown again", 5*time.Second, `return document.querySelectorAll('figure[data-channel="train_cost"] .u-legend .u-series').length === 3`)

	// Zoom from the keyboard: + halves the x range, 0 resets it.
	xrange := func() float64 {
		var r float64
		w.eval(`const f = document.querySelector('figure[data-channel="epoch_cost"]'); return f.dataset.xmax - f.dataset.xmin`, &r)
		return r
	}
	chart := w.find(`figure[data-channel="epoch_cost"] .chart`)
	full := xrange()
	w.keys(chart, "+")
	// (The live run grows meanwhile: half of a range a little longer.)
	if r := xrange(); r < 0.45*full || r > 0.65*full {
		t.Errorf("+ on the chart: x range %g, want about half of %g", r, full)
	}
	w.keys(chart, "0")
	if r := xrange(); r < full {
		t.Errorf("0 on the chart: x range %g, want at least %g", r, full)
	}
	// Hover: the legend shows the values under the pointer.
	w.call("POST", w.session+"/actions", map[string]any{"actions": []any{map[string]any{"type": "pointer", "id": "mouse",
		"parameters": map[string]any{"pointerType": "mouse"}, "actions": []any{map[string]any{"type": "pointerMove", "duration": 0,
			"origin": map[string]string{elementKey: w.find(`figure[data-channel="epoch_cost"] .u-over`)}, "x": 0, "y": 0}}}}}, nil)
	var values []string
	w.eval(`return [...document.querySelectorAll('figure[data-channel="epoch_cost"] .u-legend .u-value')].map(e => e.textContent)`, &values)
	if len(values) != 3 || values[0] == "--" || values[1] == "--" && values[2] == "--" {
		t.Errorf("legend values under the pointer: %q", values)
	}
	// The x axis: epochs, then time since the start (from the run's
	// recorded times); the smoothing slider.
	setControl := func(id, value, event string) {
		w.eval(`const e = document.getElementById("`+id+`"); e.value = "`+value+`"; e.dispatchEvent(new Event("`+event+`")); return true`, nil)
	}
	setControl("xaxis", "epochs", "change")
	w.waitFor("the x axis in epochs", 5*time.Second, `const f = document.querySelector('figure[data-channel="epoch_cost"]');
		return !!f && f.querySelector(".u-legend .u-label").textContent === "epochs" && +f.dataset.xmax > 1 && +f.dataset.xmax < 1000`)
	setControl("xaxis", "elapsed", "change")
	w.waitFor("the x axis in seconds", 5*time.Second, `const f = document.querySelector('figure[data-channel="train_cost"]');
		return !!f && f.querySelector(".u-legend .u-label").textContent === "seconds since the start" && +f.dataset.xmax > 0 && +f.dataset.xmax < 600`)
	if n := points(live.Name); n == 0 {
		t.Error("no points of the live run against time")
	}
	setControl("xaxis", "iterations", "change")
	setControl("smoothing", "0.9", "input")
	w.waitFor("the smoothed value described", 5*time.Second, `const c = document.querySelector('figure[data-channel="train_cost"] .chart'); return !!c && c.getAttribute("aria-label").includes("smoothed")`)
	setControl("smoothing", "0", "input")
	// Light and dark: the theme button cycles system, light, dark.
	theme := w.find("#theme")
	w.click(theme)
	w.click(theme)
	var bg, fg string
	w.eval(`return getComputedStyle(document.body).backgroundColor`, &bg)
	w.eval(`return getComputedStyle(document.body).color`, &fg)
	if bg != "rgb(13, 17, 23)" || fg != "rgb(230, 237, 243)" {
		t.Errorf("dark theme: background %s, text %s", bg, fg)
	}
	if shot := os.Getenv("BLOCKS_DASHBOARD_SCREENSHOT"); shot != "" {
		time.Sleep(500 * time.Millisecond)
		if err := os.WriteFile(strings.TrimSuffix(shot, ".png")+"-dark.png", w.screenshot(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.click(theme)
	w.eval(`return getComputedStyle(document.body).backgroundColor`, &bg)
	if bg != "rgb(255, 255, 255)" {
		t.Errorf("system (light) theme: background %s", bg)
	}

	// The server restarts: the page reconnects and keeps growing.
	_ = dash.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-dash.done:
	case <-time.After(15 * time.Second):
		_ = dash.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-dash.done:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("the dashboard did not stop on SIGTERM:\n%s", dash.stderr)
	}
	w.waitFor("the page noticing the server went away", 10*time.Second, `return document.getElementById("conn").textContent !== "live"`)
	n2 := points(live.Name)
	dash = startDash()
	w.waitFor("the page reconnecting", 15*time.Second, `return document.getElementById("conn").textContent === "live"`)
	deadline = time.Now().Add(20 * time.Second)
	for points(live.Name) <= n2 {
		if time.Now().After(deadline) {
			w.fail(fmt.Sprintf("the curve did not grow after the restart (%d points; the server has %s)", n2, dashRunsText(base)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if shot := os.Getenv("BLOCKS_DASHBOARD_SCREENSHOT"); shot != "" {
		w.eval(`document.querySelectorAll("details").forEach(d => d.open = false); window.scrollTo(0, 0); return true`, nil)
		time.Sleep(1500 * time.Millisecond)
		if err := os.WriteFile(shot, w.screenshot(), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The stop button: the run finishes its batch, checkpoints, exits 0.
	stop := w.find(`button[data-stop="` + live.ID + `"]`)
	if stop == "" {
		t.Fatal("no stop button for the live run")
	}
	w.click(stop)
	select {
	case err := <-run.done:
		if err != nil {
			t.Fatalf("the stopped run exited with %v:\n%s", err, run.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the run did not stop:\n%s", run.stderr)
	}
	if !strings.Contains(run.stderr.String(), "the dashboard requested a stop") {
		t.Errorf("stderr does not say why it stopped:\n%s", run.stderr)
	}
	c, err := checkpoint.Read(filepath.Join(dir, "exp.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Log.UUID != live.ID || !c.Log.Status.BatchInterruptReceived || c.Iteration.Callback != "after_training" {
		t.Errorf("checkpoint: run %s (want %s), batch interrupt %v, callback %s", c.Log.UUID, live.ID, c.Log.Status.BatchInterruptReceived, c.Iteration.Callback)
	}
	w.waitFor("the run shown as stopped", 10*time.Second, `return [...document.querySelectorAll("#runs .status")].some(e => e.textContent === "stopped")`)
	stoppedAt := c.Log.Status.IterationsDone
	nStopped := points(live.Name)

	// Resumed into the same log, the run continues its curve (the
	// resumed_from chain): the new run shows the old points and more.
	res := startChild(t, bin, dir, nil, "resume", "--log", "runs.sqlite", "exp.tar")
	defer func() { _ = res.cmd.Process.Kill() }()
	var resumed apiRun
	deadline = time.Now().Add(20 * time.Second)
	for resumed.ID == "" {
		for _, r := range dashRuns(t, base) {
			if r.Live && r.ID != live.ID {
				resumed = r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed run never became live:\n%s", res.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.waitFor("the resumed run's curve beyond the stopped one", 15*time.Second, `const c = document.querySelector('figure[data-channel="train_cost"] .chart');
		return !!c && (c.getAttribute("aria-label") || "").includes(`+jsString(resumed.Name+": ")+`)`)
	deadline = time.Now().Add(10 * time.Second)
	for points(resumed.Name) <= nStopped {
		if time.Now().After(deadline) {
			t.Fatalf("the resumed run shows %d points, the stopped one %d: the chain does not continue", points(resumed.Name), nStopped)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var resumedFrom string
	w.eval(`return [...document.querySelectorAll("#runs li")].map(l => l.textContent).join("\n")`, &resumedFrom)
	if !strings.Contains(resumedFrom, "resumed from "+live.ID[:8]) {
		t.Errorf("the run list does not show the chain:\n%s", resumedFrom)
	}
	w.click(w.find(`button[data-stop="` + resumed.ID + `"]`))
	select {
	case err := <-res.done:
		if err != nil {
			t.Fatalf("the stopped resumed run exited with %v:\n%s", err, res.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the resumed run did not stop:\n%s", res.stderr)
	}
	c2, err := checkpoint.Read(filepath.Join(dir, "exp.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if c2.Log.UUID != resumed.ID || c2.Log.Status.ResumedFrom != live.ID || c2.Log.Status.IterationsDone <= stoppedAt {
		t.Errorf("resumed checkpoint: run %s resumed from %s at iteration %d (stopped at %d)", c2.Log.UUID, c2.Log.Status.ResumedFrom, c2.Log.Status.IterationsDone, stoppedAt)
	}
	t.Logf("browser test: %.1f s (the stopped run made %d iterations)", time.Since(start).Seconds(), c.Log.Status.IterationsDone)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func dashRunsText(base string) string {
	resp, err := http.Get(base + "/api/runs?token=tok")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
