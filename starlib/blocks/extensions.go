package blocks

import (
	"errors"
	"fmt"
	"io"
	"os"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/internal/tty"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// More of blocks.extensions, and blocks.extensions.training,
// blocks.extensions.stopping and blocks.extensions.predicates:
//
// blocks.extensions:
//
//	SimpleExtension(do, name="SimpleExtension", **triggers)
//	    a user extension: do(main_loop, which_callback, *args) runs in the callbacks whose
//	    triggers hold; args are the batch (a dict) for before_batch/after_batch, the error
//	    message for on_error, then the condition's arguments. It reads main_loop.log and may
//	    request a stop: main_loop.log.current_row["training_finish_requested"] = True.
//	Timestamp(log_record="timestamp", separator=" ")
//	CompositeExtension(sub_extensions, run_before_children=True, **triggers)
//	ext.add_condition(callbacks, predicate=None, arguments=None)
//	    also run when predicate(log) holds in each of callbacks ("after_batch", ...)
//
// blocks.extensions.training:
//
//	TrackTheBest(record_name, notification_name=None, choose_best=min)
//	    status["best_" + record_name]; log record notification_name = True at a new best
//	SharedVariableModifier(parameter, function, num_args=None)   (after_batch)
//	    parameter.set_value(function(iterations_done[, old_value])): schedules
//
// blocks.extensions.stopping:
//
//	FinishIfNoImprovementAfter(notification_name, iterations=None, epochs=None,
//	                           patience_log_record=None)
//	EarlyStopping(record_name, checkpoint_extension=None, checkpoint_filename=None,
//	              notification_name=None, choose_best=min, iterations=None, epochs=None)
//
// blocks.extensions.predicates:
//
//	OnLogRecord(record_name)   true when the current row holds record_name
func extensionsModules() (mods []*starlarkstruct.Module) {
	// The extensions and OnLogRecord are tables (extensions_table.go).
	for _, m := range []string{"blocks.extensions.training", "blocks.extensions.stopping", "blocks.extensions.predicates"} {
		mods = append(mods, &starlarkstruct.Module{Name: m, Members: starlark.StringDict{}})
	}
	return
}

// Predicate is a Go predicate on the log as a Starlark callable. An
// OnLogRecord's has its record_name, and two are equal when they check the
// same record (Blocks' OnLogRecord.__eq__).
type Predicate struct {
	name   string
	record string // OnLogRecord's record_name
	P      extensions.Predicate
}

var (
	_ starlark.Callable   = (*Predicate)(nil)
	_ starlark.HasAttrs   = (*Predicate)(nil)
	_ starlark.Comparable = (*Predicate)(nil)
)

// CompareSameType: OnLogRecords of one record are equal; another
// predicate only to itself.
func (p *Predicate) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	q := y.(*Predicate)
	return compareIdentity(op, p == q || (p.record != "" && p.record == q.record))
}

// Attr is record_name (OnLogRecord's).
func (p *Predicate) Attr(name string) (starlark.Value, error) {
	if name == "record_name" && p.record != "" {
		return starlark.String(p.record), nil
	}
	return nil, nil
}

// AttrNames lists record_name for an OnLogRecord.
func (p *Predicate) AttrNames() []string {
	if p.record != "" {
		return []string{"record_name"}
	}
	return nil
}

func (p *Predicate) String() string        { return p.name }
func (p *Predicate) Type() string          { return "predicate" }
func (p *Predicate) Freeze()               {}
func (p *Predicate) Truth() starlark.Bool  { return true }
func (p *Predicate) Hash() (uint32, error) { return starlark.String(p.name).Hash() }
func (p *Predicate) Name() string          { return p.name }

// CallInternal is predicate(log).
func (p *Predicate) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var l *Log
	if err := starlark.UnpackPositionalArgs(p.name, args, kwargs, 1, &l); err != nil {
		return nil, err
	}
	return starlark.Bool(p.P(l.L)), nil
}

// scriptError turns an error from a Starlark call into one that carries
// the script's backtrace (file:line of each frame).
func scriptError(err error) error {
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		return errors.New(ee.Backtrace())
	}
	return err
}

// predicateOf converts a Starlark predicate (OnLogRecord, or any callable
// taking the log) to a Go one. An error inside a Starlark predicate makes
// it false and is printed as a warning with the script's backtrace.
func predicateOf(thread *starlark.Thread, v starlark.Value) (extensions.Predicate, error) {
	switch p := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case *Predicate:
		return p.P, nil
	case starlark.Callable:
		return func(l *mainloop.TrainingLog) bool {
			r, err := starlark.Call(thread, p, starlark.Tuple{&Log{L: l}}, nil)
			if err != nil {
				thread.Print(thread, "WARNING: predicate "+p.Name()+" failed: "+scriptError(err).Error())
				return false
			}
			return bool(r.Truth())
		}, nil
	}
	return nil, fmt.Errorf("predicate must be callable (e.g. OnLogRecord), got %s", v.Type())
}

// callArgs are the Starlark arguments of a callback: the batch, the
// error, then the condition's arguments.
func callArgs(c extensions.Call) starlark.Tuple {
	var out starlark.Tuple
	if c.Batch != nil {
		d := starlark.NewDict(len(c.Batch))
		for k, a := range c.Batch {
			_ = d.SetKey(starlark.String(k), starlib.FromArray(a))
		}
		out = append(out, d)
	}
	if c.Err != nil {
		out = append(out, starlark.String(c.Err.Error()))
	}
	for _, a := range c.Args {
		if v, ok := a.(starlark.Value); ok {
			out = append(out, v)
		} else {
			out = append(out, goValue(a))
		}
	}
	return out
}

// scriptExtension is a SimpleExtension whose do is the script's: it may
// request the end of training, so a main loop that has one always runs
// (mainloop.Finisher).
type scriptExtension struct{ *extensions.SimpleExtension }

// FinishPending is always true.
func (scriptExtension) FinishPending(*mainloop.TrainingLog) bool { return true }

// chooseBestOf reads choose_best: min, max or a callable returning the
// better of (current, best).
func chooseBestOf(thread *starlark.Thread, v starlark.Value) (extensions.ChooseBest, error) {
	switch f := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case *starlark.Builtin:
		switch f.Name() {
		case "min":
			return extensions.ChooseMin, nil
		case "max":
			return extensions.ChooseMax, nil
		}
	}
	f, ok := v.(starlark.Callable)
	if !ok {
		return nil, fmt.Errorf("choose_best must be min, max or a function, got %s", v.Type())
	}
	return func(current, best any) (bool, error) {
		c, b := goValue(current), goValue(best)
		r, err := starlark.Call(thread, f, starlark.Tuple{c, b}, nil)
		if err != nil {
			return false, scriptError(err)
		}
		same, err := starlark.Equal(r, c)
		if err != nil {
			return false, err
		}
		diff, err := starlark.Equal(c, b)
		return same && !diff, err
	}, nil
}

func trnPositiveInt(what string, v starlark.Value) (int, error) {
	if v == starlark.None {
		return 0, nil
	}
	var n int
	if err := starlark.AsInt(v, &n); err != nil || n <= 0 {
		return 0, fmt.Errorf("%s must be a positive int or None, got %s", what, v)
	}
	return n, nil
}

// Extension attributes: name, add_condition, and those of
// extensionAttrMore.
func (e *Extension) AttrNames() []string {
	names := append([]string{"add_condition", "name"}, extensionAttrNamesMore(e)...)
	if e.st == nil {
		names = append(names, extensionClassAttrs(mainloop.ExtensionClass(e.E)).Keys()...)
	}
	return names
}

// Attr returns an attribute.
func (e *Extension) Attr(name string) (starlark.Value, error) {
	v, err := e.attr(name)
	if v == nil && err == nil && e.st != nil {
		return starlib.ScriptGetattr(e, e.st, name) // a subclass's __getattr__
	}
	return v, err
}

func (e *Extension) attr(name string) (starlark.Value, error) {
	if e.st != nil {
		if v, found, err := starlib.ScriptAttr(e, e.st, name); found || err != nil {
			return v, err
		}
	}
	if v, ok, err := extensionAttrMore(e, name); ok {
		return v, err
	}
	if v, ok := extensionClassAttrs(mainloop.ExtensionClass(e.E))[name]; ok && e.st == nil {
		return v, nil // a class constant (a script subclass's come through ScriptAttr)
	}
	switch name {
	case "name":
		return starlark.String(mainloop.ExtensionName(e.E)), nil
	case "add_condition":
		ca, ok := e.E.(extensions.ConditionAdder)
		if !ok {
			return nil, nil
		}
		return starlib.NewBuiltin("add_condition", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var cbs starlark.Value
			var pred, arguments starlark.Value = starlark.None, starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "callbacks_names", &cbs, "predicate?", &pred, "arguments?", &arguments); err != nil {
				return nil, err
			}
			var callbacks []mainloop.Callback
			var it starlark.Iterable
			switch c := cbs.(type) {
			case *starlark.List:
				it = c
			case starlark.Tuple:
				it = c
			default:
				return nil, fmt.Errorf("ValueError: callbacks_names must be list or tuple., got %s", cbs.Type())
			}
			names, elem, ok := starlib.Strings(it)
			if !ok {
				return nil, fmt.Errorf("add_condition: callback names are strings, got %s", elem.Type())
			}
			for _, s := range names {
				callbacks = append(callbacks, mainloop.Callback(s))
			}
			p, err := predicateOf(thread, pred)
			if err != nil {
				return nil, fmt.Errorf("add_condition: %v", err)
			}
			var extra []any
			if arguments != starlark.None {
				ai, ok := arguments.(starlark.Iterable)
				if !ok {
					return nil, fmt.Errorf("add_condition: arguments must be a tuple or list, got %s", arguments.Type())
				}
				it := ai.Iterate()
				defer it.Done()
				var x starlark.Value
				for it.Next(&x) {
					if s, ok := x.(starlark.String); ok {
						extra = append(extra, string(s)) // Checkpoint's path
					} else {
						extra = append(extra, x)
					}
				}
			}
			if err := ca.AddCondition(callbacks, p, extra...); err != nil {
				return nil, err
			}
			return e, nil // Blocks returns the extension (chaining)
		}).BindReceiver(e), nil
	}
	return nil, nil
}

// progressOut is where a ProgressBar made by a script draws: standard
// error, as Blocks' (progressbar2 writes to sys.stderr): a live bar when it
// is a terminal, plain lines otherwise. The script's output (its print,
// Printing) stays as it is with or without a bar.
func progressOut(thread *starlark.Thread) (w io.Writer, terminal bool) {
	return os.Stderr, tty.Is(os.Stderr)
}
