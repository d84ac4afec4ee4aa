package starlib

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/internal/termsafe"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/stdlib"
)

// FileOptions is the dialect scripts are written in: go.starlark.net's
// Starlark plus set, while loops, top-level if/for/while, global
// reassignment and recursion, as a researcher used to Python expects.
var FileOptions = &syntax.FileOptions{
	Set:             true,
	While:           true,
	TopLevelControl: true,
	GlobalReassign:  true,
	Recursion:       true,
}

// Options configure a run of a script.
type Options struct {
	// Overrides are the script's tunables set from the command line
	// (blocks-repl run --set lr=0.05): name to a Starlark literal. The
	// script reads them with blocks.config's config.get(name, default); a
	// name it never reads is an error at the end of the run.
	Overrides map[string]string
	// Stdout receives print(); os.Stdout when nil.
	Stdout io.Writer
	// FloatX is "float32" or "float64"; when empty it comes from Fuel's
	// configuration (FUEL_FLOATX, then .fuelrc, then float32).
	FloatX string
	// Device is where the run's graphs run: "cpu" (the default, when
	// empty), "cuda" or "cuda:N" (device.Parse), refused when this build
	// cannot use it (device.Check). The script may change it for the
	// rest of the run with config.device; it is the run's own, as floatX
	// is (Device).
	Device string
	// Context, when not nil, cancels the run when done: Starlark code stops
	// at its next step, and Go builtins that loop (training) see it through
	// Cancelled(thread).
	Context context.Context
	// Library is the set of modules load() resolves by name (package
	// all's Library is the standard one); with none, a script loads only
	// .star files and the embedded standard library.
	Library *Library
	// Modules are extra modules for this run only (a test's assert
	// module), found before the Library's.
	Modules map[string]*starlarkstruct.Module
	// Predeclared are extra global names, added to Predeclared().
	Predeclared starlark.StringDict
	// Sandbox limits what the script may load, write and connect to.
	Sandbox Sandbox
	// Files, when not nil, are the only .star files load() may read:
	// absolute path to source (a checkpoint's scripts; see
	// checkpoint_run.go). Nothing is read from disk then.
	Files map[string][]byte
	// PrintConfig, when not nil, makes the run print its resolved
	// settings, and nothing else, at its first main loop or compiled
	// function (or at its end) and stop with ErrConfigPrinted (blocks-repl
	// run --print-config).
	PrintConfig *PrintConfig
	// Locals are values the run's modules read with RunLocal: how the run
	// relates to a checkpoint (resume, replay) and its processes
	// (package starlib/run). The map is copied; its values are not.
	Locals map[string]any
	// Limits bound the steps and memory the script may use.
	Limits Limits
	// Display, when not nil, shows rich output in the front end that runs
	// the interpreter (the Jupyter kernel): the Plot extension's image.
	Display DisplayFunc
}

// A DisplayFunc shows data (MIME type to content, such as "image/png")
// as the output named id; a later call with the same id replaces it in
// place (Jupyter's display_data and update_display_data).
type DisplayFunc func(id string, data map[string][]byte)

// DisplayOf is the run's Options.Display (nil when the front end shows
// nothing but text).
func DisplayOf(thread *starlark.Thread) DisplayFunc {
	if s := state(thread); s != nil {
		return s.display
	}
	return nil
}

// Thread-local keys.
const (
	floatXKey = "blocks.floatX"
	stateKey  = "blocks.state"
)

// runState is the per-run host state a thread carries.
type runState struct {
	mu  sync.Mutex
	ctx context.Context

	// overrides, as parsed, and the names config.get asked for.
	overrides map[string]starlark.Value
	raw       map[string]string
	asked     map[string]bool
	// loaded lists the .star files load() read, in order.
	loaded []string

	// interrupts replaces the process's signals for main loops
	// (SetInterrupts); training counts the main loops running.
	interrupts <-chan os.Signal
	training   atomic.Int32
	// trainingRuns counts the runs started (interrupt.go).
	trainingRuns atomic.Int64
	noTrain      atomic.Bool

	sandbox Sandbox
	limits  Limits
	// modules are the modules the run loads (Module).
	modules *moduleCache
	// scripts are the main script and the loaded files, with their
	// sources, in the order they were read (for checkpoints).
	scripts []scriptSource
	// session is the interactive session's code (SetSessionScript),
	// stored before scripts.
	session *sessionScript
	// display is Options.Display.
	display DisplayFunc
	// tunables is what config(...) declared and resolved.
	tunables *tunables
	// printConfig is Options.PrintConfig.
	printConfig *PrintConfig
	// locals are the run's locals (RunLocal).
	locals map[string]any
	// device is where the run's graphs run (Options.Device,
	// config.device); the zero Device is the CPU.
	device device.Device
	// settings are the config.get reads, in order (config_settings.go);
	// settingsChecked is set once the overrides have been checked.
	settings        []setting
	settingsChecked bool
	stdout          io.Writer
	// streams are the random streams the run made (random_streams.go),
	// in order: checkpoints save their draws' generators.
	streams []*core.RandomStreams
	// ids are the run's id() numbers (ids.go).
	ids ObjectIDs
}

func state(thread *starlark.Thread) *runState {
	if thread == nil {
		return nil
	}
	s, _ := thread.Local(stateKey).(*runState)
	return s
}

// SetFloatX sets the thread's floatX. Call it before execution starts.
func SetFloatX(thread *starlark.Thread, dt nd.DType) { thread.SetLocal(floatXKey, dt) }

// CallThread is the thread for a call of a script's function that the
// library makes (a script class's method, a stream's mapping), possibly
// from a goroutine of its own while the script runs on parent (Fuel's
// MultiProcessing reads the next batch beside the script): a new thread
// per call, since a Starlark thread is not safe for concurrent use, that
// sees what parent's calls see: its print and load, its run's state
// (options, sandbox, limits; the step limit applies to each call),
// floatX and the locals named by keys (a package's own, such as the
// brick configuration).
func CallThread(parent *starlark.Thread, name string, keys ...string) *starlark.Thread {
	th := &starlark.Thread{Name: name, Print: parent.Print, Load: parent.Load}
	for _, k := range append([]string{stateKey, floatXKey}, keys...) {
		if v := parent.Local(k); v != nil {
			th.SetLocal(k, v)
		}
	}
	if s, ok := parent.Local(stateKey).(*runState); ok && s.limits.MaxSteps > 0 {
		th.SetMaxExecutionSteps(s.limits.MaxSteps)
	}
	return th
}

// FloatX is the thread's floatX: what SetFloatX set, else Fuel's
// configured floatX.
func FloatX(thread *starlark.Thread) nd.DType {
	if thread != nil {
		if dt, ok := thread.Local(floatXKey).(nd.DType); ok {
			return dt
		}
	}
	return DefaultFloatX()
}

// Device is where the thread's run compiles its graphs (Options.Device,
// then config.device): the CPU for a thread that is no run's. Builtins
// that compile (theano.function, eval, GradientDescent, the monitoring
// extensions, beam search) pass it to core.CompileFor or the algorithm's
// and monitoring's configuration; nothing in the process holds a device.
func Device(thread *starlark.Thread) device.Device {
	if s := state(thread); s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.device
	}
	return device.Device{Kind: device.CPU}
}

// setDevice makes d, after device.Check, where the thread's run compiles
// its graphs from now on (config.device = ...).
func setDevice(thread *starlark.Thread, d device.Device) error {
	if err := device.Check(d); err != nil {
		return err
	}
	s := state(thread)
	if s == nil {
		return fmt.Errorf("config.device: the device can be set only from a running script")
	}
	s.mu.Lock()
	s.device = d
	s.mu.Unlock()
	return nil
}

// DefaultFloatX is Fuel's floatX (FUEL_FLOATX, then .fuelrc, then
// float32).
func DefaultFloatX() nd.DType { return config.FloatX() }

// Context is the run's context (context.Background() outside a run).
// Go code that runs long (a training loop) should check it, or call
// Cancelled, between steps.
func Context(thread *starlark.Thread) context.Context {
	if s := state(thread); s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ctx != nil {
			return s.ctx
		}
	}
	return context.Background()
}

// Cancelled returns a non-nil error once the run has been cancelled
// (Options.Context done, or Interp.Cancel). A builtin that loops returns
// it to stop the script.
func Cancelled(thread *starlark.Thread) error {
	if err := context.Cause(Context(thread)); err != nil {
		return fmt.Errorf("cancelled: %w", err)
	}
	return nil
}

// Predeclared are the global names every script has besides Starlark's
// universe: slice(start, stop, step), Python's slice object, for indices
// such as x[slice(1, 3), 0]; next(iterator[, default]), Python's next, for
// iterators that keep their position (stream.get_epoch_iterator());
// dict, tuple and list as Python builds them (universe_collections.go);
// enumerate and zip lazy over iterators (universe_lazy.go);
// Python's classes (classes.go): type(name, bases, namespace), object,
// super, property, staticmethod, classmethod, isinstance, issubclass,
// setattr; id and hex (ids.go).
func Predeclared() starlark.StringDict {
	d := starlark.StringDict{
		"slice": NewBuiltin("slice", sliceBuiltin),
		"next":  NewBuiltin("next", nextBuiltin),
		// StopIteration is the value a script's get_data returns at the
		// end of its items (script_data.go).
		"StopIteration": stopIteration{},
	}
	for k, v := range numericBuiltins() {
		d[k] = v
	}
	for k, v := range collectionBuiltins() { // universe_collections.go
		d[k] = v
	}
	for k, v := range lazyBuiltins() { // universe_lazy.go
		d[k] = v
	}
	for k, v := range classBuiltins() { // classes.go
		d[k] = v
	}
	for k, v := range idBuiltins() { // ids.go
		d[k] = v
	}
	return d
}

// ModuleGlobals names the modules every script has as global values, as a
// Python script has them after `import theano` and `import numpy`:
// theano.tensor.nnet.sigmoid, theano.config.floatX, numpy.zeros; `import
// numpy as np` becomes np = numpy, `from theano import tensor as T`
// T = theano.tensor (or load("theano", T="tensor")). Each is the module
// load() reads (a run without a Library has none), so a child module Go
// code registers later (theano.sandbox.rng_mrg) is an attribute at once.
func ModuleGlobals() []string { return []string{"theano", "numpy"} }

// Interp runs scripts on one thread with one loader cache: ExecFile for
// a script, ExecREPL for the chunks of an interactive session.
type Interp struct {
	Thread *starlark.Thread
	// Globals are the REPL session's globals (ExecREPL).
	Globals starlark.StringDict

	opts        Options
	predeclared starlark.StringDict
	state       *runState
	cache       map[string]*loadEntry
	modules     *moduleCache
	stopWatch   func() bool
	cancel      context.CancelCauseFunc
}

type loadEntry struct {
	globals starlark.StringDict
	err     error
}

// NewInterp prepares a thread for opts: print, load, floatX, overrides
// and cancellation.
func NewInterp(opts Options) (*Interp, error) {
	in := &Interp{opts: opts, cache: map[string]*loadEntry{}}
	stdout := opts.Stdout
	if stdout == nil {
		stdout = os.Stdout
	}
	thread := &starlark.Thread{
		Name: "main",
		// print() output is escaped: a script (a checkpoint's) must not
		// drive the terminal (erase lines, set the title or clipboard).
		Print: func(_ *starlark.Thread, msg string) { fmt.Fprintln(stdout, termsafe.Escape(msg)) },
		Load:  in.load,
	}
	if opts.PrintConfig != nil {
		// --print-config prints the settings and nothing else.
		thread.Print = func(*starlark.Thread, string) {}
	}
	in.Thread = thread
	in.modules = newModuleCache(opts.Library, thread)

	var fx nd.DType
	if opts.FloatX == "" {
		c, err := config.Load()
		if err != nil {
			return nil, err
		}
		fx = c.FloatX
	} else {
		dt, err := nd.ParseDType(opts.FloatX)
		if err != nil || !dt.IsFloat() {
			return nil, fmt.Errorf("floatX must be float32 or float64, got %q", opts.FloatX)
		}
		fx = dt
	}
	SetFloatX(thread, fx)

	s := &runState{asked: map[string]bool{}, overrides: map[string]starlark.Value{}, raw: map[string]string{}}
	s.device = device.Device{Kind: device.CPU}
	if opts.Device != "" {
		d, err := device.Parse(opts.Device)
		if err == nil {
			err = device.Check(d)
		}
		if err != nil {
			return nil, err
		}
		s.device = d
	}
	for name, lit := range opts.Overrides {
		v, err := ParseOverride(lit)
		if err != nil {
			return nil, fmt.Errorf("override %s=%s: %v", name, lit, err)
		}
		s.overrides[name] = v
		s.raw[name] = lit
	}
	s.sandbox = opts.Sandbox
	if s.sandbox.Created == nil {
		s.sandbox.Created = &CreatedFiles{}
	}
	s.limits = opts.Limits
	if opts.Limits.MaxSteps > 0 {
		thread.SetMaxExecutionSteps(opts.Limits.MaxSteps)
	}
	s.printConfig = opts.PrintConfig
	s.display = opts.Display
	if len(opts.Locals) > 0 {
		s.locals = make(map[string]any, len(opts.Locals))
		for k, v := range opts.Locals {
			s.locals[k] = v
		}
	}
	s.stdout = stdout
	s.modules = in.modules
	in.state = s
	thread.SetLocal(stateKey, s)

	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	in.setContext(ctx)

	in.predeclared = Predeclared()
	for k, v := range boundedIterableBuiltins(in.predeclared) {
		in.predeclared[k] = v
	}
	// Python's `import theano` and `import numpy as np`: the modules
	// themselves, the values load() takes their members from (theano.tensor
	// is load("theano.tensor")'s module, with the same builtins).
	for _, name := range ModuleGlobals() {
		if m, ok := in.modules.lookup(name); ok {
			in.predeclared[name] = m
		}
	}
	for k, v := range hiddenOperators() { // operators.go
		in.predeclared[k] = v
	}
	for k, v := range opts.Predeclared {
		in.predeclared[k] = v
	}
	in.Globals = starlark.StringDict{}
	for k, v := range in.predeclared {
		in.Globals[k] = v
	}
	return in, nil
}

// setContext makes ctx (plus Interp.Cancel) the context of what runs next.
func (in *Interp) setContext(parent context.Context) {
	if in.stopWatch != nil {
		in.stopWatch()
		in.cancel(errors.New("superseded")) // releases the old context
	}
	ctx, cancel := context.WithCancelCause(parent)
	in.cancel = cancel
	thread := in.Thread
	in.state.mu.Lock()
	in.state.ctx = ctx
	// A watcher of an older context may have fired just before this one
	// replaced it: clear its cancellation so it cannot leak into this run.
	thread.Uncancel()
	in.state.mu.Unlock()
	in.stopWatch = context.AfterFunc(ctx, func() {
		in.state.mu.Lock()
		defer in.state.mu.Unlock()
		if in.state.ctx == ctx { // only the current run's context cancels
			thread.Cancel(context.Cause(ctx).Error())
		}
	})
}

// Cancel stops what the interpreter is running (safe from any goroutine).
func (in *Interp) Cancel(reason string) {
	in.cancel(errors.New(reason))
}

// Library is the set of modules the interpreter's load() resolves
// (Options.Library).
func (in *Interp) Library() *Library { return in.opts.Library }

// Loaded lists the .star files loaded so far, in the order they were
// first loaded (absolute paths).
func (in *Interp) Loaded() []string {
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	return append([]string(nil), in.state.loaded...)
}

// execFile is starlark.ExecFileOptions in FileOptions' dialect, with
// Theano's operators (rewriteOperators).
func execFile(thread *starlark.Thread, filename string, src any, predeclared starlark.StringDict) (starlark.StringDict, error) {
	f, err := FileOptions.Parse(filename, src, 0)
	if err != nil {
		return nil, err
	}
	rewriteOperators(f)
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, err
	}
	g, err := prog.Init(thread, predeclared)
	g.Freeze()
	return g, err
}

// ExecFile runs a script with the interpreter. src may be nil to read
// filename. See the package function ExecFile.
func (in *Interp) ExecFile(filename string, src []byte) (starlark.StringDict, error) {
	if in.state.sandbox.RootDir == "" {
		if abs, err := filepath.Abs(filename); err == nil {
			in.state.sandbox.RootDir = filepath.Dir(abs)
		}
	}
	if src == nil {
		b, err := os.ReadFile(filename)
		if err != nil {
			return nil, err
		}
		src = b
	}
	in.recordScript(filename, src)
	defer watchHeap(in.Thread)()
	g, err := execFile(in.Thread, filename, src, in.predeclared)
	if err != nil {
		return g, normalizeError(Hint(err, src, nil, in.opts.Library))
	}
	return g, nil
}

// ExecREPL runs one chunk of an interactive session against in.Globals,
// which it updates (globals stay unfrozen; load binds globally). A chunk
// that is a single expression is evaluated and its value returned (and
// stored in _); otherwise the result is None. ctx cancels this chunk only.
func (in *Interp) ExecREPL(ctx context.Context, src string) (starlark.Value, error) {
	return in.ExecREPLFile(ctx, "<stdin>", src)
}

// ExecREPLFile is ExecREPL for a chunk read from filename (the REPL's
// :load and repl FILE): errors name the file, and load() of a relative
// .star path starts from its directory.
func (in *Interp) ExecREPLFile(ctx context.Context, filename, src string) (starlark.Value, error) {
	// setContext clears an old cancellation before it watches ctx; clearing
	// again here could undo a ctx that was already cancelled (its watcher
	// fires at once, on another goroutine).
	in.setContext(ctx)
	defer watchHeap(in.Thread)()
	opts := *FileOptions
	opts.LoadBindsGlobally = true
	f, err := opts.Parse(filename, src, 0)
	if err != nil {
		return nil, Hint(err, []byte(src), in.Globals, in.opts.Library)
	}
	rewriteOperators(f)
	if len(f.Stmts) == 1 {
		if e, ok := f.Stmts[0].(*syntax.ExprStmt); ok {
			v, err := starlark.EvalExprOptions(&opts, in.Thread, e.X, in.Globals)
			if err != nil {
				return nil, normalizeError(Hint(err, []byte(src), in.Globals, in.opts.Library))
			}
			in.Globals["_"] = v
			return v, nil
		}
	}
	if err := starlark.ExecREPLChunk(f, in.Thread, in.Globals); err != nil {
		return nil, normalizeError(Hint(err, []byte(src), in.Globals, in.opts.Library))
	}
	return starlark.None, nil
}

// CheckOverrides is the settings checkpoint at the end of a script
// (config_settings.go): overrides the script never read are an error and
// --print-config prints the settings, unless an earlier checkpoint (the
// first main loop or compiled function) did.
func (in *Interp) CheckOverrides() error {
	return settingsCheckpoint(in.Thread)
}

// unknownOverrides reports the overrides neither config.get read nor
// config(...) declared. Called with s.mu held.
func (s *runState) unknownOverrides() error {
	if s.tunables != nil {
		return s.unknownTunables()
	}
	var unused []string
	for name := range s.overrides {
		if !s.asked[name] {
			unused = append(unused, name)
		}
	}
	if len(unused) == 0 {
		return nil
	}
	sort.Strings(unused)
	asked := make([]string, 0, len(s.asked))
	for n := range s.asked {
		asked = append(asked, n)
	}
	sort.Strings(asked)
	var b strings.Builder
	fmt.Fprintf(&b, "--set %s: the script never reads ", strings.Join(unused, ", "))
	if len(unused) == 1 {
		b.WriteString("this setting")
	} else {
		b.WriteString("these settings")
	}
	b.WriteString(" with config.get")
	if len(asked) > 0 {
		fmt.Fprintf(&b, " (it reads: %s)", strings.Join(asked, ", "))
	} else {
		b.WriteString(" (it reads none)")
	}
	for _, u := range unused {
		if s := closest(u, asked); s != "" {
			fmt.Fprintf(&b, "; did you mean %s instead of %s?", s, u)
		}
	}
	return errors.New(b.String())
}

// ExecFile runs a script: the dialect of FileOptions, load() of
// the Library's modules and of .star files, print to opts.Stdout, floatX and
// the overrides of opts. It returns the script's globals (frozen). A
// runtime error is a *starlark.EvalError whose Backtrace() names the
// script lines; an override the script never read is an error after a
// successful run.
func ExecFile(filename string, src []byte, opts Options) (starlark.StringDict, error) {
	in, err := NewInterp(opts)
	if err != nil {
		return nil, err
	}
	g, err := in.ExecFile(filename, src)
	if err != nil {
		return g, err
	}
	return g, in.CheckOverrides()
}

// load resolves load(module): "stdlib/NAME.star" is a file of the
// embedded Starlark library (package stdlib); another name ending in .star
// is a file relative to the loading script's directory; any other name is
// a module of the Library.
func (in *Interp) load(thread *starlark.Thread, module string) (starlark.StringDict, error) {
	if strings.HasPrefix(module, stdlib.Prefix) && strings.HasSuffix(module, ".star") {
		return in.loadStdlib(thread, module)
	}
	if !strings.HasSuffix(module, ".star") {
		key := "module " + module
		if e, ok := in.cache[key]; ok {
			return e.globals, e.err
		}
		e := &loadEntry{}
		if m, ok := in.opts.Modules[module]; ok {
			e.globals = m.Members
		} else if m, ok := in.modules.lookup(module); ok {
			e.globals = m.Members
		} else {
			e.err = unknownModule(module, in.opts.Library)
		}
		in.cache[key] = e
		return e.globals, e.err
	}
	path := module
	if !filepath.IsAbs(path) {
		dir := "."
		if thread.CallStackDepth() > 0 {
			if f := thread.CallFrame(0).Pos.Filename(); f != "" && !strings.HasPrefix(f, "<") {
				dir = filepath.Dir(f)
			}
		}
		path = filepath.Join(dir, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	// A checkpoint's own files (Files) are read from it, not from disk,
	// wherever they were: only files read from disk are confined.
	if _, stored := in.opts.Files[abs]; !stored {
		if err := in.state.sandbox.checkLoad(module, abs); err != nil {
			return nil, err
		}
	}
	e, ok := in.cache[abs]
	if ok {
		if e == nil {
			return nil, fmt.Errorf("cycle in load graph: %s loads itself (directly or through other files)", module)
		}
		return e.globals, e.err
	}
	in.cache[abs] = nil // loading in progress
	src, err := in.readLoaded(path, abs)
	if err != nil {
		err = fmt.Errorf("reading %s: %w", path, errors.Unwrap(err))
		in.cache[abs] = &loadEntry{nil, err}
		return nil, err
	}
	in.state.mu.Lock()
	in.state.loaded = append(in.state.loaded, abs)
	in.state.scripts = append(in.state.scripts, scriptSource{abs, src})
	in.state.mu.Unlock()
	// Same thread: thread locals carry over and a backtrace goes through
	// the load statement into the loaded file.
	g, err := execFile(thread, path, src, in.predeclared)
	err = Hint(err, src, nil, in.opts.Library)
	in.cache[abs] = &loadEntry{g, err}
	return g, err
}

func unknownModule(module string, lib *Library) error {
	names := lib.Names()
	msg := fmt.Sprintf("no module %q (a file must end in .star)", module)
	if lib == nil {
		msg += "; this run has no module library (Options.Library: package all's Library)"
	}
	if s := closest(module, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return errors.New(msg)
}

// closest is the candidate nearest to s by edit distance, if near enough.
func closest(s string, candidates []string) string {
	best, bestD := "", len(s)/2+1
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// normalizeError makes sure a runtime error is a *starlark.EvalError whose
// call stack is the deepest one recorded (through loads and callbacks)
// and whose message is the outermost one, and adds hints to messages the
// interpreter writes about our types.
func normalizeError(err error) error {
	ev, ok := err.(*starlark.EvalError)
	if !ok {
		return err
	}
	deepest := ev
	for e := errors.Unwrap(error(ev)); e != nil; e = errors.Unwrap(e) {
		if d, ok := e.(*starlark.EvalError); ok && len(d.CallStack) >= len(deepest.CallStack) {
			deepest = d
		}
	}
	if deepest == ev {
		return ev
	}
	ev.CallStack = deepest.CallStack
	return ev
}

// Backtrace formats an error for people: a Starlark traceback with the
// script positions for an evaluation error, the error itself otherwise.
//
// What it returns is safe for a terminal: control characters in the
// message (a script's text) are escaped (termsafe), and a frame repeated
// more than three times in a row is elided as Python does ("[Previous
// line repeated N more times]"), so that runaway recursion prints a
// few lines, not a hundred thousand.
func Backtrace(err error) string {
	var ev *starlark.EvalError
	if errors.As(err, &ev) {
		tb := elideRepeatedFrames(normalizeError(ev).(*starlark.EvalError).Backtrace())
		if strings.HasSuffix(tb, "cancelled: too many steps") {
			tb += " (the run's --max-steps limit; give a larger --max-steps to let it go on)"
		}
		return termsafe.Escape(tb)
	}
	return termsafe.Escape(err.Error())
}

// elideRepeatedFrames keeps three of each run of identical lines and
// replaces the rest by one line saying how many were left out.
func elideRepeatedFrames(tb string) string {
	lines := strings.Split(tb, "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); {
		j := i + 1
		for j < len(lines) && lines[j] == lines[i] {
			j++
		}
		n := j - i
		for k := 0; k < min(n, 3); k++ {
			out = append(out, lines[i])
		}
		if n > 3 {
			out = append(out, fmt.Sprintf("  [Previous line repeated %d more times]", n-3))
		}
		i = j
	}
	return strings.Join(out, "\n")
}
