package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Blocks' extensions as tables (classtable.go). Every one takes
// Blocks' trigger keywords (after_batch=True, every_n_epochs=2, ...)
// through **kwargs; the table's parameters are its own.
func extensionsTableModules() (mods []*starlarkstruct.Module) {
	ext := registerClasses(false, extensionTables("blocks.extensions")...)
	extensionBases(ext) // SimpleExtension, TrainingExtension and CompositeExtension as bases of script classes: script_classes.go
	withClassAttrs(ext)
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.extensions", Members: ext})
	for _, m := range []string{"blocks.extensions.monitoring", "blocks.extensions.training", "blocks.extensions.stopping",
		"blocks.extensions.saveload", "blocks.extensions.predicates"} {
		members := registerClasses(false, extensionTables(m)...)
		withClassAttrs(members)
		mods = append(mods, &starlarkstruct.Module{Name: m, Members: members})
	}
	return
}

// extensionTables are the tables of one module.
func extensionTables(module string) []*classTable {
	var out []*classTable
	for _, t := range allExtensionTables {
		if t.Module == module {
			out = append(out, t)
		}
	}
	return out
}

// extension is an extension table: its Go constructor gets the bound
// arguments, the triggers among them.
func extension(module, name, doc string, p []classParam, make func(c *classCall) (mainloop.Extension, error)) *classTable {
	return &classTable{Module: module, Name: name, Doc: doc, Params: p, Triggers: true,
		New: func(c *classCall) (starlark.Value, error) {
			e, err := make(c)
			if err != nil {
				return nil, err
			}
			return &Extension{E: e}, nil
		}}
}

func typed(name, def string, k argKind) classParam {
	return classParam{Name: name, Default: def, Kind: k}
}

var allExtensionTables = []*classTable{
	{Module: "blocks.extensions", Name: "SimpleExtension", Doc: "a script's extension: do(main_loop, which_callback, *args)",
		Params: ps(typed("do", "", argCallable), typed("name", "'SimpleExtension'", argString)), Triggers: true,
		New: func(c *classCall) (starlark.Value, error) {
			thread, do := c.thread, c.Value("do").(starlark.Callable)
			ext, err := extensions.NewSimpleExtension(c.String("name"), func(call extensions.Call) error {
				a := append(starlark.Tuple{mainLoopFace(call.MainLoop), starlark.String(call.Callback)}, callArgs(call)...)
				if _, err := starlark.Call(thread, do, a, nil); err != nil {
					return scriptError(err)
				}
				return nil
			}, c.Triggers)
			if err != nil {
				return nil, err
			}
			return &Extension{E: scriptExtension{ext}}, nil
		}},
	extension("blocks.extensions", "FinishAfter", "stops training after the given number of epochs or batches", nil,
		func(c *classCall) (mainloop.Extension, error) { return extensions.NewFinishAfter(c.Triggers) }),
	extension("blocks.extensions", "Printing", "prints the log (before the first epoch, after each epoch, at the end)",
		ps(classParam{Name: "one_line", Default: "False", Keyword: true, Kind: argBool}),
		func(c *classCall) (mainloop.Extension, error) {
			p, err := extensions.NewPrinting(&printWriter{thread: c.thread}, c.Triggers)
			if err != nil {
				return nil, err
			}
			p.OneLine = c.Bool("one_line")
			return p, nil
		}),
	extension("blocks.extensions", "Timing", "records the time spent reading data and training", ps(typed("prefix", "''", argString)),
		func(c *classCall) (mainloop.Extension, error) {
			return extensions.NewTiming(c.String("prefix"), c.Triggers)
		}),
	extension("blocks.extensions", "ProgressBar", "a live bar on a terminal (stderr), plain lines otherwise", nil,
		func(c *classCall) (mainloop.Extension, error) {
			w, terminal := progressOut(c.thread)
			pb := extensions.NewProgressBar(w)
			pb.Terminal = &terminal
			return pb, nil
		}),
	extension("blocks.extensions", "Timestamp", "records the time of day in log_record",
		ps(typed("log_record", "DEFAULT_LOG_RECORD", argString), typed("separator", "' '", argString)),
		func(c *classCall) (mainloop.Extension, error) {
			return extensions.NewTimestamp(c.String("log_record"), c.String("separator"), c.Triggers)
		}),
	{Module: "blocks.extensions", Name: "CompositeExtension", Doc: "runs sub-extensions under its own conditions",
		Params: ps(typed("sub_extensions", "", argList), typed("run_before_children", "True", argBool)), Triggers: true,
		New: func(c *classCall) (starlark.Value, error) {
			es, items, err := compositeSubs(c.thread, "CompositeExtension", c.Value("sub_extensions"))
			if err != nil {
				return nil, err
			}
			ext, err := extensions.NewCompositeExtension("CompositeExtension", es, c.Bool("run_before_children"), nil, c.Triggers)
			if err != nil {
				return nil, err
			}
			return &Extension{E: ext, subs: items}, nil
		}},
	extension("blocks.extensions.monitoring", "MonitoringExtension", "a base for monitoring: a prefix and a suffix for its record names",
		ps(typed("prefix", "None", argString), typed("suffix", "None", argString)),
		func(c *classCall) (mainloop.Extension, error) {
			se, err := extensions.NewSimpleExtension("MonitoringExtension", nil, c.Triggers)
			if err != nil {
				return nil, fmt.Errorf("MonitoringExtension: %w", err)
			}
			return &monitoringExtension{SimpleExtension: se, prefix: c.String("prefix"), suffix: c.String("suffix")}, nil
		}),
	extension("blocks.extensions.monitoring", "DataStreamMonitoring", "evaluates variables over an epoch of data_stream",
		ps(req("variables"), typed("data_stream", "", argAny), opt("updates", "None"),
			classParam{Name: "prefix", Default: "None", Keyword: true, Kind: argString}, classParam{Name: "suffix", Default: "None", Keyword: true, Kind: argString}),
		func(c *classCall) (mainloop.Extension, error) {
			const name = "DataStreamMonitoring"
			vs, err := monitoredVariablesOf(c.thread, name+": variables", c.Value("variables"))
			if err != nil {
				return nil, err
			}
			stream, ok := c.Value("data_stream").(*starfuel.Stream)
			if !ok {
				return nil, fmt.Errorf("%s: for parameter data_stream: got %s, want a data stream", name, c.Value("data_stream").Type())
			}
			var us []core.Update
			if !c.IsNone("updates") {
				if us, err = updatesOf(c.thread, c.Value("updates")); err != nil {
					return nil, fmt.Errorf("%s: updates: %v", name, err)
				}
			}
			return extensions.NewDataStreamMonitoring(starlib.Device(c.thread), vs, stream.S, us, c.String("prefix"), c.String("suffix"), c.Triggers)
		}),
	extension("blocks.extensions.monitoring", "TrainingDataMonitoring", "aggregates variables over the training batches",
		ps(req("variables"), classParam{Name: "prefix", Default: "None", Keyword: true, Kind: argString}, classParam{Name: "suffix", Default: "None", Keyword: true, Kind: argString}),
		func(c *classCall) (mainloop.Extension, error) {
			vs, err := monitoredVariablesOf(c.thread, "TrainingDataMonitoring: variables", c.Value("variables"))
			if err != nil {
				return nil, err
			}
			return extensions.NewTrainingDataMonitoring(starlib.Device(c.thread), vs, c.String("prefix"), c.String("suffix"), c.Triggers)
		}),
	extension("blocks.extensions.training", "TrackTheBest", "status[\"best_\" + record_name]; notification_name = True at a new best",
		ps(typed("record_name", "", argString), typed("notification_name", "None", argString), opt("choose_best", "min")),
		func(c *classCall) (mainloop.Extension, error) {
			cb, err := chooseBestOf(c.thread, c.Value("choose_best"))
			if err != nil {
				return nil, fmt.Errorf("TrackTheBest: %v", err)
			}
			return extensions.NewTrackTheBest(c.String("record_name"), c.String("notification_name"), cb, c.Triggers)
		}),
	extension("blocks.extensions.training", "SharedVariableModifier", "parameter.set_value(function(iterations_done[, old_value])) after each batch",
		ps(typed("parameter", "", argVariable), typed("function", "", argCallable), typed("num_args", "None", argInt)),
		func(c *classCall) (mainloop.Extension, error) {
			param := c.Value("parameter").(*starlib.Variable)
			fn := c.Value("function").(starlark.Callable)
			n := c.Int("num_args")
			if c.IsNone("num_args") {
				if f, ok := fn.(*starlark.Function); ok {
					n = f.NumParams()
				} else {
					n = 1
				}
			}
			thread, dt := c.thread, param.V.DType()
			return extensions.NewSharedVariableModifier(param.V, func(it int, old *nd.Array) (*nd.Array, error) {
				a := starlark.Tuple{starlark.MakeInt(it)}
				if old != nil {
					a = append(a, goValue(old))
				}
				r, err := starlark.Call(thread, fn, a, nil)
				if err != nil {
					return nil, scriptError(err)
				}
				v, err := starlib.ToArray(r, &dt)
				if err != nil {
					return nil, fmt.Errorf("the function returned %s: %v", r.Type(), err)
				}
				return v, nil
			}, n, c.Triggers)
		}),
	extension("blocks.extensions.stopping", "FinishIfNoImprovementAfter", "stops when notification_name has not been logged for iterations or epochs",
		ps(typed("notification_name", "", argString), opt("iterations", "None"), opt("epochs", "None"), typed("patience_log_record", "None", argString)),
		func(c *classCall) (mainloop.Extension, error) {
			const name = "FinishIfNoImprovementAfter"
			ni, ne, err := patience(c, name)
			if err != nil {
				return nil, err
			}
			return extensions.NewFinishIfNoImprovementAfter(c.String("notification_name"), ni, ne, c.String("patience_log_record"), c.Triggers)
		}),
	extension("blocks.extensions.stopping", "EarlyStopping", "TrackTheBest and FinishIfNoImprovementAfter, with an optional checkpoint of the best",
		ps(typed("record_name", "", argString), opt("checkpoint_extension", "None"), typed("checkpoint_filename", "None", argString),
			typed("notification_name", "None", argString), opt("choose_best", "min"), opt("iterations", "None"), opt("epochs", "None")),
		func(c *classCall) (mainloop.Extension, error) {
			const name = "EarlyStopping"
			ni, ne, err := patience(c, name)
			if err != nil {
				return nil, err
			}
			cb, err := chooseBestOf(c.thread, c.Value("choose_best"))
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			var ck mainloop.Extension
			switch e := c.Value("checkpoint_extension").(type) {
			case starlark.NoneType:
			case *Extension:
				ck = e.E
			default:
				// a script object with add_condition (and dispatch, to run
				// as a child): Blocks' Mock checkpoint
				if m, err := optAttr(e, "add_condition"); err != nil || m == nil {
					return nil, fmt.Errorf("%s: for parameter checkpoint_extension: got %s, want an extension (or an object with add_condition and dispatch)", name, e.Type())
				}
				s := scriptExtensionOf(c.thread, e)
				notification := c.String("notification_name")
				if c.IsNone("notification_name") {
					notification = c.String("record_name") + "_best_so_far"
				}
				s.pred = &Predicate{name: fmt.Sprintf("OnLogRecord(%q)", notification), record: notification, P: extensions.OnLogRecord(notification)}
				ck = s
			}
			return extensions.NewEarlyStopping(c.String("record_name"), ck, c.String("checkpoint_filename"), c.String("notification_name"), cb, ni, ne, c.Triggers)
		}),
	extension("blocks.extensions.saveload", "Checkpoint", "saves the checkpoint (script, parameters, state, log) to path, atomically",
		ps(classParam{Name: "path", Lazy: true, Kind: argString}, opt("parameters", "None"), opt("save_separately", "None"),
			typed("save_main_loop", "True", argBool), typed("use_cpickle", "False", argBool),
			classParam{Name: "keep_last", Default: "1", Keyword: true, Kind: argInt}),
		func(c *classCall) (mainloop.Extension, error) { return newCheckpointExtension(c) }),
	extension("blocks.extensions.saveload", "Load", "loads a checkpoint's parameters (and optionally its state and log) before training",
		ps(typed("path", "", argString), typed("load_iteration_state", "False", argBool), typed("load_log", "False", argBool)),
		func(c *classCall) (mainloop.Extension, error) {
			path := c.String("path")
			if err := starlib.CheckRead(c.thread, path); err != nil {
				return nil, fmt.Errorf("Load: %w", err)
			}
			return checkpoint.NewLoadExtension(path, c.Bool("load_iteration_state"), c.Bool("load_log"), checkpoint.Bindings{Namer: parameterPath, RandomStreams: runStreams(c.thread)}, c.Triggers)
		}),
	{Module: "blocks.extensions.predicates", Name: "OnLogRecord", Doc: "a condition: true when the current row holds record_name",
		Params: ps(typed("record_name", "", argString)),
		New: func(c *classCall) (starlark.Value, error) {
			name := c.String("record_name")
			return &Predicate{name: fmt.Sprintf("OnLogRecord(%q)", name), record: name, P: extensions.OnLogRecord(name)}, nil
		}},
}

// patience reads the iterations and epochs of the stopping extensions.
func patience(c *classCall, name string) (iterations, epochs int, err error) {
	if iterations, err = trnPositiveInt(name+": iterations", c.Value("iterations")); err != nil {
		return 0, 0, err
	}
	epochs, err = trnPositiveInt(name+": epochs", c.Value("epochs"))
	return iterations, epochs, err
}

// Blocks' class-level constants of its extension classes (the
// reference's class_constants): every SimpleExtension subclass has
// BOOLEAN_TRIGGERS and INTEGER_TRIGGERS (frozensets: frozen sets here),
// Timestamp DEFAULT_LOG_RECORD, MonitoringExtension and its subclasses
// SEPARATOR. They are read on the classes, on their instances, and on
// script subclasses, whose own class attribute of the same name overrides
// them (the library's constructors keep Blocks' values).

// parseArgs is SimpleExtension.parse_args(which_callback, args), Blocks'
// static method that splits do's arguments into those from the main loop
// (the batch of before_batch and after_batch) and the user's.
func parseArgs(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var which string
	var iterable starlark.Iterable
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &which, &iterable); err != nil {
		return nil, err
	}
	var all starlark.Tuple
	it := iterable.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		all = append(all, x)
	}
	if which == "after_batch" || which == "before_batch" {
		if len(all) == 0 {
			return nil, fmt.Errorf("%s: %s passes the batch first, got no arguments", b.Name(), which)
		}
		return starlark.Tuple{all[:1], all[1:]}, nil
	}
	return starlark.Tuple{starlark.Tuple{}, all}, nil
}

// extensionClassAttrs are the class constants of the extension class
// named class; nil when it has none.
func extensionClassAttrs(class string) starlark.StringDict {
	simple := class == "SimpleExtension"
	for _, t := range allExtensionTables {
		if t.Name == class && t.Triggers {
			simple = true
		}
	}
	if !simple {
		return nil
	}
	frozenSet := func(names []string) *starlark.Set {
		s := starlark.NewSet(len(names))
		for _, n := range names {
			_ = s.Insert(starlark.String(n))
		}
		s.Freeze()
		return s
	}
	booleans := []string{"before_training", "before_first_epoch", "before_epoch", "before_batch",
		"on_resumption", "on_interrupt", "on_error", "after_epoch", "after_batch", "after_training"}
	integers := []string{"after_n_epochs", "after_n_batches", "every_n_epochs", "every_n_batches"}
	out := starlark.StringDict{"BOOLEAN_TRIGGERS": frozenSet(booleans), "INTEGER_TRIGGERS": frozenSet(integers),
		"parse_args": starlark.NewBuiltin("parse_args", parseArgs)}
	switch class {
	case "Timestamp":
		out["DEFAULT_LOG_RECORD"] = defaultEnv["DEFAULT_LOG_RECORD"]
	case "MonitoringExtension", "DataStreamMonitoring", "TrainingDataMonitoring":
		out["SEPARATOR"] = starlark.String(extensions.Separator)
	}
	return out
}

// withClassAttrs gives each extension class among members its class
// constants: a library base (LibClass) takes them as Attrs, a builtin
// constructor becomes a ClassBuiltin.
func withClassAttrs(members starlark.StringDict) {
	for name, v := range members {
		attrs := extensionClassAttrs(name)
		if attrs == nil {
			continue
		}
		switch c := v.(type) {
		case *starlib.LibClass:
			c.Attrs = attrs
		case *starlib.CallableLibClass:
			c.Attrs = attrs
		case *starlark.Builtin:
			members[name] = &starlib.ClassBuiltin{Builtin: c, Attrs: attrs}
		}
	}
}
