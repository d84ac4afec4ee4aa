package blocks

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

// Modules blocks.algorithms, blocks.extensions, blocks.extensions.monitoring
// and blocks.main_loop: training.
//
// blocks.algorithms:
//
//	GradientDescent(cost=None, parameters=None, step_rule=None (Scale(1)), gradients=None,
//	                known_grads=None, consider_constant=None, **kwargs: updates=None,
//	                theano_func_kwargs=None, on_unused_sources='raise')   (a table: algorithms_table.go)
//	    one training step per batch: param <- param - step; has total_gradient_norm,
//	    total_step_norm, add_updates(updates), parameters, gradients
//	    buffers (the step rule's ALGORITHM_BUFFER variables, named "<parameter path>_<buffer>"),
//	    step_rule
//	Scale(learning_rate=1.0)          step = learning_rate * gradient (learning_rate is a shared variable)
//	CompositeRule(components)         applies step rules in turn
//	(BasicMomentum, Momentum, AdaDelta, BasicRMSProp, RMSProp, AdaGrad, Adam, StepClipping,
//	VariableClipping, RemoveNotFinite, Restrict, UpdatesAlgorithm: algorithms.go)
//
// blocks.extensions (every extension takes Blocks' trigger keywords: before_training,
// before_first_epoch, before_epoch, before_batch, after_batch, after_epoch, after_training,
// on_resumption, on_interrupt, on_error, after_n_epochs, after_n_batches, every_n_epochs,
// every_n_batches):
//
//	FinishAfter(after_n_epochs=None, after_n_batches=None)
//	Printing(one_line=False)          prints the log (before the first epoch, after each epoch, at the end);
//	                                  one_line=True: one line per epoch instead of Blocks' blocks
//	Timing(prefix="")                 time_train_this_batch, time_read_data_this_epoch, ...
//	ProgressBar()                     a live bar on a terminal (stderr), plain lines otherwise
//	(SimpleExtension, Timestamp, CompositeExtension and the training, stopping, predicates
//	and plot modules: extensions.go, extensions_plot.go)
//
// blocks.extensions.monitoring:
//
//	DataStreamMonitoring(variables, data_stream, updates=None, **kwargs: prefix=None, suffix=None)
//	    evaluates variables over an epoch of data_stream (mean over batches) and records
//	    prefix_name (default before the first epoch and after each epoch)
//	TrainingDataMonitoring(variables, **kwargs: prefix=None, suffix=None)
//	    aggregates variables over the training batches, from the training step itself
//
// blocks.main_loop:
//
//	MainLoop(algorithm, data_stream, model=None, log=None, log_backend=None, extensions=None)   (a table: algorithms_table.go)
//	    log_backend="sqlite" also stores the log, as training goes, in the SQLite database
//	    BLOCKS_SQLITEDB (default ~/blocks_log.sqlite)
//	    log may be a TrainingLog, an instance of a TrainingLog subclass or any object with
//	    status and current_row (log_script.go)
//	    run() trains; log (current_row, status, log[i]), status, iterations_done, epochs_done.
//	    The first Ctrl-C finishes the epoch, the second the batch.
func trainingModules() (mods []*starlarkstruct.Module) {
	// GradientDescent and MainLoop are tables (algorithms_table.go), the
	// extensions too (extensions_table.go).
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.extensions", Members: starlark.StringDict{}})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.extensions.monitoring", Members: starlark.StringDict{}})
	return
}

// StepRule is a step rule as a Starlark value; its hyperparameters are
// shared variables (scale.learning_rate.set_value(0.05)).
type StepRule struct {
	R     algorithms.StepRule
	name  string
	attrs map[string]*core.Variable
	st    *starlib.ObjectState // a script class's instance (script_classes.go)
}

func (s *StepRule) String() string       { return "<" + s.name + ">" }
func (s *StepRule) Type() string         { return s.name }
func (s *StepRule) Freeze()              {}
func (s *StepRule) Truth() starlark.Bool { return true }
func (s *StepRule) AttrNames() []string {
	var n []string
	for k := range s.attrs {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
func (s *StepRule) Attr(name string) (starlark.Value, error) {
	v, err := s.attr(name)
	if v == nil && err == nil && s.st != nil {
		return starlib.ScriptGetattr(s, s.st, name) // a subclass's __getattr__
	}
	return v, err
}

func (s *StepRule) attr(name string) (starlark.Value, error) {
	if s.st != nil {
		if v, found, err := starlib.ScriptAttr(s, s.st, name); found || err != nil {
			return v, err
		}
	}
	if v, ok := s.attrs[name]; ok {
		return &starlib.Variable{V: v}, nil
	}
	if m := stepRuleMethod(s, name); m != nil {
		return m, nil
	}
	return nil, nil
}

// newGradientDescent makes GradientDescent from its table's bound
// arguments (algorithms_table.go).
func newGradientDescent(c *classCall) (starlark.Value, error) {
	if err := mustBeDefault(c, "theano_func_kwargs"); err != nil {
		return nil, err
	}
	thread := c.thread
	costV, params, rule, grads := c.Value("cost"), c.Value("parameters"), c.Value("step_rule"), c.Value("gradients")
	known, constant, ups, onUnused := c.Value("known_grads"), c.Value("consider_constant"), c.Value("updates"), c.String("on_unused_sources")
	cfg := algorithms.GradientDescentConfig{OnUnusedSources: onUnused, ParameterName: bricks.ParameterPath, FloatX: starlib.FloatX(thread), Device: starlib.Device(thread)}
	switch c := costV.(type) {
	case starlark.NoneType:
	case *starlib.Variable:
		cfg.Cost = c.V
	default:
		return nil, fmt.Errorf("GradientDescent: cost must be a variable, got %s", costV.Type())
	}
	var err error
	if ups != starlark.None {
		if cfg.Updates, err = updatesOf(thread, ups); err != nil {
			return nil, fmt.Errorf("GradientDescent: updates: %v", err)
		}
	}
	if grads != starlark.None {
		if _, ok := grads.(*starlark.Dict); !ok {
			pairs, err := pairsDict(grads)
			if err != nil {
				return nil, fmt.Errorf("GradientDescent: gradients: %v", err)
			}
			grads = pairs
		}
	}
	if params != starlark.None {
		if cfg.Parameters, err = variablesOf(thread, "GradientDescent: parameters", params); err != nil {
			return nil, err
		}
	}
	switch r := rule.(type) {
	case starlark.NoneType:
	case *StepRule:
		cfg.StepRule = r.R
	default:
		return nil, fmt.Errorf("GradientDescent: step_rule must be a step rule (e.g. Scale), got %s", rule.Type())
	}
	if d, ok := grads.(*starlark.Dict); ok {
		for _, kv := range d.Items() {
			p, ok1 := kv[0].(*starlib.Variable)
			g, ok2 := kv[1].(*starlib.Variable)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("GradientDescent: gradients must map parameters to variables")
			}
			cfg.Gradients = append(cfg.Gradients, algorithms.Gradient{Parameter: p.V, Value: g.V})
		}
	}
	if d, ok := known.(*starlark.Dict); ok {
		cfg.KnownGrads = map[*core.Variable]*core.Variable{}
		for _, kv := range d.Items() {
			p, ok1 := kv[0].(*starlib.Variable)
			g, ok2 := kv[1].(*starlib.Variable)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("GradientDescent: known_grads must map variables to variables")
			}
			cfg.KnownGrads[p.V] = g.V
		}
	}
	if constant != starlark.None {
		if cfg.ConsiderConstant, err = variablesOf(thread, "GradientDescent: consider_constant", constant); err != nil {
			return nil, err
		}
	}
	gd, err := algorithms.NewGradientDescent(cfg)
	if err != nil {
		return nil, err
	}
	gd.Warn = func(msg string) { thread.Print(thread, "WARNING: "+msg) }
	var ruleValue starlark.Value = rule
	if rule == starlark.None {
		ruleValue = &StepRule{R: gd.StepRule, name: "Scale", attrs: map[string]*core.Variable{"learning_rate": gd.StepRule.(*algorithms.Scale).LearningRate}}
	}
	return &Algorithm{GD: gd, UA: &gd.UpdatesAlgorithm, rule: ruleValue}, nil
}

// Algorithm is a training algorithm as a Starlark value: a
// GradientDescent (GD and UA set) or an UpdatesAlgorithm (UA only).
type Algorithm struct {
	GD *algorithms.GradientDescent
	UA *algorithms.UpdatesAlgorithm

	rule starlark.Value
}

// Algorithm is the value the main loop runs.
func (a *Algorithm) Algorithm() mainloop.Algorithm {
	if a.GD != nil {
		return a.GD
	}
	return a.UA
}

func (a *Algorithm) String() string { return "<" + a.Type() + ">" }
func (a *Algorithm) Type() string {
	if a.GD == nil {
		return "UpdatesAlgorithm"
	}
	return "GradientDescent"
}
func (a *Algorithm) Freeze()              {}
func (a *Algorithm) Truth() starlark.Bool { return true }
func (a *Algorithm) AttrNames() []string {
	n := append([]string{"add_updates"}, algorithmAttrNames...)
	if a.GD != nil {
		n = append(n, "buffers", "cost", "gradients", "parameters", "step_rule", "steps", "total_gradient_norm", "total_step_norm")
	}
	sort.Strings(n)
	return n
}
func (a *Algorithm) Attr(name string) (starlark.Value, error) {
	if v := algorithmAttr(a, name); v != nil {
		return v, nil
	}
	if a.GD == nil && name != "add_updates" {
		return nil, nil
	}
	switch name {
	case "buffers":
		return variableList(nil, a.GD.Buffers()), nil
	case "step_rule":
		if a.rule == nil && a.GD.StepRule != nil {
			// main_loop.algorithm: the rule, equal to the script's
			// (identity.go), without its hyperparameter attributes.
			name := reflect.TypeOf(a.GD.StepRule).String()
			return &StepRule{R: a.GD.StepRule, name: name[strings.LastIndex(name, ".")+1:]}, nil
		}
		return a.rule, nil
	case "cost":
		return &starlib.Variable{V: a.GD.Cost}, nil
	case "parameters":
		return variableList(nil, a.GD.Parameters), nil
	case "gradients":
		return variableList(nil, a.GD.Gradients), nil
	case "steps":
		return variableList(nil, a.GD.Steps), nil
	case "total_gradient_norm":
		return &starlib.Variable{V: a.GD.TotalGradientNorm}, nil
	case "total_step_norm":
		return &starlib.Variable{V: a.GD.TotalStepNorm}, nil
	case "add_updates":
		return starlib.NewBuiltin("add_updates", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var ups starlark.Value
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "updates", &ups); err != nil {
				return nil, err
			}
			us, err := updatesOf(thread, ups)
			if err != nil {
				return nil, fmt.Errorf("add_updates: %v", err)
			}
			return starlark.None, a.UA.AddUpdates(us)
		}).BindReceiver(a), nil
	}
	return nil, nil
}

// updatesOf reads updates given as a dict or a list of (variable, value)
// pairs.
func updatesOf(thread *starlark.Thread, v starlark.Value) ([]core.Update, error) {
	var pairs []starlark.Tuple
	switch v := v.(type) {
	case *starlark.Dict:
		pairs = v.Items()
	case starlark.Iterable:
		it := v.Iterate()
		defer it.Done()
		var x starlark.Value
		for it.Next(&x) {
			t, ok := x.(starlark.Tuple)
			if !ok || len(t) != 2 {
				return nil, fmt.Errorf("updates must be (variable, new value) pairs, got %s", x.Type())
			}
			pairs = append(pairs, t)
		}
	default:
		return nil, fmt.Errorf("updates must be a dict or a list of pairs, got %s", v.Type())
	}
	var out []core.Update
	for _, p := range pairs {
		s, ok := p[0].(*starlib.Variable)
		if !ok {
			return nil, fmt.Errorf("update target must be a shared variable, got %s", p[0].Type())
		}
		val, err := starlib.AsVariable(thread, p[1])
		if err != nil {
			return nil, err
		}
		out = append(out, core.Update{Shared: s.V, Value: val})
	}
	return out, nil
}

// printWriter sends complete lines to the thread's print function.
type printWriter struct {
	thread *starlark.Thread
	buf    bytes.Buffer
}

func (w *printWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.buf.Next(i + 1))
		w.thread.Print(w.thread, line[:len(line)-1])
	}
}

var triggerNames = []string{"before_training", "before_first_epoch", "before_epoch", "before_batch", "after_batch",
	"after_epoch", "after_training", "on_resumption", "on_interrupt", "on_error",
	"after_n_epochs", "after_n_batches", "every_n_epochs", "every_n_batches"}

// splitTriggers separates Blocks' trigger keywords from the extension's own.
func splitTriggers(name string, kwargs []starlark.Tuple) (extensions.Triggers, []starlark.Tuple, error) {
	tr := extensions.Triggers{}
	var rest []starlark.Tuple
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		isTrigger := false
		for _, t := range triggerNames {
			if t == k {
				isTrigger = true
			}
		}
		if !isTrigger {
			rest = append(rest, kv)
			continue
		}
		switch v := kv[1].(type) {
		case starlark.Bool:
			tr[k] = bool(v)
		case starlark.Int:
			n, _ := v.Int64()
			tr[k] = int(n)
		case starlark.NoneType:
		default:
			return nil, nil, fmt.Errorf("%s: %s must be a bool or an int, got %s", name, k, v.Type())
		}
	}
	return tr, rest, nil
}

// Extension is a main-loop extension as a Starlark value.
type Extension struct {
	E  mainloop.Extension
	st *starlib.ObjectState // a script class's instance (script_classes.go)
	// subs are a CompositeExtension's sub_extensions as the script gave them
	subs []starlark.Value
}

func (e *Extension) String() string       { return "<" + mainloop.ExtensionName(e.E) + ">" }
func (e *Extension) Type() string         { return mainloop.ExtensionClass(e.E) }
func (e *Extension) Freeze()              {}
func (e *Extension) Truth() starlark.Bool { return true }

// newMainLoop makes MainLoop from its table's bound arguments
// (algorithms_table.go).
func newMainLoop(c *classCall) (starlark.Value, error) {
	// algorithm and data_stream may be None (a loop for extension tests,
	// Blocks' MainLoop(algorithm=None, data_stream=None)); run refuses it.
	thread := c.thread
	algV, streamV := c.Value("algorithm"), c.Value("data_stream")
	model, log, backend, exts := c.Value("model"), c.Value("log"), c.Value("log_backend"), c.Value("extensions")
	alg, stream, err := mainLoopParts(algV, streamV)
	if err != nil {
		return nil, err
	}
	var algorithm mainloop.Algorithm
	if alg != nil {
		algorithm = alg.Algorithm()
	} else if algV != starlark.None {
		algorithm = &scriptAlgorithm{thread: thread, obj: algV}
	}
	trainingLog, mirror, err := mainLoopLog(log) // log_script.go
	if err != nil {
		return nil, err
	}
	var logBackend mainloop.LogBackend
	switch backend {
	case starlark.None, starlark.String("python"):
	case starlark.String("sqlite"):
		p, err := starlib.WritePath(thread, sqliteDatabase())
		if err != nil {
			return nil, fmt.Errorf("MainLoop: log_backend=\"sqlite\": %w", err)
		}
		logBackend = &sqlitelog.Lazy{Path: p}
	default:
		return nil, fmt.Errorf("MainLoop: log_backend must be \"python\" or \"sqlite\", got %s", backend)
	}
	var es []mainloop.Extension
	if exts != starlark.None {
		it, ok := exts.(starlark.Iterable)
		if !ok {
			return nil, fmt.Errorf("MainLoop: extensions must be a list, got %s", exts.Type())
		}
		iter := it.Iterate()
		defer iter.Done()
		var x starlark.Value
		for i := 0; iter.Next(&x); i++ {
			e, ok := extensionOf(thread, x)
			if !ok {
				return nil, fmt.Errorf("MainLoop: extensions[%d] is %s, want an extension (or an object with a dispatch method)", i, x.Type())
			}
			es = append(es, e)
		}
	}
	var ds fuel.Stream
	if stream != nil {
		ds = stream.S
	}
	var mm *bricks.Model
	switch m := model.(type) {
	case starlark.NoneType:
	case *Model:
		mm = m.M
	default:
		return nil, fmt.Errorf("MainLoop: model must be a Model (blocks.model) or None, got %s", model.Type())
	}
	ml := mainloop.New(algorithm, ds, nil, trainingLog, es)
	if mirror != nil {
		ml.Mirror = mirror
	}
	if mm != nil {
		ml.Model = mm
	}
	ml.LogBackend = logBackend
	ml.Messages = &printWriter{thread: thread}
	// Blocks' config.profile: BLOCKS_PROFILE set to anything but "false"
	// (its bool_) prints the main loop's profile when run() returns.
	if v, ok := os.LookupEnv("BLOCKS_PROFILE"); ok && v != "" && strings.ToLower(v) != "false" {
		ml.ReportProfile = true
	}
	run.RecordConfig(thread, ml.Log) // the script's tunables (config_tunables.go)
	if err := addCommandLineCheckpoint(thread, ml); err != nil {
		return nil, fmt.Errorf("MainLoop: %w", err)
	}
	if alg != nil {
		if err := configureParallel(thread, alg, ml); err != nil {
			return nil, fmt.Errorf("MainLoop: %w", err)
		}
	}
	observeMainLoop(thread, ml)
	return &MainLoop{M: ml}, nil
}

// MainLoop is Blocks' MainLoop as a Starlark value.
type MainLoop struct {
	M  *mainloop.MainLoop
	st *starlib.ObjectState // a script subclass's instance (Blocks' MockMainLoop): mainLoopBase
}

func (m *MainLoop) String() string { return "<" + m.Type() + ">" }
func (m *MainLoop) Type() string {
	if m.st != nil {
		return m.st.Class.Name()
	}
	return "MainLoop"
}
func (m *MainLoop) Freeze()              {}
func (m *MainLoop) Truth() starlark.Bool { return true }
func (m *MainLoop) AttrNames() []string {
	return append([]string{"algorithm", "data_stream", "extensions", "log", "run", "status"}, mainLoopAttrNamesMore...)
}
func (m *MainLoop) Attr(name string) (starlark.Value, error) {
	v, err := m.attr(name)
	if v == nil && err == nil && m.st != nil {
		return starlib.ScriptGetattr(m, m.st, name) // a subclass's __getattr__
	}
	return v, err
}

func (m *MainLoop) attr(name string) (starlark.Value, error) {
	if m.st != nil {
		if v, found, err := starlib.ScriptAttr(m, m.st, name); found || err != nil {
			return v, err
		}
	}
	if m.M == nil {
		return nil, fmt.Errorf("%s.%s: the MainLoop is not made yet (its __init__ calls super(%s, self).__init__(...))", m.Type(), name, m.Type())
	}
	if v, ok, err := mainLoopAttrMore(m, name); ok {
		return v, err
	}
	switch name {
	case "log":
		return logFace(m.M), nil
	case "status":
		// Blocks' MainLoop.status is log.status, the same object:
		// main_loop.status["iterations_done"] += 1 sets it.
		return statusFace(m.M)
	case "extensions":
		return extensionList(m.M), nil
	case "run":
		return starlib.NewBuiltin("run", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			if m.M.Algorithm == nil || m.M.DataStream == nil {
				return nil, fmt.Errorf("run: this MainLoop has no algorithm or no data_stream (None): it cannot train")
			}
			if err := checkLogSavable(m.M); err != nil {
				return nil, err
			}
			err := run.MainLoop(thread, m.M)
			if c, ok := m.M.LogBackend.(io.Closer); ok {
				if cerr := c.Close(); err == nil && cerr != nil {
					err = cerr
				}
			}
			if err = nothingToTrain(thread, m.M, err); err != nil {
				return nil, err
			}
			return starlark.None, nil
		}).BindReceiver(m), nil
	}
	return nil, nil
}

func statusDict(s *mainloop.Status) *starlark.Dict {
	d := starlark.NewDict(8)
	for _, k := range s.Keys() {
		v, _ := s.Get(k)
		d.SetKey(starlark.String(k), goValue(v))
	}
	return d
}

// goValue converts a log value to Starlark.
func goValue(v any) starlark.Value {
	switch v := v.(type) {
	case nil:
		return starlark.None
	case *nd.Array:
		if v.Size() == 1 && v.NDim() == 0 {
			return starlib.NumberValue(v.DType(), v.Flat(0))
		}
		return starlib.FromArray(v)
	case float64:
		return starlark.Float(v)
	case float32:
		return starlark.Float(v)
	case int:
		return starlark.MakeInt(v)
	case int64:
		return starlark.MakeInt64(v)
	case bool:
		return starlark.Bool(v)
	case string:
		return starlark.String(v)
	case []int:
		l := make([]starlark.Value, len(v))
		for i, x := range v {
			l[i] = starlark.MakeInt(x)
		}
		return starlark.NewList(l)
	case []any:
		l := make([]starlark.Value, len(v))
		for i, x := range v {
			l[i] = goValue(x)
		}
		return starlark.NewList(l)
	case mainloop.Tuple:
		l := make(starlark.Tuple, len(v))
		for i, x := range v {
			l[i] = goValue(x)
		}
		return l
	case mainloop.Dict:
		d := starlark.NewDict(len(v.Keys))
		for i, k := range v.Keys {
			if err := d.SetKey(goValue(k), goValue(v.Values[i])); err != nil {
				// An unhashable key (a list kept as a key's text).
				_ = d.SetKey(starlark.String(fmt.Sprint(k)), goValue(v.Values[i]))
			}
		}
		return d
	case starlark.Value:
		return v
	}
	return starlark.String(fmt.Sprint(v))
}

// Log is the training log: log.current_row, log.status, log[i].
type Log struct {
	L  *mainloop.TrainingLog
	st *starlib.ObjectState // a script subclass's instance (log_script.go)
}

var _ starlark.Mapping = (*Log)(nil)

func (l *Log) String() string {
	if l.st != nil {
		if s, ok := starlib.ScriptRepr(l, l.st); ok {
			return s
		}
	}
	return fmt.Sprintf("<%s: %d rows>", l.Type(), l.L.Len())
}
func (l *Log) Type() string {
	if l.st != nil {
		return l.st.Class.Name()
	}
	return "TrainingLog"
}
func (l *Log) Freeze()              {}
func (l *Log) Truth() starlark.Bool { return true }
func (l *Log) Hash() (uint32, error) {
	if l.st != nil { // a script object: hashable by identity
		return starlark.String(fmt.Sprintf("%p", l)).Hash()
	}
	return 0, fmt.Errorf("unhashable: TrainingLog")
}
func (l *Log) AttrNames() []string {
	names := []string{"current_row", "last_epoch_row", "previous_row", "status"}
	if l.st != nil {
		names = append(names, starlib.ScriptAttrNames(l.st)...)
	}
	return names
}
func (l *Log) Attr(name string) (starlark.Value, error) {
	if l.st == nil {
		return l.baseAttr(name)
	}
	if v, found, err := starlib.ScriptAttr(l, l.st, name); found || err != nil {
		return v, err
	}
	if v, err := l.baseAttr(name); v != nil || err != nil {
		return v, err
	}
	return starlib.ScriptGetattr(l, l.st, name)
}

// baseAttr is the library's attribute name (a subclass's super).
func (l *Log) baseAttr(name string) (starlark.Value, error) {
	switch name {
	case "last_epoch_row":
		r, err := l.L.LastEpochRow()
		if err != nil {
			return nil, err
		}
		return &LogRow{R: r}, nil
	case "current_row":
		return &LogRow{R: l.L.CurrentRow()}, nil
	case "previous_row":
		r, err := l.L.PreviousRow()
		if err != nil {
			return nil, err
		}
		return rowDict(r), nil
	case "status":
		return &statusView{s: &l.L.Status}, nil
	}
	return nil, nil
}

// Get is log[i]: the row of iteration i (empty when nothing was
// recorded); a subclass's __getitem__ when it has one.
func (l *Log) Get(k starlark.Value) (starlark.Value, bool, error) {
	if l.st != nil {
		if fn, _, err := starlib.ScriptAttr(l, l.st, "__getitem__"); err != nil || fn != nil {
			if err != nil {
				return nil, false, err
			}
			v, err := starlark.Call(starlib.CallThread(l.st.Class.Thread(), l.Type()+".__getitem__"), fn, starlark.Tuple{k}, nil)
			return v, err == nil, err
		}
	}
	return l.baseGet(k)
}

func (l *Log) baseGet(k starlark.Value) (starlark.Value, bool, error) {
	var i int
	if err := starlark.AsInt(k, &i); err != nil {
		return nil, false, fmt.Errorf("log index must be an iteration number, got %s", k.Type())
	}
	if i < 0 {
		return nil, false, fmt.Errorf("log index must be a non-negative iteration number, got %d", i)
	}
	r, _ := l.L.Row(i) // Blocks' defaultdict: asking makes the row
	return &LogRow{R: r}, true, nil
}

func rowDict(r mainloop.Row) *starlark.Dict {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := starlark.NewDict(len(keys))
	for _, k := range keys {
		d.SetKey(starlark.String(k), goValue(r[k]))
	}
	return d
}

const mainLoopObserverKey = "blocks.mainLoopObserver"

// SetMainLoopObserver makes every MainLoop a script on thread creates be
// passed to observe, right after it is made (blocks-repl run --log uses it
// to find the logs to write and to attach a log backend).
func SetMainLoopObserver(thread *starlark.Thread, observe func(*mainloop.MainLoop)) {
	thread.SetLocal(mainLoopObserverKey, observe)
}

func observeMainLoop(thread *starlark.Thread, m *mainloop.MainLoop) {
	if f, ok := thread.Local(mainLoopObserverKey).(func(*mainloop.MainLoop)); ok && f != nil {
		f(m)
	}
}

// sqliteDatabase is Blocks' sqlite_database setting: BLOCKS_SQLITEDB, else
// ~/blocks_log.sqlite.
func sqliteDatabase() string {
	if p := os.Getenv("BLOCKS_SQLITEDB"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "blocks_log.sqlite"
	}
	return filepath.Join(home, "blocks_log.sqlite")
}

// ScriptState is a script subclass's state; nil for a MainLoop.
func (m *MainLoop) ScriptState() *starlib.ObjectState { return m.st }

// SetField sets an attribute of a script subclass's instance.
func (m *MainLoop) SetField(name string, v starlark.Value) error {
	if m.st == nil {
		return starlark.NoSuchAttrError(fmt.Sprintf("MainLoop has no settable attribute %s", name))
	}
	_, err := starlib.ScriptSetField(m, m.st, name, v, true)
	return err
}

// mainLoopBase is MainLoop as the base of a script class (Blocks'
// MockMainLoop): super(C, self).__init__(**kwargs) takes MainLoop's
// arguments and makes the loop; the instance goes wherever a MainLoop
// goes.
func mainLoopBase(t *classTable) *starlib.LibClass {
	return &starlib.LibClass{ClassName: "MainLoop",
		IsInst: func(v starlark.Value) bool { _, ok := v.(*MainLoop); return ok },
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			return &MainLoop{st: st}, nil
		},
		Init: func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
			v, err := t.call(thread, args, kwargs)
			if err != nil {
				return err
			}
			m := self.(*MainLoop)
			m.M = v.(*MainLoop).M
			m.M.Front = m // ext.main_loop, main_loop.extensions[i].main_loop: this instance
			return nil
		}}
}
