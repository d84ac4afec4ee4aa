package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// terminal drives blocks-repl through a real pseudo-terminal, as a person
// at a keyboard does: keys in, the screen's text out.
type terminal struct {
	t      *testing.T
	pty    *os.File
	cmd    *exec.Cmd
	done   chan error
	exited chan struct{} // closed when the session has ended

	mu   sync.Mutex
	out  bytes.Buffer
	seen int // how much of the cleaned output expect has consumed
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r`)

func startTerminal(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	return startTerminalSize(t, &pty.Winsize{Rows: 40, Cols: 200}, env, args...)
}

// startTerminalSize is startTerminal on a terminal of the given window size.
func startTerminalSize(t *testing.T, size *pty.Winsize, env []string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "FUEL_FLOATX=float32", "TERM=xterm")
	cmd.Env = append(cmd.Env, env...)
	f, err := pty.StartWithSize(cmd, size)
	if err != nil {
		t.Fatalf("starting blocks-repl on a pty: %v", err)
	}
	tm := &terminal{t: t, pty: f, cmd: cmd, done: make(chan error, 1), exited: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		tm.done <- cmd.Wait()
		close(tm.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		f.Close()
	})
	return tm
}

func (tm *terminal) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return ansi.ReplaceAllString(tm.out.String(), "")
}

// send types keys (\r is Enter, \t Tab, \x03 Ctrl-C, \x04 Ctrl-D).
func (tm *terminal) send(keys string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(keys)); err != nil {
		tm.t.Fatalf("typing %q: %v", keys, err)
	}
}

// expect waits until text appears on the screen after what earlier
// expects consumed, and consumes up to its end.
func (tm *terminal) expect(text string) {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		s := tm.screen()
		if tm.seen > len(s) {
			tm.seen = len(s)
		}
		if i := strings.Index(s[tm.seen:], text); i >= 0 {
			tm.seen += i + len(text)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s := tm.screen()
	tm.t.Fatalf("waited 60s for %q; screen after the last match:\n%s", text, s[min(tm.seen, len(s)):])
}

// line types a line and waits for the next prompt.
func (tm *terminal) line(text string) {
	tm.t.Helper()
	tm.send(text + "\r")
}

// exit sends Ctrl-D and checks the session ends with status 0. Each
// Ctrl-D waits until the REPL has the terminal in raw mode, reading keys
// at its prompt, as a person types it, and is typed again if the session
// goes on. (A Ctrl-D typed in the cooked mode, while a statement runs,
// ends the session too: TestTerminalCtrlDWhileAStatementRuns.)
func (tm *terminal) exit() {
	tm.t.Helper()
	// Up to a minute or more: under a loaded machine (load 26 on 2 cores)
	// a session that had paused a training run took over 20 s to end.
	for try := 0; try < 12; try++ {
		tm.waitRaw(60 * time.Second)
		tm.pty.Write([]byte("\x04")) // fails only once the session has ended
		select {
		case err := <-tm.done:
			if err != nil {
				tm.t.Fatalf("Ctrl-D: blocks-repl ended with %v; screen:\n%s", err, tm.screen())
			}
			return
		case <-time.After(5 * time.Second):
		}
	}
	// A session that never ends: its goroutines' stacks (Go prints them
	// on SIGQUIT, to the terminal) say where it waits.
	_ = tm.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-tm.exited:
	case <-time.After(10 * time.Second):
	}
	tm.t.Fatalf("Ctrl-D did not end the session; screen (with the stacks of a SIGQUIT):\n%s", tm.screen())
}

// waitRaw waits, up to limit, until the terminal is in raw mode (the
// REPL's line editor reading keys; on Linux the pty's master reports the
// terminal's modes) or the session has ended.
func (tm *terminal) waitRaw(limit time.Duration) {
	conn, err := tm.pty.SyscallConn()
	if err != nil {
		return
	}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		raw := false
		ok := conn.Control(func(fd uintptr) {
			t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
			raw = err == nil && t.Lflag&unix.ICANON == 0
		}) == nil
		if !ok || raw {
			return
		}
		select {
		case <-tm.exited:
			return
		default:
		}
	}
}

// waitCooked waits, up to limit, until the terminal is in its cooked mode
// (the REPL runs a statement), or the session has ended.
func (tm *terminal) waitCooked(limit time.Duration) {
	tm.t.Helper()
	conn, err := tm.pty.SyscallConn()
	if err != nil {
		tm.t.Fatal(err)
	}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		cooked := false
		if err := conn.Control(func(fd uintptr) {
			t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
			cooked = err == nil && t.Lflag&unix.ICANON != 0
		}); err != nil || cooked {
			return
		}
		select {
		case <-tm.exited:
			return
		default:
		}
	}
	tm.t.Fatalf("the terminal stayed in raw mode for %v; screen:\n%s", limit, tm.screen())
}

func TestTerminalEditingCompletionHelpErrors(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "history")
	tm := startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + hist})
	tm.expect(">>> ")

	// Typing and editing: Backspace, then the left arrow to insert a digit.
	tm.line("1 + 2\x7f5")
	tm.expect("6")
	tm.line("40 + 2\x1b[D\x1b[D\x1b[D\x1b[D0")
	tm.expect("402")

	// Multi-line input: a def (ended by a blank line) and an open bracket.
	tm.line("def sq(a):")
	tm.expect("... ")
	tm.line("    return a * a")
	tm.line("")
	tm.line("sq(12)")
	tm.expect("144")
	tm.line("L = [1,")
	tm.expect("... ")
	tm.line("2]")
	tm.line("sum_of_L = L[0] + L[1] + 1000")
	tm.line("sum_of_L")
	tm.expect("1003")

	// An error prints its backtrace and the session goes on, globals kept.
	tm.line(`fail("kaput")`)
	tm.expect("kaput")
	tm.line("sq(3) + 100")
	tm.expect("109")

	// Completion: module names in load, the names a module exports,
	// globals and attributes after a dot.
	tm.send(`load("blocks.brick` + "\t")
	tm.send(`", "ML` + "\t")
	tm.line(`")`)
	tm.line("my_mlp = MLP([None], [2, 3])")
	tm.send("my_m\t")
	tm.send(".chil\t")
	tm.send("\r")
	tm.expect("blocks.bricks.simple.Linear object at 0x")
	tm.expect(": name=linear_0>")

	// :help from the reference documentation.
	tm.line(":help MLP")
	tm.expect("multi-layer perceptron")

	// Ctrl-C stops a running computation; the session goes on. The loop
	// says when it runs, and only then is Ctrl-C typed (a fixed wait was
	// outlasted on a loaded machine: the Ctrl-C then reached the prompt).
	tm.line("def spin():")
	tm.line("    print(\"SPIN\" + \"NING\")")
	tm.line("    while True:")
	tm.line("        pass")
	tm.line("")
	tm.line("spin()")
	tm.expect("SPINNING")
	tm.send("\x03")
	tm.expect("interrupted (Ctrl-C)")
	// Keys typed before the next prompt reach the terminal in its cooked
	// mode, where Ctrl-C is a signal that also flushes what was typed
	// (seen at load 30): wait for the prompt, as a person does.
	tm.expect(">>> ")

	// Ctrl-C at the prompt clears the line and does not exit, even twice.
	tm.send("unfinished(\x03")
	tm.expect("KeyboardInterrupt")
	tm.expect(">>> ")
	tm.send("\x03")
	tm.expect("KeyboardInterrupt")
	tm.expect(">>> ")
	tm.line("sq(5) + 1000")
	tm.expect("1025")
	tm.exit()
}

// TestTerminalCompletionWithoutWindowSize: on a terminal that reports a
// 0×0 window (a pty whose size was never set), Tab still completes, as on
// an 80-column terminal: a unique name in place, and the candidates of an
// ambiguous prefix listed. (readline, given width 0, ignored Tab.)
func TestTerminalCompletionWithoutWindowSize(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "history")
	tm := startTerminalSize(t, &pty.Winsize{}, []string{"BLOCKS_REPL_HISTORY=" + hist})
	tm.expect(">>> ")
	tm.line("zz_unique_name = 4242 * 3")
	tm.line("zz_other_a = 5151")
	tm.line("zz_other_b = 2")
	tm.waitRaw(60 * time.Second)
	tm.send("zz_un\t")
	tm.send("\r")
	tm.expect("12726")
	tm.waitRaw(60 * time.Second)
	tm.send("zz_ot\t\t")
	tm.expect("zz_other_a")
	tm.expect("zz_other_b")
	// "a" ends the list (or, in readline's select mode, the first
	// candidate is taken): either way the line is zz_other_a.
	tm.send("a\r")
	tm.expect("5151")
	tm.exit()
}

func TestTerminalHistoryAcrossSessions(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "history")
	env := []string{"BLOCKS_REPL_HISTORY=" + hist}

	first := startTerminal(t, env)
	first.expect(">>> ")
	first.line("hist_marker = 41")
	first.line("other = 1")
	first.exit()

	second := startTerminal(t, env)
	second.expect(">>> ")
	// Up twice recalls the first session's hist_marker = 41.
	second.send("\x1b[A\x1b[A\r")
	second.line("hist_marker + 1")
	second.expect("42")
	// Ctrl-R searches the history. It is typed once the REPL reads keys
	// again: before that the terminal is in its cooked mode, where Ctrl-R
	// is the line discipline's reprint key and never reaches the REPL.
	second.expect(">>> ")
	second.waitRaw(60 * time.Second)
	second.send("\x12marker + 1")
	second.send("\r")
	second.send("\r")
	second.expect("42")
	second.exit()
}

// TestTerminalCtrlDWhileAStatementRuns: Ctrl-D typed while a statement
// runs reaches the terminal in its cooked mode, where it is an end of
// file; read only once the REPL is back at its prompt, in raw mode, the
// line discipline hands it over as a NUL byte. The session ends there,
// with no other key: readline took the NUL for the end of input but read
// on in the background, and its Close waited for that read, which no
// further Ctrl-D could end (a read begun in raw mode waits for a byte;
// the cooked mode's end of file gives none). CI saw that hang for 12
// minutes.
func TestTerminalCtrlDWhileAStatementRuns(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	tm := startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + filepath.Join(dir, "h")})
	tm.expect(">>> ")
	tm.line(`load("fuel.datasets", "TextFile")`)
	tm.expect(">>> ")
	// The statement waits (opening the pipe) until the test writes it.
	tm.line(`print("WAIT" + "ING"); n = len(list(TextFile(["` + gate + `"], {"a": 1, "<S>": 0, "</S>": 2, "<UNK>": 3}).get_example_stream().get_epoch_iterator()))`)
	tm.expect("WAITING")
	tm.waitCooked(60 * time.Second)
	tm.send("\x04")
	// The line discipline takes the key in on its own time: give it some
	// before the statement ends (were it late, the key would be read in
	// raw mode, an ordinary Ctrl-D: the test would pass without showing
	// anything).
	time.Sleep(300 * time.Millisecond)
	if err := os.WriteFile(gate, []byte("a a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-tm.done:
		if err != nil {
			t.Fatalf("blocks-repl ended with %v; screen:\n%s", err, tm.screen())
		}
	case <-time.After(60 * time.Second):
		_ = tm.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-tm.exited:
		case <-time.After(10 * time.Second):
		}
		t.Fatalf("the Ctrl-D typed while a statement ran did not end the session; screen (with the stacks of a SIGQUIT):\n%s", tm.screen())
	}
}

const trainingScript = `
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
main_loop = MainLoop(
    GradientDescent(cost = cost, parameters = ComputationGraph(cost).parameters, step_rule = Scale(0.01)),
    stream,
    extensions = [FinishAfter(after_n_batches = %d), Printing(every_n_batches = 20, after_epoch = False)],
)
`

// pauseAttempts bounds pauseTraining's fresh sessions.
const pauseAttempts = 5

// pauseTraining starts a session (start), types main_loop.run() at its
// prompt and Ctrl-C once trigger is on the screen, and returns the
// session back at its prompt with the training paused before its end
// (total iterations), and how long the run took from its Enter to that
// prompt. A Ctrl-C that arrives at the training's end or after it (a
// loaded machine can run the rest of a short run before the key reaches
// the REPL) proves nothing: the finished banner is on the screen before
// the prompt, or the pause came after the last batch. That session,
// which may still hold the key, is dropped and a fresh one tries again,
// pauseAttempts times in all; a pause that never takes fails the test as
// before, only later.
func pauseTraining(t *testing.T, start func() *terminal, trigger string, total int) (*terminal, time.Duration) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		tm := start()
		tm.expect(">>> ")
		from := tm.seen
		t0 := time.Now()
		tm.line("main_loop.run()")
		tm.expect(trigger)
		tm.send("\x03")
		tm.expect(">>> ")
		ran := time.Since(t0)
		s := tm.screen()[from:tm.seen]
		if !strings.Contains(s, "TRAINING HAS BEEN FINISHED") {
			if !strings.Contains(s, "training pauses after this batch") {
				t.Fatalf("Ctrl-C during main_loop.run(): no pause; the run's screen:\n%s", s)
			}
			// The key was taken during the training: no stray Ctrl-C
			// is left to stop this statement.
			tm.line(`print("PAUSED AT", main_loop.status["iterations_done"])`)
			tm.expect("PAUSED AT ")
			if readInt(t, tm) < total {
				tm.expect(">>> ")
				return tm, ran
			}
		}
		if attempt == pauseAttempts {
			t.Fatalf("in %d sessions the training ran to its end after Ctrl-C; the last run's screen:\n%s", attempt, s)
		}
		t.Logf("session %d: the training ended before Ctrl-C took effect; a fresh session tries again", attempt)
		tm.close()
	}
}

// close ends the session (a kill) and waits for its end.
func (tm *terminal) close() {
	_ = tm.cmd.Process.Kill()
	<-tm.exited
	tm.pty.Close()
}

func TestTerminalCtrlCStopsTrainingAndRunContinues(t *testing.T) {
	const total = 600
	script := writeScript(t, "train.star", fmt.Sprintf(trainingScript, total))
	tm, _ := pauseTraining(t, func() *terminal {
		return startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + filepath.Join(t.TempDir(), "h")}, "repl", script)
	}, "iterations_done: 20", total)
	tm.line(`print("STOPPED AT", main_loop.status["iterations_done"])`)
	tm.expect("STOPPED AT ")
	stopped := readInt(t, tm)
	if stopped < 20 || stopped >= total {
		t.Fatalf("after Ctrl-C: iterations_done = %d, want between 20 and %d", stopped, total)
	}
	// The parameters and the log are kept: run() continues to the end.
	tm.line("main_loop.run()")
	tm.expect(">>> ")
	tm.line(`print("FINISHED AT", main_loop.status["iterations_done"], main_loop.log.current_row["training_finished"])`)
	tm.expect(fmt.Sprintf("FINISHED AT %d True", total))
	tm.exit()
}

// readInt reads the integer printed right after the last expected text.
func readInt(t *testing.T, tm *terminal) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s := tm.screen()[tm.seen:]
		if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i > 0 {
			n, err := strconv.Atoi(s[:i])
			if err == nil {
				return n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no integer after the expected text; screen:\n%s", tm.screen()[tm.seen:])
	return 0
}

// A model built step by step at the prompt and saved with :save runs with
// blocks-repl run and gives the same parameters as the session had.
func TestSaveReproducesTheSession(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "session.star")
	session := fmt.Sprintf(trainingScript, 30) + `
main_loop.run()
print("W0", mlp.children[0].W.get_value().tolist()[3][:5])
print("B2", mlp.children[4].b.get_value().tolist())
:save ` + saved + "\n"
	// The session, typed statement by statement (the piped mode reads
	// complete statements as the terminal does).
	code, out, errs := runBinary(t, session)
	if code != 0 || errs != "" {
		t.Fatalf("session: exit %d, stderr:\n%s", code, errs)
	}
	want := paramLines(out)
	if len(want) != 2 {
		t.Fatalf("session output lacks the parameters:\n%s", out)
	}
	src, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(src), ":save") {
		t.Errorf("the saved script holds the :save command:\n%s", src)
	}
	code, out2, errs := runBinary(t, "", "run", saved)
	if code != 0 {
		t.Fatalf("blocks-repl run %s: exit %d\n%s", saved, code, errs)
	}
	if got := paramLines(out2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the saved script's parameters differ from the session's:\nsession: %v\nscript:  %v", want, got)
	}
}

func paramLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "W0 ") || strings.HasPrefix(l, "B2 ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// The :commands, echo for people, and evaluating a symbolic expression on
// a real batch, in the piped mode.
func TestCommandsAndEvaluationOnABatch(t *testing.T) {
	dir := t.TempDir()
	lib := writeScript(t, "lib.star", "from_file = 7\n")
	session := `load("tensor", "matrix", "function")
load("fuel.datasets", "EmbeddedMNIST")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
load("fuel.transformers", "Flatten")
load("blocks.bricks", "MLP", "Tanh", "Softmax")
load("blocks.initialization", "IsotropicGaussian", "Constant")
load("blocks.graph", "ComputationGraph")
train = EmbeddedMNIST(("train",))
stream = Flatten(DataStream.default_stream(train, iteration_scheme = SequentialScheme(train.num_examples, 8)))
stream
batch = next(stream.get_epoch_iterator(as_dict = True))
:shape batch["features"]
:type batch["features"]
x = matrix("features")
mlp = MLP([Tanh(), Softmax()], [784, 5, 10], weights_init = IsotropicGaussian(0.1), biases_init = Constant(0))
mlp.initialize()
y = mlp.apply(x)
mlp
:shape mlp.children[0].W
:type y
:shape y
probs = y.eval({x: batch["features"]})
print("ROWSUM", [int(probs.sum(axis = 1).tolist()[i] * 1000 + 0.5) for i in range(3)])
f = function([x], y.argmax(axis = 1))
print("PRED", len(f(batch["features"]).tolist()))
ComputationGraph(y)
:info probs
:load ` + lib + `
from_file + 1
:reset
from_file
:help
:quit
print("not reached")
`
	code, out, errs := runBinary(t, session)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errs)
	}
	for _, want := range []string{
		"Flatten\n  features (batch, feature)\n  targets (batch, feature)", // a stream: sources and axis labels
		"(8, 784)",                       // :shape of a batch
		"ndarray: float32, 2 dimensions", // :type of a batch
		"MLP mlp (initialized)\n├── Linear linear_0 (initialized)\n│   ├── W float32 (784, 5)", // a brick as a tree
		"(784, 5)",         // :shape of a parameter
		"TensorVariable: ", // :type of a symbolic variable
		"2 dimensions (the shape is known when the variable is computed", // :shape of a symbolic variable
		"ROWSUM [1000, 1000, 1000]",                                      // eval on a real batch
		"PRED 8",                                                         // a compiled function
		"variables by role:",                                             // a graph
		"ndarray float32 (8, 10)  mean=0.1",                              // :info of an array
		"8\n",                                                            // :load kept the file's globals
		"modules: ",                                                      // :help
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, out, errs)
		}
	}
	if !strings.Contains(errs, "undefined: from_file") {
		t.Errorf(":reset did not forget the globals; stderr:\n%s", errs)
	}
	if strings.Contains(out, "not reached") {
		t.Error(":quit did not end the session")
	}
	_ = dir
}
