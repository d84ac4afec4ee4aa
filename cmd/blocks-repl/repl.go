package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/chzyer/readline"
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/internal/tty"

	"github.com/blocks-go/blocks/internal/termsafe"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/mainloop"
)

const replHelp = `Type Starlark statements or expressions; an expression's value is printed
(and kept in _). def, for, if, while and open brackets continue on the next
line (prompt ...) until the statement is complete; a blank line ends a block.
Tab completes names, attributes after a dot and module names in load("...").
Up/Down walk the history (kept across sessions), Ctrl-R searches it.
Ctrl-C stops what is running (training stops at the end of the batch, and
main_loop.run() continues it); Ctrl-D leaves.

  :help              this help and the list of modules
  :help NAME         what NAME is: a module, brick, function, extension or a value
  :load FILE         run FILE in this session (its globals become the session's)
  :reset             forget every global (history stays)
  :type EXPR         the type of EXPR's value
  :shape EXPR        the shape of an array, variable, parameter or brick
  :info EXPR         a description of EXPR's value
  :save FILE         write the inputs that ran without error as a script
                     that rebuilds this session (blocks-repl run FILE)
  :quit              leave (also Ctrl-D)
`

func init() {
	registerCommand(command{
		name: "repl",
		usage: `  blocks-repl repl [--no-train] [FILE]     an interactive session, after running FILE (with
                                           --no-train, FILE up to its first main_loop.run())
`,
		run: func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
			noTrain := len(args) > 0 && args[0] == "--no-train"
			if noTrain {
				args = args[1:]
			}
			if len(args) > 1 || (len(args) == 1 && strings.HasPrefix(args[0], "-")) {
				return badUsage(stderr, "repl", fmt.Errorf("want [--no-train] and at most one FILE, got %s", strings.Join(args, " ")))
			}
			if noTrain && len(args) == 0 {
				return badUsage(stderr, "repl", fmt.Errorf("--no-train needs a FILE"))
			}
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return replSession(stdin, stdout, stderr, tty.Is(stdin), file, noTrain)
		},
	})
}

// errInterrupt is Ctrl-C at the prompt.
var errInterrupt = errors.New("interrupt")

// lineReader reads the session's input line by line.
type lineReader interface {
	ReadLine(prompt string) (string, error) // io.EOF at the end, errInterrupt on Ctrl-C
	Close() error
}

// session is one interactive session: the interpreter, the inputs that ran
// without error (for :save), and the signal plumbing that turns Ctrl-C
// into "stop this chunk" or "stop training after this batch".
type session struct {
	interp   *starlib.Interp
	out      io.Writer
	errw     io.Writer
	accepted []string
	// runs are the main_loop.run() calls of each accepted input, by
	// index (repl_save.go).
	runs map[int][]run.LoopRun

	sigint      chan os.Signal // the process's SIGINT, for the whole session
	loopSignals chan os.Signal // what main loops started at the prompt listen to

	// display shows rich output (the Jupyter kernel's; nil at a terminal).
	display starlib.DisplayFunc
	// scriptPath names the session's code in the checkpoints it writes
	// (SetSessionScript).
	scriptPath string
}

func newSession(out, errw io.Writer) (*session, error) {
	s := &session{out: out, errw: errw, loopSignals: make(chan os.Signal, 4)}
	if err := s.reset(); err != nil {
		return nil, err
	}
	return s, nil
}

// reset starts over with a new interpreter and no accepted inputs.
func (s *session) reset() error {
	interp, err := starlib.NewInterp(starlib.Options{Stdout: s.out, Library: all.Library(), Display: s.display})
	if err != nil {
		return err
	}
	interp.SetInterrupts(s.loopSignals)
	s.interp = interp
	s.accepted = nil
	s.runs = nil
	return nil
}

// repl runs the interactive session: read a complete statement, run it,
// print its value or its error, until end of input or :quit. Errors never
// end the session. On a terminal it edits lines with readline, keeps a
// history file and completes names; otherwise it reads plain lines and
// prints no prompts.
func repl(in io.Reader, out, errw io.Writer, interactive bool, file string) int {
	return replSession(in, out, errw, interactive, file, false)
}

// replSession is repl; with noTrain, FILE runs up to its first
// main_loop.run() only (starlib's SetNoTrain).
func replSession(in io.Reader, out, errw io.Writer, interactive bool, file string, noTrain bool) int {
	s, err := newSession(out, errw)
	if err != nil {
		fmt.Fprintf(errw, "blocks-repl: %v\n", err)
		return 1
	}
	s.sigint = make(chan os.Signal, 4)
	signal.Notify(s.sigint, os.Interrupt)
	defer signal.Stop(s.sigint)

	var r lineReader
	if interactive {
		rl, err := newReadline(in, out, errw, s)
		if err != nil {
			fmt.Fprintf(errw, "blocks-repl: %v\n", err)
			return 1
		}
		r = rl
		out, errw = rl.inst.Stdout(), rl.inst.Stderr()
		s.out, s.errw = out, errw
		fmt.Fprintf(out, "%s — Starlark for Blocks and Fuel. :help for help, Ctrl-D to quit.\n", versionString())
	} else {
		r = newPlainReader(in)
	}
	defer r.Close()

	if file != "" {
		s.interp.SetNoTrain(noTrain)
		s.load(file)
		s.interp.SetNoTrain(false)
	}
	for {
		chunk, err := s.readChunk(r)
		switch {
		case err == io.EOF:
			if interactive {
				fmt.Fprintln(out)
			}
			return 0
		case err == errInterrupt:
			fmt.Fprintln(errw, "KeyboardInterrupt")
			continue
		case err != nil:
			fmt.Fprintln(errw, err)
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(chunk), ":") {
			if quit := s.command(strings.TrimSpace(chunk)); quit {
				return 0
			}
			continue
		}
		if strings.TrimSpace(chunk) == "" {
			continue
		}
		s.recordScript(chunk)
		ok := s.exec(chunk, true)
		runs := run.TakeLoopRuns(s.interp)
		if ok {
			s.accept(chunk, runs)
		}
	}
}

// readChunk reads one complete statement (several lines for def, for, if,
// while and open brackets), or one :command line.
func (s *session) readChunk(r lineReader) (string, error) {
	first, err := r.ReadLine(">>> ")
	if err != nil {
		return "", err
	}
	if t := strings.TrimSpace(first); t == "" || strings.HasPrefix(t, ":") {
		return first, nil
	}
	var lines []string
	var readErr error
	next := func() ([]byte, error) {
		if lines == nil {
			lines = append(lines, first)
			return []byte(first + "\n"), nil
		}
		l, err := r.ReadLine("... ")
		if err != nil {
			readErr = err
			return nil, err
		}
		lines = append(lines, l)
		return []byte(l + "\n"), nil
	}
	opts := *starlib.FileOptions
	_, err = opts.ParseCompoundStmt("<stdin>", next)
	if readErr == errInterrupt {
		return "", errInterrupt
	}
	if err != nil && readErr != io.EOF {
		return "", starlib.Hint(err, []byte(strings.Join(lines, "\n")+"\n"), s.interp.Globals, s.interp.Library())
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// exec runs one chunk and reports whether it ran without error. With echo,
// an expression's value is printed for people (starlib.Describe). Ctrl-C
// while it runs stops a training main loop at the end of its batch, and
// anything else at once.
func (s *session) exec(chunk string, echo bool) (ok bool) {
	return s.execFile("<stdin>", chunk, echo)
}

// execFile is exec for a chunk read from filename (errors name it).
func (s *session) execFile(filename, chunk string, echo bool) (ok bool) {
	v, err := s.eval(filename, chunk)
	if err != nil {
		fmt.Fprintln(s.errw, starlib.Backtrace(err))
		return false
	}
	if echo && v != starlark.None {
		fmt.Fprintln(s.out, starlib.Describe(v))
	}
	return true
}

// eval runs a chunk and returns its value (None unless it is one
// expression).
func (s *session) eval(filename, chunk string) (v starlark.Value, err error) {
	for len(s.loopSignals) > 0 { // interrupts left from an earlier run
		<-s.loopSignals
	}
	for len(s.sigint) > 0 {
		<-s.sigint
	}
	done := make(chan struct{})
	defer close(done)
	go s.forwardInterrupts(done)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v (a bug in blocks-repl; please report it)", r)
		}
	}()
	return s.interp.ExecREPLFile(context.Background(), filename, chunk)
}

// forwardInterrupts turns each Ctrl-C received while a chunk runs into a
// request to stop: a main loop finishes its batch (its state is kept and
// main_loop.run() continues), anything else is cancelled.
func (s *session) forwardInterrupts(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-s.sigint:
			if s.interp.Training() {
				select {
				case s.loopSignals <- mainloop.Pause:
				default:
				}
				fmt.Fprintln(s.errw, "\nKeyboardInterrupt: training pauses after this batch, everything kept; main_loop.run() continues it.")
			} else {
				s.interp.Cancel("interrupted (Ctrl-C)")
			}
		}
	}
}

// load runs a file in the session, as :load does.
func (s *session) load(file string) bool {
	src, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(s.errw, "blocks-repl: %v\n", err)
		return false
	}
	abs, _ := filepath.Abs(file)
	s.recordScript(fmt.Sprintf("# :load %s\n%s", abs, src))
	if _, err := s.eval(file, string(src)); err != nil {
		run.TakeLoopRuns(s.interp)
		if errors.Is(err, starlib.ErrNoTrain) {
			fmt.Fprintf(s.errw, "%s: stopped at its first main_loop.run() (--no-train): the globals it defined are kept; main_loop.run() trains. (:save does not record a file stopped this way.)\n", file)
		} else {
			fmt.Fprintln(s.errw, starlib.Backtrace(err))
		}
		return false
	}
	s.accept(fmt.Sprintf("# :load %s\n%s", abs, strings.TrimRight(string(src), "\n")+"\n"), run.TakeLoopRuns(s.interp))
	return true
}

// plainReader reads lines from a pipe or file, without prompts.
type plainReader struct{ sc *bufio.Scanner }

func newPlainReader(in io.Reader) *plainReader {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	return &plainReader{sc}
}

func (p *plainReader) ReadLine(string) (string, error) {
	if !p.sc.Scan() {
		if err := p.sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	return p.sc.Text(), nil
}

func (p *plainReader) Close() error { return nil }

// readlineReader edits lines on a terminal with chzyer/readline; pastes
// bypass its key-by-key editing (repl_paste.go).
type readlineReader struct {
	inst  *readline.Instance
	paste *pasteInput
}

func newReadline(in io.Reader, out, errw io.Writer, s *session) (*readlineReader, error) {
	cfg := &readline.Config{
		Prompt:            ">>> ",
		HistoryFile:       historyPath(),
		HistoryLimit:      10000,
		HistorySearchFold: true,
		AutoComplete:      &completer{s: s},
		InterruptPrompt:   "^C",
		EOFPrompt:         "",
		Stdout:            out,
		Stderr:            errw,
		FuncGetWidth:      terminalWidth,
	}
	paste := newPasteInput(in)
	cfg.Stdin = paste
	cfg.FuncFilterInputRune = paste.filter
	cfg.Listener = paste
	inst, err := readline.NewEx(cfg)
	if err != nil {
		return nil, fmt.Errorf("line editing: %w", err)
	}
	io.WriteString(out, enableBracketedPaste)
	return &readlineReader{inst, paste}, nil
}

// defaultColumns is the width assumed for a terminal that reports none.
const defaultColumns = 80

// terminalWidth is the terminal's width in columns, or defaultColumns when
// it reports none: a pty whose window size was never set says 0×0 (serial
// consoles, some containers and CI runners), and readline, given width 0,
// silently ignores Tab.
func terminalWidth() int {
	if w := readline.GetScreenWidth(); w > 0 {
		return w
	}
	return defaultColumns
}

func (r *readlineReader) ReadLine(prompt string) (string, error) {
	line, ok, tail := r.paste.next()
	if ok {
		// A pasted line: shown after its prompt as readline would have.
		fmt.Fprintf(r.inst.Stdout(), "%s%s\n", prompt, termsafe.Escape(line))
		if strings.TrimSpace(line) != "" {
			r.inst.SaveHistory(line)
		}
		return line, nil
	}
	r.inst.SetPrompt(prompt)
	var err error
	if tail != nil {
		line, err = r.inst.ReadlineWithDefault(*tail)
	} else {
		line, err = r.inst.Readline()
	}
	if err == readline.ErrInterrupt {
		return "", errInterrupt
	}
	return line, err
}

// readlineCloseWait bounds how long Close waits for readline to stop.
const readlineCloseWait = time.Second

func (r *readlineReader) Close() error {
	io.WriteString(r.inst.Stdout(), disableBracketedPaste)
	// readline's Close waits for its reader of the terminal, which stops
	// only after an Enter, Ctrl-C or Ctrl-D: one left in a read (after
	// any other key) would hold the session open until the next key. The
	// terminal is back in its cooked mode already (readline leaves raw
	// mode as each line ends) and the history is written: the session
	// need not wait for that read.
	done := make(chan error, 1)
	go func() { done <- r.inst.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(readlineCloseWait):
		return nil
	}
}

// historyPath is the history file: $BLOCKS_REPL_HISTORY, else
// blocks-repl/history under $XDG_STATE_HOME (default ~/.local/state).
// Empty (no history kept) when there is no home directory.
//
// The file is made private (0600): it holds everything typed, paths and
// settings included.
func historyPath() string {
	if p := os.Getenv("BLOCKS_REPL_HISTORY"); p != "" {
		privateFile(p)
		return p
	}
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	dir = filepath.Join(dir, "blocks-repl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	p := filepath.Join(dir, "history")
	privateFile(p)
	return p
}

// privateFile creates p readable by its owner only, or makes an existing
// p so (readline would create it with the umask's default, 0644).
func privateFile(p string) {
	if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		f.Close()
	}
	_ = os.Chmod(p, 0o600)
}
