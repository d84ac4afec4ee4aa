package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/internal/termsafe"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/checkpoint"
)

func init() {
	registerCommand(command{
		name: "resume",
		usage: `  blocks-repl resume [--set NAME=VALUE]... [--trust] [--device DEV] [--np N] [--microbatches K]
                     [--log FILE.sqlite] [--dashboard] [--expect-sha256 HEX]
                     [--max-steps N] [--max-memory SIZE] CKPT.tar
                                           continue the run a checkpoint saved: re-runs the
                                           checkpoint's own copy of the script, restores the
                                           state and trains on (--set may extend FinishAfter;
                                           any --np: docs/distributed.md); confined unless
                                           --trust (docs/hardening.md); writes its
                                           checkpoints to CKPT.tar
`,
		run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return distributed("resume", args, stdout, stderr, resumeCheckpoint)
		},
	})
	registerCommand(command{
		name: "replay",
		usage: `  blocks-repl replay [--trust] [--expect-sha256 HEX] [--max-steps N] [--max-memory SIZE] CKPT.tar
                                           re-run the checkpoint's script from scratch to its
                                           iteration; report whether the state matches bit for
                                           bit (writes nothing: its files go to a removed
                                           temporary directory)
`,
		run: replayCommand,
	})
	registerCommand(command{
		name: "inspect",
		usage: `  blocks-repl inspect CKPT.tar             print a checkpoint's manifest, config, log summary,
                                           parameter table and script
`,
		run: inspectCommand,
	})
}

// printConfigResult ends a run --print-config.
func printConfigResult(pc *starlib.PrintConfig, err error, stderr io.Writer) int {
	if pc.Printed {
		return 0
	}
	if err != nil && !errors.Is(err, starlib.ErrConfigPrinted) {
		fmt.Fprintln(stderr, starlib.Backtrace(err))
		return 1
	}
	fmt.Fprintln(stderr, "blocks-repl: the script reads no settings before its first main loop or compiled function (declare them with load(\"blocks.config\", \"config\"); cfg = config(name=default, ...))")
	return 1
}

// parseCheckpointArgs reads [--set NAME=VALUE]... [--trust] [--device DEV] CKPT.
func parseCheckpointArgs(name string, args []string, allowSet bool, stderr io.Writer) (string, overrides, bool) {
	a, ok := parseCheckpointArgsTrust(name, args, allowSet, stderr)
	return a.path, a.sets, ok
}

// checkpointArgs are the arguments of a command that runs a checkpoint's
// script (resume, replay).
type checkpointArgs struct {
	path  string
	sets  overrides
	trust bool
	// expect is --expect-sha256, in lower case ("": none).
	expect string
	// limits are --max-steps and --max-memory; nil: the confined defaults.
	limits *starlib.Limits
	// device is --device (default BLOCKS_DEVICE; "": the CPU), checked:
	// the device the re-run compiles for (starlib.Options.Device). A
	// checkpoint is device-free, so a run made on the GPU resumes on the
	// CPU and the reverse.
	device string
	// created are the files the command's runs of the script created
	// (resume's probe, then its run): the only ones they may rewrite.
	created *starlib.CreatedFiles
}

// parseCheckpointArgsTrust is parseCheckpointArgs that also reports
// --trust (the checkpoint's script may then write outside the run
// directory and connect to the data servers it names), --device and,
// except for inspect, --expect-sha256, --max-steps and --max-memory.
func parseCheckpointArgsTrust(name string, args []string, allowSet bool, stderr io.Writer) (checkpointArgs, bool) {
	sets := overrides{}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if allowSet {
		fs.Var(sets, "set", "override a setting: NAME=VALUE")
	}
	trust := fs.Bool("trust", false, "let the checkpoint's script write outside the run directory and use the network")
	var expect string
	var limits func() (starlib.Limits, []string, error)
	if name != "inspect" {
		fs.StringVar(&expect, "expect-sha256", "", "refuse the checkpoint unless its scripts have this SHA-256 (inspect prints it)")
		limits = limitFlags(fs, true)
	}
	dev := fs.String("device", os.Getenv("BLOCKS_DEVICE"), "where graphs run: cpu, cuda or cuda:N")
	bad := func(err error) (checkpointArgs, bool) {
		badUsage(stderr, name, err)
		return checkpointArgs{}, false
	}
	path, err := parseOneArg(fs, args, "CKPT.tar")
	if err != nil {
		return bad(err)
	}
	if err := checkDevice(*dev); err != nil {
		fmt.Fprintf(stderr, "blocks-repl %s: %v\n", name, err)
		return checkpointArgs{}, false
	}
	a := checkpointArgs{path: path, sets: sets, trust: *trust, expect: strings.ToLower(strings.TrimSpace(expect)), device: *dev, created: &starlib.CreatedFiles{}}
	if limits != nil {
		l, _, err := limits()
		if err != nil {
			return bad(err)
		}
		a.limits = &l
	}
	return a, true
}

// checkExpected refuses a checkpoint whose scripts are not the ones the
// user approved (--expect-sha256, the hash inspect prints; want "": any).
func checkExpected(want string, c *checkpoint.Checkpoint) error {
	if want == "" {
		return nil
	}
	if got := c.ScriptsSHA256(); got != want {
		return fmt.Errorf("the checkpoint's scripts have SHA-256 %s, not the %s you approved (--expect-sha256): they changed since you inspected them; inspect it again before running it", got, want)
	}
	return nil
}

// readForRun reads a checkpoint and checks that this machine's settings
// can reproduce it. With deferred (a resume) its arrays stay in the file
// until the resumed run restores them straight into the model's arrays
// (checkpoint.ReadDeferred): the resume holds the state once.
func readForRun(path string, deferred bool) (*checkpoint.Checkpoint, error) {
	read := checkpoint.Read
	if deferred {
		read = checkpoint.ReadDeferred
	}
	c, err := read(path)
	if err != nil {
		return nil, err
	}
	if seed := config.DefaultSeed(); seed != c.Run.DefaultSeed {
		return nil, fmt.Errorf("checkpoint %s was made with default_seed %d, but the configuration here gives %d (set default_seed in .fuelrc to %d)",
			path, c.Run.DefaultSeed, seed, c.Run.DefaultSeed)
	}
	if c.MainScript().Path == "<go>" {
		return nil, fmt.Errorf("checkpoint %s was written by a Go program, not a script: there is nothing to re-run", path)
	}
	return c, nil
}

// execStored runs the checkpoint's own script (and only its files) in
// the sandbox: a checkpoint is data from elsewhere, so its script writes
// only under the working directory and has no network unless trusted.
// logPath, when set, is an SQLite log the resumed run writes (with the
// dashboard's agent).
func execStored(c *checkpoint.Checkpoint, sets map[string]string, ck *run.Checkpoint, a checkpointArgs, stdout io.Writer, par *run.Parallel, logPath string) error {
	ov := map[string]string{}
	for k, v := range c.Run.Overrides {
		ov[k] = v
	}
	for k, v := range sets {
		ov[k] = v
	}
	main := c.MainScript()
	if ck.Add == nil {
		ck.Add = c.Run.Added // a run --checkpoint: its Checkpoint again
	}
	if ck.Replay != nil {
		// A replay leaves nothing behind: what the script writes (plots,
		// logs, converted files) goes to a directory removed at the end.
		scratch, err := os.MkdirTemp("", "blocks-replay-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(scratch)
		ck.Scratch = scratch
	}
	opts := starlib.Options{
		Overrides: ov,
		Stdout:    stdout,
		FloatX:    c.Run.FloatX,
		Device:    a.device,
		Files:     c.Files(),
		Sandbox:   storedSandbox(ck, a.trust, a.created),
		Limits:    storedLimits(a.limits),
		Locals:    run.Locals(ck, storedParallel(c, par)), Library: all.Library(),
	}
	defer applyMemoryBudget(opts.Limits)()
	in, err := starlib.NewInterp(opts)
	if err != nil {
		return err
	}
	defer scriptInterrupts(in, os.Stderr)()
	if ck.Replay == nil && ck.Probe == nil { // a run that trains
		observeLogs(in, logPath, main.Path, main.Source, opts, os.Stderr)
	}
	if _, err := in.ExecFile(main.Path, main.Source); err != nil {
		return err
	}
	return in.CheckOverrides()
}

func resumeCheckpoint(args []string, stdout, stderr io.Writer, j *job) int {
	args, logPath, dash, err := takeLogFlags(args)
	if err != nil {
		return badUsage(stderr, "resume", err)
	}
	a, ok := parseCheckpointArgsTrust("resume", args, true, stderr)
	if !ok {
		return 2
	}
	path, sets := a.path, a.sets
	c, err := readForRun(path, true)
	if err == nil {
		err = checkExpected(a.expect, c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl resume: %v\n", err)
		return 1
	}
	if dash && logPath == "" {
		// The log the run wrote, as its recorded command line names it.
		// That line is the checkpoint's, as untrusted as its script: a
		// confined resume only creates the log there, in its run
		// directory, as the script's own writes (a path the user gives
		// with --log is the user's).
		logPath = commandLog(c.Manifest.Command)
		if logPath != "" {
			if err := storedSandbox(&run.Checkpoint{}, a.trust, nil).CheckCreate(logPath); err != nil {
				fmt.Fprintln(stderr, termsafe.Escape(fmt.Sprintf("blocks-repl resume: --dashboard: the checkpoint's command line names the log %s: %v (to continue that log, name it yourself: --log %s)",
					logPath, err, logPath)))
				return 1
			}
		}
	}
	if dash && j.writer() { // process 0 serves it
		ctx, stop := context.WithCancel(context.Background()) // it lives as long as the run
		defer stop()
		d, err := runDashboard(ctx, path, &logPath, defaultDashboardPort, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "blocks-repl resume: %v\n", err)
			return 1
		}
		defer d.finish(ctx, stderr)
	}
	if !j.writer() {
		logPath = "" // process 0 writes the log
	}
	if finished(c) && len(sets) == 0 {
		fmt.Fprintf(stderr, "blocks-repl resume: the run in %s has finished (iteration %d, epoch %d); to train on, extend it with --set (e.g. the tunable FinishAfter reads)\n",
			path, c.Log.Status.IterationsDone, c.Log.Status.EpochsDone)
		return 1
	}
	var changed []string
	for _, k := range sortedKeys(sets) {
		if old, ok := c.Run.Overrides[k]; !ok || old != sets[k] {
			changed = append(changed, k)
		}
	}
	var expect *run.Probe
	if len(changed) > 0 {
		// What the script builds with the checkpoint's own overrides, to
		// compare with what it builds with the new ones (starlib/run/probe.go).
		expect = &run.Probe{}
		perr := execStored(c, nil, &run.Checkpoint{Command: os.Args, Probe: expect}, a, io.Discard, nil, "")
		if !errors.Is(perr, run.ErrProbed) {
			if perr == nil {
				perr = errors.New("the script never started a main loop with a Checkpoint extension")
			}
			fmt.Fprintf(stderr, "blocks-repl resume: re-running the checkpoint's script with its own overrides (to check --set %s): %s\n",
				strings.Join(changed, ", "), starlib.Backtrace(perr))
			return 1
		}
	}
	src := &checkpoint.ResumeSource{Checkpoint: c, Path: path, ScriptPath: c.SavedTo()}
	if j.writer() {
		fmt.Fprintf(stderr, "blocks-repl resume: training continues from %s; this run's checkpoints replace it (a copy resumed is the copy written)\n", path)
	}
	if j != nil && j.par.Microbatches > 0 && c.Run.Microbatches > 0 && j.par.Microbatches != c.Run.Microbatches {
		fmt.Fprintf(stderr, "blocks-repl resume: note: --microbatches %d differs from the checkpoint's %d: training continues, but not bit-identically to the uninterrupted run\n",
			j.par.Microbatches, c.Run.Microbatches)
	}
	err = execStored(c, sets, &run.Checkpoint{Command: os.Args, Resume: src, Expect: expect, PauseCheckpointWrites: checkpointWritePause()}, a, stdout, j.parallelRun(), logPath)
	var refused *run.OverrideRefusedError
	if errors.As(err, &refused) {
		var kv []string
		for _, k := range changed {
			kv = append(kv, k+"="+sets[k])
		}
		fmt.Fprintf(stderr, "blocks-repl resume: --set %s refused: it changes what the checkpoint restores or the training graph (%s), so resume could not apply it and would record a value training never used. Nothing trained and nothing was written. Resume applies the overrides that leave the restored state as it was: FinishAfter's targets, printing, a schedule that starts later (docs/checkpoints.md, \"Overrides on resume\")\n",
			strings.Join(kv, " "), strings.Join(refused.Diffs, "; "))
		return 1
	}
	if nothing := nothingToResume(err); nothing != "" {
		fmt.Fprintf(stderr, "blocks-repl resume: %s: %s; nothing was written (to train on, resume with a later target, e.g. a larger --set for the tunable FinishAfter reads)\n", path, nothing)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, starlib.Backtrace(err))
		return 1
	}
	if !src.Claimed {
		fmt.Fprintf(stderr, "blocks-repl resume: the script never started a main loop with a Checkpoint extension, so nothing was resumed\n")
		return 1
	}
	return 0
}

func replayCommand(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	a, ok := parseCheckpointArgsTrust("replay", args, false, stderr)
	if !ok {
		return 2
	}
	path := a.path
	c, err := readForRun(path, false)
	if err == nil {
		err = checkExpected(a.expect, c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl replay: %v\n", err)
		return 1
	}
	target := &checkpoint.ReplayTarget{Target: c}
	err = execStored(c, nil, &run.Checkpoint{Command: os.Args, Replay: target}, a, io.Discard, nil, "")
	if err != nil && !errors.Is(err, checkpoint.ErrReplayReached) {
		fmt.Fprintln(stderr, starlib.Backtrace(err))
		return 1
	}
	if !target.Reached {
		fmt.Fprintf(stderr, "blocks-repl replay: the script finished without reaching the checkpoint's iteration %d (epoch %d, %s)\n",
			c.Log.Status.IterationsDone, c.Log.Status.EpochsDone, c.Iteration.Callback)
		return 1
	}
	if len(target.Diffs) > 0 {
		fmt.Fprintf(stdout, "replay: MISMATCH at iteration %d:\n", c.Log.Status.IterationsDone)
		for _, d := range target.Diffs {
			fmt.Fprintf(stdout, "  %s\n", d)
		}
		return 1
	}
	n := 0
	for _, p := range c.Parameters {
		n += p.Array.Size()
	}
	fmt.Fprintf(stdout, "replay: bit-identical at iteration %d (epoch %d, %s): %d parameters (%d values), %d algorithm state arrays, %d generators\n",
		c.Log.Status.IterationsDone, c.Log.Status.EpochsDone, c.Iteration.Callback, len(c.Parameters), n,
		len(c.AlgorithmState), len(c.Iteration.StreamRNGs)+len(c.Iteration.RandomOps))
	return 0
}

func inspectCommand(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	path, _, ok := parseCheckpointArgs("inspect", args, false, stderr)
	if !ok {
		return 2
	}
	c, err := checkpoint.Read(path)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl inspect: %v\n", err)
		return 1
	}
	// Everything shown comes from the file: it is escaped as a whole, so
	// that no control sequence in the script, manifest or log reaches
	// the terminal (a comment that erases the line under it).
	var buf strings.Builder
	w := &buf
	defer func() { io.WriteString(stdout, termsafe.Escape(buf.String())) }()
	m := c.Manifest
	fmt.Fprintf(w, "== manifest\nformat:          %s, version %d\nwritten by:      blocks-repl %s\ncreated:         %s\ncommand:         %s\nscript:          %s\niterations_done: %d\nepochs_done:     %d\n",
		m.Format, m.FormatVersion, m.ProjectVersion, m.Created, strings.Join(m.Command, " "), m.Script, m.IterationsDone, m.EpochsDone)
	fmt.Fprintf(w, "members:\n")
	for _, mb := range m.Members {
		fmt.Fprintf(w, "  %-28s %10d bytes  sha256 %s\n", mb.Name, mb.Size, mb.SHA256[:16])
	}
	fmt.Fprintf(w, "\n== config\ndefault_seed = %d\nfloatX = %s\n", c.Run.DefaultSeed, c.Run.FloatX)
	for _, name := range c.Run.ConfigOrder {
		v, _ := c.Run.Config[name].Decode()
		fmt.Fprintf(w, "%s = %v", name, v)
		if o, ok := c.Run.Overrides[name]; ok {
			fmt.Fprintf(w, "  # --set %s=%s", name, o)
		}
		fmt.Fprintln(w)
	}
	for _, k := range sortedKeys(c.Run.Overrides) {
		if _, ok := c.Run.Config[k]; !ok {
			fmt.Fprintf(w, "--set %s=%s\n", k, c.Run.Overrides[k])
		}
	}
	fmt.Fprintf(w, "\n== log\n")
	st := c.Log.Status
	fmt.Fprintf(w, "rows: %d; iterations_done %d, epochs_done %d, epoch ends %v, mid-epoch: %v\n",
		len(c.Log.Rows), st.IterationsDone, st.EpochsDone, st.EpochEnds, st.EpochStarted)
	if n := len(c.Log.Rows); n > 0 {
		last := c.Log.Rows[n-1]
		fmt.Fprintf(w, "last row (iteration %d):\n", last.Iteration)
		for _, k := range sortedKeys(last.Records) {
			v, _ := last.Records[k].Decode()
			fmt.Fprintf(w, "  %s: %v\n", k, v)
		}
	}
	fmt.Fprintf(w, "\n== parameters (%s)\n", checkpoint.MemberParameters)
	paramTable(w, c.Parameters)
	if len(c.AlgorithmState) > 0 {
		fmt.Fprintf(w, "\n== algorithm state\n")
		shown := make([]checkpoint.Named, len(c.AlgorithmState))
		for i, a := range c.AlgorithmState {
			shown[i] = a
			shown[i].Name = checkpoint.DisplayName(a.Name)
		}
		paramTable(w, shown)
	}
	draws := ""
	if n := len(c.Iteration.RandomStreams); n > 0 {
		draws = fmt.Sprintf(", %d in random streams' draws", n)
	}
	fmt.Fprintf(w, "\n== generators: %d in the data stream, %d in random ops%s; position in the epoch: %v\n",
		len(c.Iteration.StreamRNGs), len(c.Iteration.RandomOps), draws, c.Iteration.EpochIterator != nil)
	fmt.Fprintf(w, "\n== scripts sha256 %s\n(after reading them: blocks-repl resume --expect-sha256 %s %s)\n",
		c.ScriptsSHA256(), c.ScriptsSHA256(), path)
	for i, s := range c.Run.Scripts {
		if i == 0 {
			fmt.Fprintf(w, "\n== script %s\n", s.Path)
		} else {
			fmt.Fprintf(w, "\n== loaded file %s\n", s.Path)
		}
		fmt.Fprint(w, string(s.Source))
		if len(s.Source) > 0 && s.Source[len(s.Source)-1] != '\n' {
			fmt.Fprintln(w)
		}
	}
	return 0
}

func paramTable(w io.Writer, arrays []checkpoint.Named) {
	width := len("name")
	for _, a := range arrays {
		width = max(width, len(a.Name))
	}
	fmt.Fprintf(w, "%-*s  %-12s %-8s %12s %12s %12s %12s\n", width, "name", "shape", "dtype", "mean", "std", "min", "max")
	for _, a := range arrays {
		n := a.Array.Size()
		var sum, sq float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := 0; i < n; i++ {
			x := a.Array.Flat(i)
			sum += x
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		mean := 0.0
		if n > 0 {
			mean = sum / float64(n)
			for i := 0; i < n; i++ {
				d := a.Array.Flat(i) - mean
				sq += d * d
			}
		}
		std := 0.0
		if n > 0 {
			std = math.Sqrt(sq / float64(n))
		}
		if n == 0 {
			lo, hi = 0, 0
		}
		fmt.Fprintf(w, "%-*s  %-12s %-8s %12.5g %12.5g %12.5g %12.5g\n", width, a.Name, nd.ShapeString(a.Array.Shape), a.Array.DType(), mean, std, lo, hi)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// finished reports whether the checkpoint's run had finished training.
func finished(c *checkpoint.Checkpoint) bool {
	st := c.Log.Status
	if st.BatchInterruptReceived || st.EpochInterruptReceived {
		return false // stopped by a signal (a scheduler's SIGTERM): resumable
	}
	for _, r := range c.Log.Rows {
		if r.Iteration == st.IterationsDone {
			flag := func(k string) bool {
				v, _ := r.Records[k].Decode()
				b, _ := v.(bool)
				return b
			}
			return flag("training_finished") && !flag("batch_interrupt_received") && !flag("epoch_interrupt_received")
		}
	}
	return false
}

// storedSandbox confines a checkpoint's script: it writes under the
// working directory (and the checkpoint it resumes, wherever that is),
// reads under the working directory, the data path and the resumed
// checkpoint's directory, and has no network, unless trusted. A replay
// writes only to its scratch directory.
func storedSandbox(ck *run.Checkpoint, trust bool, created *starlib.CreatedFiles) starlib.Sandbox {
	sb := starlib.Sandbox{Confined: true, Trust: trust, Scratch: ck.Scratch, Created: created}
	if ck.Resume != nil && ck.Resume.Path != "" {
		sb.WriteFiles = []string{ck.Resume.Path}
		sb.ReadDirs = []string{filepath.Dir(ck.Resume.Path)}
	}
	return sb
}

// storedLimits are the limits of a checkpoint's script: the command's
// --max-steps and --max-memory (set), or the confined defaults.
func storedLimits(set *starlib.Limits) starlib.Limits {
	if set != nil {
		return *set
	}
	return starlib.Limits{MaxSteps: defaultConfinedSteps, MaxMemory: nd.PhysicalMemory() / 2}
}
