//go:build cgo

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The Jupyter kernel's tests drive the built binary with Debian's
// jupyter_client and nbclient (testdata/jupyter/driver.py). make
// test-jupyter installs them (python3-jupyter-client, python3-nbclient,
// jupyter-console) and sets BLOCKS_JUPYTER=1, which makes their absence a
// failure; elsewhere the tests run when /usr/bin/python3 has them.

// jupyterPython is Debian's Python with jupyter_client and nbclient.
func jupyterPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	err := exec.Command(py, "-c", "import jupyter_client, nbclient, nbformat, zmq").Run()
	if err != nil {
		if os.Getenv("BLOCKS_JUPYTER") == "1" {
			t.Fatalf("%s cannot import jupyter_client and nbclient (%v): make test-jupyter installs python3-jupyter-client and python3-nbclient", py, err)
		}
		t.Skipf("%s has no jupyter_client/nbclient (make test-jupyter installs them)", py)
	}
	return py
}

// jupyterEnv installs the kernelspec of the test binary in a fresh
// Jupyter tree and returns the environment that finds it (and keeps
// Jupyter's files out of the home directory).
func jupyterEnv(t *testing.T) []string {
	t.Helper()
	root := t.TempDir()
	code, out, errs := runBinary(t, "", "kernel", "install", "--prefix", root)
	if code != 0 {
		t.Fatalf("kernel install: exit %d\n%s%s", code, out, errs)
	}
	spec, err := os.ReadFile(filepath.Join(root, "share", "jupyter", "kernels", "blocks", "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ks kernelSpec
	if err := json.Unmarshal(spec, &ks); err != nil {
		t.Fatalf("kernel.json: %v\n%s", err, spec)
	}
	if ks.DisplayName != "Blocks (Starlark)" || ks.Language != "starlark" || len(ks.Argv) != 3 || ks.Argv[1] != "kernel" || ks.Argv[2] != "{connection_file}" {
		t.Fatalf("kernel.json: %s", spec)
	}
	home := t.TempDir()
	return append(os.Environ(),
		"JUPYTER_PATH="+filepath.Join(root, "share", "jupyter"),
		"JUPYTER_DATA_DIR="+filepath.Join(home, "data"),
		"JUPYTER_RUNTIME_DIR="+filepath.Join(home, "runtime"),
		"JUPYTER_CONFIG_DIR="+filepath.Join(home, "config"),
		"IPYTHONDIR="+filepath.Join(home, "ipython"),
		"JUPYTER_PLATFORM_DIRS=1",
		"HOME="+home,
		"FUEL_FLOATX=float32",
		"PYTHONWARNINGS=ignore",
	)
}

// driver runs testdata/jupyter/driver.py and decodes its JSON result.
func driver(t *testing.T, env []string, result any, args ...string) {
	t.Helper()
	py := jupyterPython(t)
	drv, err := filepath.Abs(filepath.Join("testdata", "jupyter", "driver.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, append([]string{drv}, args...)...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("driver.py %s: %v\nstdout:\n%s\nstderr:\n%s", args[0], err, out.String(), errb.String())
	}
	t.Logf("driver.py %s: %.1f s", args[0], time.Since(start).Seconds())
	if err := json.Unmarshal(out.Bytes(), result); err != nil {
		t.Fatalf("driver.py %s: %v\n%s\nstderr:\n%s", args[0], err, out.String(), errb.String())
	}
}

// The notebook the nbclient test executes: an MLP, its tree, two epochs
// of the MNIST subset in the binary with the Plot extension inline and a
// checkpoint after training, the parameters' hashes, a :command and a
// cell that fails.
var notebookCells = []string{
	`load("tensor", "matrix", "lmatrix")
load("blocks.bricks", "MLP", "Rectifier", "Softmax")
load("blocks.initialization", "IsotropicGaussian", "Constant")
mlp = MLP([Rectifier(), Softmax()], [784, 50, 10], weights_init = IsotropicGaussian(0.01), biases_init = Constant(0))
mlp.initialize()
mlp`,
	`load("blocks.bricks.cost", "CategoricalCrossEntropy")
load("fuel.datasets", "EmbeddedMNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("fuel.transformers", "Flatten")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.graph", "ComputationGraph")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter", "Printing")
load("blocks.extensions.monitoring", "TrainingDataMonitoring")
load("blocks.extensions.plot", "Plot")
load("blocks.extensions.saveload", "Checkpoint")
x = matrix("features")
y = lmatrix("targets")
cost = CategoricalCrossEntropy().apply(y.flatten(), mlp.apply(x))
cost.name = "cost"
train = EmbeddedMNIST(("train",))
stream = Flatten(DataStream.default_stream(train, iteration_scheme = SequentialScheme(train.num_examples, 100)))
main_loop = MainLoop(
    GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters, step_rule = Scale(0.1)),
    stream,
    extensions = [
        TrainingDataMonitoring([cost], prefix = "train", after_epoch = True),
        FinishAfter(after_n_epochs = 2),
        Printing(),
        Plot("mnist", ["train_cost"]),
        Checkpoint("mnist.tar"),
    ],
)`,
	`main_loop.run()`,
	`load("hashlib", "sha256")
print("PARAMS", sha256(mlp.children[0].W.get_value()).hexdigest(), sha256(mlp.children[2].W.get_value()).hexdigest())`,
	`:help Rectifier`,
	`lost = 1
missing_name + 1`,
}

func writeNotebook(t *testing.T, path string, cells []string) {
	t.Helper()
	type cell struct {
		CellType       string   `json:"cell_type"`
		ExecutionCount *int     `json:"execution_count"`
		Metadata       struct{} `json:"metadata"`
		Outputs        []any    `json:"outputs"`
		Source         string   `json:"source"`
	}
	nb := map[string]any{
		"nbformat": 4, "nbformat_minor": 5,
		"metadata": map[string]any{
			"kernelspec":    map[string]any{"name": "blocks", "display_name": "Blocks (Starlark)", "language": "starlark"},
			"language_info": map[string]any{"name": "starlark"},
		},
	}
	var cs []cell
	for _, src := range cells {
		cs = append(cs, cell{CellType: "code", Outputs: []any{}, Source: src})
	}
	nb["cells"] = cs
	b, _ := json.MarshalIndent(nb, "", " ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type nbOutput struct {
	OutputType     string            `json:"output_type"`
	Name           string            `json:"name"`
	Text           any               `json:"text"`
	Data           map[string]any    `json:"data"`
	ExecutionCount *int              `json:"execution_count"`
	Ename          string            `json:"ename"`
	Evalue         string            `json:"evalue"`
	Traceback      []string          `json:"traceback"`
	Metadata       map[string]any    `json:"metadata"`
	Transient      map[string]string `json:"transient"`
}

func joinText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			s, _ := p.(string)
			b.WriteString(s)
		}
		return b.String()
	}
	return ""
}

func (o nbOutput) text() string { return joinText(o.Text) }

func (o nbOutput) data(mime string) string { return joinText(o.Data[mime]) }

// TestJupyterNotebook executes a notebook headless with nbclient against
// the kernel and checks its outputs cell by cell, the checkpoint it
// wrote (the session's code as its script), and that nbexport + run
// (and run of the .ipynb itself) give the same parameters bit for bit.
func TestJupyterNotebook(t *testing.T) {
	env := jupyterEnv(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ipynb")
	out := filepath.Join(dir, "out.ipynb")
	writeNotebook(t, in, notebookCells)
	var res map[string]any
	driver(t, env, &res, "notebook", in, out, dir)

	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			ExecutionCount *int       `json:"execution_count"`
			Outputs        []nbOutput `json:"outputs"`
		} `json:"cells"`
		Metadata struct {
			LanguageInfo map[string]any `json:"language_info"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		t.Fatal(err)
	}
	if len(nb.Cells) != len(notebookCells) {
		t.Fatalf("%d cells, want %d", len(nb.Cells), len(notebookCells))
	}
	if li := nb.Metadata.LanguageInfo; li["name"] != "starlark" || li["codemirror_mode"] != "python" {
		t.Errorf("language_info %v, want name starlark and codemirror_mode python", li)
	}
	for i, c := range nb.Cells {
		if c.ExecutionCount == nil || *c.ExecutionCount != i+1 {
			t.Errorf("cell %d: execution_count %v, want %d", i+1, c.ExecutionCount, i+1)
		}
	}
	dump := func(i int) string {
		b, _ := json.MarshalIndent(nb.Cells[i].Outputs, "", " ")
		if len(b) > 3000 {
			b = b[:3000]
		}
		return string(b)
	}

	// 1: the brick's tree as text and HTML.
	o := nb.Cells[0].Outputs
	if len(o) != 1 || o[0].OutputType != "execute_result" {
		t.Fatalf("cell 1: want one execute_result, got %s", dump(0))
	}
	tree := o[0].data("text/plain")
	for _, want := range []string{"MLP mlp (initialized)", "├── Linear linear_0 (initialized)", "W float32 (784, 50) [WEIGHT]", "└── Softmax softmax (initialized)"} {
		if !strings.Contains(tree, want) {
			t.Errorf("cell 1: the tree lacks %q:\n%s", want, tree)
		}
	}
	if h := o[0].data("text/html"); !strings.Contains(h, "<pre") || !strings.Contains(h, "<b>MLP mlp (initialized)</b>") || !strings.Contains(h, "[WEIGHT]") {
		t.Errorf("cell 1: text/html %q", h)
	}
	// 2: an assignment shows nothing.
	if len(nb.Cells[1].Outputs) != 0 {
		t.Errorf("cell 2: outputs %s", dump(1))
	}
	// 3: training: Printing's progress as stream output, the plot inline
	// (one display_data, updated in place every epoch), the summary table.
	o = nb.Cells[2].Outputs
	var stdout strings.Builder
	var images, tables int
	for _, x := range o {
		switch x.OutputType {
		case "stream":
			if x.Name == "stdout" {
				stdout.WriteString(x.text())
			}
		case "display_data":
			if png := x.data("image/png"); png != "" {
				images++
				raw, err := base64.StdEncoding.DecodeString(png)
				if err != nil || !bytes.HasPrefix(raw, []byte("\x89PNG\r\n\x1a\n")) {
					t.Errorf("cell 3: image/png is not a PNG (%v)", err)
				}
				if x.Transient != nil && x.Transient["display_id"] == "" {
					t.Errorf("cell 3: the plot has no display_id")
				}
			}
			if h := x.data("text/html"); strings.Contains(h, "<table") {
				tables++
				for _, want := range []string{"Training finished", "2 epochs done", "train_cost", "training_finished"} {
					if !strings.Contains(h, want) {
						t.Errorf("cell 3: the summary table lacks %q: %s", want, h)
					}
				}
			}
		case "error":
			t.Errorf("cell 3: error %s: %s", x.Ename, x.Evalue)
		}
	}
	if images != 1 {
		t.Errorf("cell 3: %d image/png outputs, want one (display_data, then update_display_data in place): %s", images, dump(2))
	}
	if tables != 1 {
		t.Errorf("cell 3: %d summary tables, want one: %s", tables, dump(2))
	}
	for _, want := range []string{"BEFORE FIRST EPOCH", "AFTER ANOTHER EPOCH", "epochs_done: 2", "train_cost:", "TRAINING HAS BEEN FINISHED"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("cell 3: the progress lacks %q:\n%s", want, stdout.String())
		}
	}
	// 4: the parameters.
	var params string
	for _, x := range nb.Cells[3].Outputs {
		if x.OutputType == "stream" {
			params += x.text()
		}
	}
	if !regexp.MustCompile(`^PARAMS [0-9a-f]{64} [0-9a-f]{64}\n$`).MatchString(params) {
		t.Fatalf("cell 4: %q", params)
	}
	// 5: :help.
	var help string
	for _, x := range nb.Cells[4].Outputs {
		help += x.text()
	}
	if !strings.Contains(help, "blocks.bricks.Rectifier(name=None)") || !strings.Contains(help, "docs/reference.md") {
		t.Errorf("cell 5 (:help Rectifier): %s", dump(4))
	}
	// 6: the error, naming the cell's line.
	o = nb.Cells[5].Outputs
	if len(o) != 1 || o[0].OutputType != "error" || !strings.Contains(strings.Join(o[0].Traceback, "\n"), "<cell>:2:1") || !strings.Contains(o[0].Evalue, "undefined: missing_name") {
		t.Errorf("cell 6: want an error naming <cell>:2:1 and missing_name: %s", dump(5))
	}

	// The checkpoint stores the session's code as its script.
	code, insp, errs := runBinary(t, "", "inspect", filepath.Join(dir, "mnist.tar"))
	if code != 0 {
		t.Fatalf("inspect mnist.tar: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"session.star", `mlp = MLP([Rectifier(), Softmax()], [784, 50, 10]`, "main_loop.run()"} {
		if !strings.Contains(insp, want) {
			t.Errorf("the checkpoint's script lacks %q:\n%s", want, insp)
		}
	}

	// nbexport: the cells that ran without error, in order; run of the
	// script and of the notebook itself give the same parameters.
	code, script, errs := runBinary(t, "", "nbexport", out)
	if code != 0 {
		t.Fatalf("nbexport: exit %d\n%s", code, errs)
	}
	if strings.Contains(script, "missing_name") || strings.Contains(script, "lost = 1") || !strings.Contains(script, "# :help Rectifier") || !strings.Contains(script, "# In[3]:\nmain_loop.run()") {
		t.Errorf("nbexport:\n%s", script)
	}
	for _, name := range []string{"exported.star", "out.ipynb"} {
		rdir := t.TempDir()
		p := filepath.Join(rdir, name)
		src := []byte(script)
		if name == "out.ipynb" {
			src = b
		}
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		w := startWatched(t, rdir, nil, "run", p)
		if code := w.exitCode(t, 120e9); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", name, code, w.stderr())
		}
		var got string
		for _, l := range strings.Split(w.stdout(), "\n") {
			if strings.HasPrefix(l, "PARAMS ") {
				got = l + "\n"
			}
		}
		if got != params {
			t.Errorf("run %s: %q, the notebook: %q (want the same bits)", name, got, params)
		}
	}
}

// interruptSetup is the interrupt test's model (repl_pty_test.go's
// trainingScript, with the algorithm kept in a global).
const interruptSetup = `
load("tensor", "matrix", "lmatrix")
load("blocks.bricks", "MLP", "Rectifier", "Softmax")
load("blocks.bricks.cost", "CategoricalCrossEntropy")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("fuel.datasets", "EmbeddedMNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("fuel.transformers", "Flatten")
load("blocks.algorithms", "GradientDescent", "Scale")
load("blocks.main_loop", "MainLoop")
load("blocks.extensions", "FinishAfter", "Printing")
load("blocks.graph", "ComputationGraph")

x = matrix("features")
y = lmatrix("targets")
mlp = MLP([Rectifier(), Rectifier(), Softmax()], [784, 400, 400, 10],
          weights_init = IsotropicGaussian(0.01), biases_init = Constant(0))
mlp.initialize()
cost = CategoricalCrossEntropy().apply(y.flatten(), mlp.apply(x))
cost.name = "cost"
train = EmbeddedMNIST(("train",))
stream = Flatten(DataStream.default_stream(train, iteration_scheme = SequentialScheme(train.num_examples, 50)))
algorithm = GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters, step_rule = Scale(0.01))
main_loop = MainLoop(algorithm, stream,
    extensions = [FinishAfter(after_n_batches = %d), Printing(every_n_batches = 20, after_epoch = False)])
`

// TestJupyterInterrupt: the notebook's Interrupt (SIGINT) during
// main_loop.run() pauses training at the end of a batch; a later cell's
// main_loop.run() continues it to the same parameters, bit for bit, as
// an uninterrupted run; interrupt_request on the control channel pauses
// the same way.
func TestJupyterInterrupt(t *testing.T) {
	const total = 600
	env := jupyterEnv(t)
	dir := t.TempDir()
	setup := fmt.Sprintf(interruptSetup, total)
	setupFile := filepath.Join(dir, "setup.star")
	if err := os.WriteFile(setupFile, []byte(setup), 0o644); err != nil {
		t.Fatal(err)
	}
	var res struct {
		First struct {
			Status, Stderr string
			Interrupted    bool
			Attempts       int
		}
		PausedAt string `json:"paused_at"`
		Second   struct{ Status, Stdout, Stderr string }
		Final    string
		ByMsg    struct {
			Status, Stderr, After string
			Attempts              int
		} `json:"by_message"`
	}
	driver(t, env, &res, "interrupt", setupFile, fmt.Sprint(total), dir)
	t.Logf("interrupted at the attempt %d (signal) and %d (interrupt_request)", res.First.Attempts, res.ByMsg.Attempts)
	if !res.First.Interrupted || res.First.Status != "ok" || !strings.Contains(res.First.Stderr, "training pauses after this batch") {
		t.Fatalf("the interrupted run: %+v", res.First)
	}
	var done int
	var finished string
	if _, err := fmt.Sscanf(res.PausedAt, "DONE %d %s", &done, &finished); err != nil || done >= total || done <= 0 || finished != "None" {
		t.Fatalf("after the interrupt: %q, want DONE n None with 0 < n < %d", res.PausedAt, total)
	}
	if res.Second.Status != "ok" || !strings.Contains(res.Second.Stdout, "TRAINING HAS BEEN FINISHED") {
		t.Errorf("the continued run: %+v", res.Second)
	}
	if !strings.HasPrefix(res.Final, fmt.Sprintf("DONE %d True\n", total)) {
		t.Errorf("after the continued run: %q", res.Final)
	}
	if res.ByMsg.Status != "ok" || !strings.Contains(res.ByMsg.Stderr, "training pauses after this batch") {
		t.Errorf("interrupt_request: %+v", res.ByMsg)
	}
	if _, err := fmt.Sscanf(res.ByMsg.After, "DONE %d", &done); err != nil || done <= 0 || done >= total {
		t.Errorf("after interrupt_request: %q", res.ByMsg.After)
	}
	// The same training, uninterrupted, by blocks-repl run.
	script := setup + `main_loop.run()
load("hashlib", "sha256")
print("PARAMS", sha256(mlp.children[0].W.get_value()).hexdigest(), sha256(mlp.children[-2].W.get_value()).hexdigest())
`
	p := writeScript(t, "straight.star", script)
	w := startWatched(t, filepath.Dir(p), nil, "run", p)
	if code := w.exitCode(t, 120e9); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, w.stderr())
	}
	var want string
	for _, l := range strings.Split(w.stdout(), "\n") {
		if strings.HasPrefix(l, "PARAMS ") {
			want = l
		}
	}
	var got string
	for _, l := range strings.Split(res.Final, "\n") {
		if strings.HasPrefix(l, "PARAMS ") {
			got = l
		}
	}
	if want == "" || got != want {
		t.Errorf("paused and continued in the kernel: %q\nuninterrupted run:              %q", got, want)
	}
}

// TestJupyterSession: kernel_info, completion, inspection (Blocks'
// signature on Shift-Tab), is_complete, comm_info, errors, the REPL's
// :commands; a request signed with another key is dropped and logged,
// never executed; malformed messages are dropped and the kernel goes on.
func TestJupyterSession(t *testing.T) {
	env := jupyterEnv(t)
	dir := t.TempDir()
	var res map[string]json.RawMessage
	driver(t, env, &res, "session", dir)
	get := func(key string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(res[key], &m); err != nil {
			t.Fatalf("%s: %v (%s)", key, err, res[key])
		}
		return m
	}
	info := get("info")
	li, _ := info["language_info"].(map[string]any)
	if info["protocol_version"] != "5.3" || li["name"] != "starlark" || li["codemirror_mode"] != "python" || li["file_extension"] != ".star" {
		t.Errorf("kernel_info: %s", res["info"])
	}
	matches := func(key string) []string {
		var m struct {
			Matches     []string
			CursorStart int `json:"cursor_start"`
			CursorEnd   int `json:"cursor_end"`
		}
		json.Unmarshal(res[key], &m)
		return append(m.Matches, fmt.Sprint(m.CursorStart, "-", m.CursorEnd))
	}
	if m := matches("complete_global"); strings.Join(m, " ") != "main_value 4-10" {
		t.Errorf("complete x = main_v: %v", m)
	}
	if m := matches("complete_attr"); strings.Join(m, " ") != "children 4-8" {
		t.Errorf("complete mlp.chil: %v", m)
	}
	if m := matches("complete_load"); !strings.Contains(strings.Join(m, " "), "blocks.bricks ") {
		t.Errorf(`complete load("blocks.bri: %v`, m)
	}
	for key, want := range map[string]string{"inspect_call": "MLP(activations, dims", "inspect_name": "Rectifier"} {
		m := get(key)
		d, _ := m["data"].(map[string]any)
		if m["found"] != true || !strings.Contains(fmt.Sprint(d["text/plain"]), want) {
			t.Errorf("%s: %s", key, res[key])
		}
	}
	if m := get("inspect_unknown"); m["found"] != false {
		t.Errorf("inspect of an unknown name: %s", res["inspect_unknown"])
	}
	for key, want := range map[string]string{"is_complete_def": "incomplete", "is_complete_bracket": "incomplete",
		"is_complete_simple": "complete", "is_complete_done_def": "complete", "is_complete_invalid": "invalid"} {
		if m := get(key); m["status"] != want {
			t.Errorf("%s: %s, want %s", key, res[key], want)
		}
	}
	if m := get("is_complete_def"); m["indent"] != "    " {
		t.Errorf("is_complete of a def: indent %q, want 4 spaces", m["indent"])
	}
	if ci := get("comm_info"); ci["status"] != "ok" || fmt.Sprint(ci["comms"]) != "map[]" {
		t.Errorf("comm_info: %s", res["comm_info"])
	}
	er := get("error_reply")
	tb := fmt.Sprint(er["traceback"])
	if er["status"] != "error" || !strings.Contains(tb, "<cell>:3:2") || !strings.Contains(fmt.Sprint(er["evalue"]), "index 3 out of range") {
		t.Errorf("error reply: %s", res["error_reply"])
	}
	var cmds string
	json.Unmarshal(res["commands"], &cmds)
	if !strings.Contains(cmds, "MLP\n") || !strings.Contains(cmds, "├── Linear linear_0") {
		t.Errorf(":type and :shape: %q", cmds)
	}
	// The wrong-key request did not run: stolen is undefined.
	ab := string(res["after_bad"])
	if !strings.Contains(ab, "undefined: stolen") {
		t.Errorf("a request signed with the wrong key ran: %s", ab)
	}
	if string(res["bad_reply"]) != "null" {
		t.Errorf("a request signed with the wrong key was answered: %s", res["bad_reply"])
	}
	var stderr, alive string
	json.Unmarshal(res["stderr"], &stderr)
	json.Unmarshal(res["alive"], &alive)
	if !strings.Contains(stderr, "dropped a message on the shell channel: wrong HMAC-SHA256 signature") {
		t.Errorf("the kernel's log does not mention the wrong signature:\n%s", stderr)
	}
	if n := strings.Count(stderr, "dropped a message on the shell channel"); n < 5 {
		t.Errorf("%d messages dropped, want 5 (a wrong signature, 4 malformed):\n%s", n, stderr)
	}
	if alive != "43\n" {
		t.Errorf("after the malformed messages: %q, want 43", alive)
	}
	noGoTrace(t, stderr)
}
