// Command blocks-repl runs Blocks experiments written in Starlark, and
// the tools around them: checkpoints, logs, graphs, Fuel's data commands
// and a live dashboard.
//
//	blocks-repl                   an interactive session (the REPL)
//	blocks-repl repl [FILE]       an interactive session after running FILE
//	blocks-repl run SCRIPT.star   run an experiment script (--set NAME=VALUE
//	                              overrides a setting, --print-config lists them)
//	blocks-repl resume CKPT.tar   continue the run a checkpoint saved, re-running
//	                              its own copy of the script, sandboxed unless --trust
//	blocks-repl replay CKPT.tar   re-run a checkpoint's script from scratch and
//	                              check its state bit for bit
//	blocks-repl inspect CKPT.tar  print a checkpoint's manifest, config, log,
//	                              parameters and script
//	blocks-repl graph SCRIPT.star print the computation graph a script builds
//	blocks-repl plot LOG          draw log channels to a PNG or SVG
//	blocks-repl dashboard [LOG]   a live dashboard of runs in the browser
//	blocks-repl fuel COMMAND      Fuel's data commands: download, convert,
//	                              info, serve (blocks-repl fuel help)
//	blocks-repl kernel FILE       the Jupyter kernel (kernel install writes
//	                              its kernelspec; docs/jupyter.md)
//	blocks-repl nbexport NB.ipynb a notebook's cells that ran, as a script
//	blocks-repl version           print the version
//	blocks-repl help              print every command's options
//
// Each command lives in its own file and registers itself (registerCommand);
// `blocks-repl help` and `blocks-repl COMMAND --help` print the options.
// A script that fails prints its Starlark backtrace (file:line of each call)
// and the error to stderr, and the command exits with status 1; a usage
// error exits with status 2. Untrusted text (a checkpoint's script, names
// and values from a data file) is escaped before it reaches the terminal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/internal/tty"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/checkpoint"
)

// version is the project's version, the one checkpoints record (set at
// link time by -ldflags "-X github.com/blocks-go/blocks/train/checkpoint.ProjectVersion=...").
var version = checkpoint.ProjectVersion

// runOptions are run's options (usage.go prints them for run --help).
const runOptions = `  --set NAME=VALUE   override the setting NAME, which the script declares with
                     load("blocks.config", "config"); cfg = config(NAME=default, ...)
                     (or reads with config.get(NAME, default)).
                     VALUE is a Starlark literal (0.05, 200, True, "adam",
                     [200, 100]); other text is taken as a string. Repeatable.
                     A name the script has not read by its first main loop
                     or compiled function is an error there, before training.
  --print-config     print the settings the script reads (config(...) and
                     config.get), as resolved with the --set overrides, and
                     stop at its first main loop or compiled function.
  --device DEV       where graphs run: cpu (the default; also BLOCKS_DEVICE),
                     cuda or cuda:N (the CUDA build, make build-cuda; other
                     builds refuse cuda at once, saying so).
  --dashboard        serve the live dashboard (blocks-repl dashboard) of this run on
                     127.0.0.1:8765 (--dashboard-port N; a free port if taken) while
                     it trains; the log goes to --log FILE.sqlite, default
                     SCRIPT.sqlite in the current directory
  --log FILE         write the training log of the script's main loop to FILE:
                     JSON lines (.jsonl, .json), CSV (.csv) or an SQLite log
                     database (.sqlite, .db; written as training goes, every
                     main loop of the script, resumed runs chained).
  --checkpoint FILE  add Checkpoint(FILE) to the script's first main loop, after
                     its own extensions, without editing the script: the run's
                     state goes to FILE every epoch and after training, so
                     Ctrl-C and SIGTERM leave something to blocks-repl resume
                     FILE (docs/checkpoints.md). How often:
                     --checkpoint-every-n-epochs N (default 1; 0: never by epochs),
                     --checkpoint-every-n-batches N (default 0: never by batches).
`

const usageTail = `  blocks-repl version                      print the version
  blocks-repl help                         print this help

run:
` + runOptions + `
resume, replay:
` + trustOption + `
The script's print() goes to stdout; errors, with the Starlark backtrace,
to stderr. Exit status: 0 on success, 1 when the script fails, 2 for a
usage error.
`

func main() {
	if os.Getenv("GOTRACEBACK") == "" {
		// Even a panic nothing recovers (in another goroutine) prints its
		// message without pages of goroutine stacks.
		debug.SetTraceback("none")
	}
	if os.Getenv("GOGC") == "" {
		// Training keeps a small live heap and allocates data batches at a
		// high rate: collecting at 4x the live heap instead of 2x halves
		// the data pipeline's CPU time (docs/fuel-streams.md) for a few
		// MB more memory. GOGC in the environment still wins.
		debug.SetGCPercent(400)
	}
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Main runs the command with its arguments (without the program name) and
// returns the exit status. A Go panic is reported as an internal error,
// never as a stack trace.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer checkpoint.ReleaseLocks()
	defer func() {
		if r := recover(); r != nil {
			switch r.(type) {
			case *nd.SizeError, *nd.BudgetError: // an allocation the memory budget refused
				fmt.Fprintf(stderr, "blocks-repl: %v\n", r)
			default:
				fmt.Fprintf(stderr, "blocks-repl: internal error: %v\n(this is a bug in blocks-repl, not in your script; please report it)\n", r)
			}
			code = 1
		}
	}()
	// The CPU settings' overrides (docs/backends.md); run and the
	// checkpoint commands report a malformed one (checkDevice).
	_ = cpu.ConfigureFromEnv(os.Getenv)
	if len(args) == 0 {
		return repl(stdin, stdout, stderr, tty.Is(stdin), "")
	}
	if c, ok := commands[args[0]]; ok {
		if !commandHelpOwn[c.name] && isHelpArg(args[1:]) {
			fmt.Fprint(stdout, commandUsage(c.name, true))
			return 0
		}
		return c.run(args[1:], stdin, stdout, stderr)
	}
	switch args[0] {
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionString())
		return 0
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usageText())
		return 0
	}
	msg := fmt.Sprintf("blocks-repl: unknown command %q", args[0])
	if strings.HasSuffix(args[0], ".star") {
		msg += fmt.Sprintf(" (to run a script: blocks-repl run %s)", args[0])
	}
	fmt.Fprintf(stderr, "%s\n(blocks-repl help lists the commands)\n", msg)
	return 2
}

// A command is one subcommand of blocks-repl (run, resume, fuel, ...).
// Each lives in its own file and adds itself to commands from an init
// function with registerCommand, so the usage text lists them all.
type command struct {
	name  string
	usage string // lines for the usage text, starting with "  blocks-repl NAME"
	run   func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func registerCommand(c command) {
	if _, dup := commands[c.name]; dup {
		panic("blocks-repl: command " + c.name + " registered twice")
	}
	commands[c.name] = c
}

func init() {
	registerCommand(command{
		name: "run",
		usage: `  blocks-repl run [--set NAME=VALUE]... [--print-config] [--log FILE] [--dashboard] [--device DEV]
                  [--checkpoint FILE [--checkpoint-every-n-epochs N] [--checkpoint-every-n-batches N]]
                  [--np N] [--microbatches K] [--max-steps N] [--max-memory SIZE]
                  [--load-root DIR]... SCRIPT.star
                                           run an experiment script (on N processes with
                                           mpirun, each batch cut into K microbatches:
                                           docs/distributed.md; limits: docs/hardening.md)
`,
		run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runCommand(args, stdout, stderr)
		},
	})
}

// usageText is the help: the fixed commands, every registered command
// (sorted by name) and the details of run.
func usageText() string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("usage:\n  blocks-repl                              start an interactive session\n")
	for _, n := range names {
		b.WriteString(commands[n].usage)
	}
	b.WriteString(usageTail)
	return b.String()
}

// overrides is the repeatable --set NAME=VALUE flag.
type overrides map[string]string

func (o overrides) String() string { return "" }

func (o overrides) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || !isIdent(name) {
		return fmt.Errorf("want NAME=VALUE with NAME an identifier, got %q", s)
	}
	if _, dup := o[name]; dup {
		return fmt.Errorf("%s is set twice", name)
	}
	o[name] = value
	return nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func runCommand(args []string, stdout, stderr io.Writer) int {
	return distributed("run", args, stdout, stderr, runScript)
}

// runScript is run in one process (j: its data-parallel job, or nil).
func runScript(args []string, stdout, stderr io.Writer, j *job) int {
	sets := overrides{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(sets, "set", "override a setting: NAME=VALUE")
	printConfig := fs.Bool("print-config", false, "print the resolved config(...) and stop")
	logPath := fs.String("log", "", "write the training log to FILE (.jsonl, .csv or .sqlite)")
	dev := fs.String("device", os.Getenv("BLOCKS_DEVICE"), "where graphs run: cpu, cuda or cuda:N")
	dash := fs.Bool("dashboard", false, "serve the live dashboard while the script runs")
	dashPort := fs.Int("dashboard-port", defaultDashboardPort, "the dashboard's port")
	ckptPath := fs.String("checkpoint", "", "add a Checkpoint to the script's main loop, writing FILE")
	ckptEpochs := fs.Int("checkpoint-every-n-epochs", 1, "")
	ckptBatches := fs.Int("checkpoint-every-n-batches", 0, "")
	limits := limitFlags(fs, false)
	usageError := func(err error) int {
		return badUsage(stderr, "run", err)
	}
	// Flags may come before or after the script.
	script, err := parseOneArg(fs, args, "SCRIPT.star")
	if err != nil {
		return usageError(err)
	}
	added, err := addedCheckpoint(fs, *ckptPath, *ckptEpochs, *ckptBatches)
	if err != nil {
		return usageError(err)
	}
	if err := checkDevice(*dev); err != nil {
		fmt.Fprintf(stderr, "blocks-repl run: %v\n", err)
		return 1
	}
	lim, loadRoots, err := limits()
	if err != nil {
		return usageError(err)
	}
	defer applyMemoryBudget(lim)()
	src, err := os.ReadFile(script)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl: %v\n", err)
		return 1
	}
	if strings.EqualFold(filepath.Ext(script), ".ipynb") {
		// A notebook runs as the script nbexport writes.
		s, err := notebookScript(script, src)
		if err != nil {
			fmt.Fprintf(stderr, "blocks-repl run: %v\n", err)
			return 1
		}
		src = []byte(s)
	}
	// Ctrl-C is the main loop's (scriptInterrupts): the dashboard lives
	// as long as the run.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if *dash && !*printConfig && j.writer() { // process 0 serves it
		d, err := runDashboard(ctx, script, logPath, *dashPort, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "blocks-repl run: %v\n", err)
			return 1
		}
		defer d.finish(ctx, stderr)
	}
	ck := &run.Checkpoint{Command: os.Args, PauseCheckpointWrites: checkpointWritePause(), Add: added}
	var pc *starlib.PrintConfig
	if *printConfig {
		pc = &starlib.PrintConfig{}
	}
	if !j.writer() {
		*logPath = "" // process 0 writes the log
	}
	err = execWithLog(script, src, starlib.Options{
		Overrides:   sets,
		Stdout:      stdout,
		Device:      *dev,
		PrintConfig: pc,
		Locals:      run.Locals(ck, j.parallelRun()),
		Limits:      lim,
		Sandbox:     starlib.Sandbox{LoadRoots: loadRoots}, Library: all.Library(),
	}, *logPath, stderr)
	if *printConfig {
		return printConfigResult(pc, err, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, starlib.Backtrace(err))
		return 1
	}
	return 0
}

// addedCheckpoint is run's --checkpoint FILE with its triggers (nil
// without it): every_n_epochs (default 1) and every_n_batches (default
// 0), after_training always.
func addedCheckpoint(fs *flag.FlagSet, path string, epochs, batches int) (*checkpoint.AddedCheckpoint, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if path == "" {
		for _, n := range []string{"checkpoint-every-n-epochs", "checkpoint-every-n-batches"} {
			if set[n] {
				return nil, fmt.Errorf("--%s needs --checkpoint FILE", n)
			}
		}
		if set["checkpoint"] {
			return nil, errors.New("--checkpoint needs a file name")
		}
		return nil, nil
	}
	if epochs < 0 || batches < 0 {
		return nil, fmt.Errorf("--checkpoint-every-n-epochs and --checkpoint-every-n-batches take a count from 0, got %d and %d", epochs, batches)
	}
	return &checkpoint.AddedCheckpoint{Path: path, EveryNEpochs: epochs, EveryNBatches: batches}, nil
}

func versionString() string {
	s := "blocks-repl " + version
	if bi, ok := debug.ReadBuildInfo(); ok {
		s += " (" + bi.GoVersion
		for _, dep := range bi.Deps {
			if dep.Path == "go.starlark.net" {
				s += ", go.starlark.net " + dep.Version
			}
		}
		s += ")"
	}
	s += "\n" + device.Build
	s += fmt.Sprintf("; CPU: %s, %d workers", cpu.BLASName, cpu.Settings().Workers)
	return s
}

// checkDevice checks, before anything runs, the device named by --device
// (empty: the CPU), which the command then passes to its run
// (starlib.Options.Device): the device is the run's, not the process's.
// It also reads the CPU settings' overrides.
func checkDevice(name string) error {
	if err := cpu.ConfigureFromEnv(os.Getenv); err != nil {
		return err
	}
	if name == "" {
		return nil
	}
	d, err := device.Parse(name)
	if err != nil {
		return err
	}
	return device.Check(d)
}

// checkpointWritePause is the test hooks that pause checkpoint writes half
// way, read here, once per command, and passed down as an option (nil:
// none):
//
//   - BLOCKS_CHECKPOINT_WRITE_HOLD=N: the Nth write of this command prints
//     "checkpoint: write held" and waits for SIGTERM, SIGINT (which the main
//     loop also receives) or SIGUSR1 (release only), at most 10 minutes. A
//     test then signals or kills the process in that write whatever the
//     load: it waits for the line, not for time.
//   - BLOCKS_CHECKPOINT_WRITE_DELAY (a Go duration): every write sleeps
//     that long (the kill trials, which want kills anywhere).
func checkpointWritePause() func() {
	if n, err := strconv.Atoi(os.Getenv("BLOCKS_CHECKPOINT_WRITE_HOLD")); err == nil && n > 0 {
		writes := 0 // writes run one at a time, on the main loop's goroutine
		return func() {
			if writes++; writes != n {
				return
			}
			ch := make(chan os.Signal, 1)
			signal.Notify(ch, syscall.SIGTERM, os.Interrupt, syscall.SIGUSR1)
			defer signal.Stop(ch)
			fmt.Fprintln(os.Stderr, "checkpoint: write held")
			select {
			case <-ch:
			case <-time.After(10 * time.Minute):
			}
		}
	}
	if d, _ := time.ParseDuration(os.Getenv("BLOCKS_CHECKPOINT_WRITE_DELAY")); d > 0 {
		return func() { time.Sleep(d) }
	}
	return nil
}
