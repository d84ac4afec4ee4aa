package blocks

import (
	"errors"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/starlib"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// More of Blocks' extension and main-loop API, as Blocks' tests use it.
//
// Every extension:
//
//	ext.main_loop            the main loop (set by the loop when it runs; a script may
//	                         set it: ext.main_loop = main_loop)
//	ext.do(which_callback=None, *args)   runs the extension's work at once, whatever
//	                         its conditions (SimpleExtension-based extensions); other
//	                         extensions run their callback which_callback
//	ext.dispatch(callback_name, *from_main_loop)  runs the extension as the main loop
//	                         does at that callback (its conditions decide): the batch
//	                         of before_batch/after_batch (a dict of arrays), the error
//	                         message of on_error, none by default
//	ext.add_condition(callbacks_names, predicate=None, arguments=None)  returns ext
//	ext._conditions          [(callback_name, arguments), ...]
//
// CompositeExtension: sub_extensions.
// ProgressBar: get_iter_per_epoch() (None when the stream cannot tell).
// TrackTheBest: record_name, notification_name, best_name.
// Checkpoint, Load: path.
// blocks.extensions.monitoring.MonitoringExtension(prefix=None, suffix=None, **triggers):
// SEPARATOR, prefix, suffix, _record_name(name).
//
// MainLoop: algorithm, data_stream, iteration_state ((data_stream, epoch
// iterator) or None), _run_extensions(method_name, *args).

// monitoringExtension is Blocks' MonitoringExtension base class: a
// SimpleExtension with a prefix and a suffix for its record names.
type monitoringExtension struct {
	*extensions.SimpleExtension
	prefix, suffix string
}

// doNower is an extension built on SimpleExtension (DoNow is promoted).
type doNower interface {
	DoNow(cb mainloop.Callback, batch mainloop.Batch, args ...any) error
}

type conditionLister interface {
	Conditions() []extensions.Condition
}

func extensionAttrNamesMore(e *Extension) []string {
	names := []string{"main_loop", "do", "dispatch"}
	if _, ok := e.E.(conditionLister); ok {
		names = append(names, "_conditions")
	}
	switch e.E.(type) {
	case *extensions.CompositeExtension, *extensions.EarlyStopping:
		names = append(names, "sub_extensions")
	case *extensions.ProgressBar:
		names = append(names, "get_iter_per_epoch")
	case *extensions.TrackTheBest:
		names = append(names, "record_name", "notification_name", "best_name")
	case *checkpoint.CheckpointExtension, *checkpoint.LoadExtension:
		names = append(names, "path")
	case *monitoringExtension:
		names = append(names, "prefix", "suffix", "_record_name") // SEPARATOR: a class constant (extensionClassAttrs)
	}
	return names
}

// mainLoopOf is the extension's main loop, or Blocks' error.
func mainLoopOf(e *Extension) (*mainloop.MainLoop, error) {
	type loopGetter interface {
		MainLoop() (*mainloop.MainLoop, error)
	}
	g, ok := e.E.(loopGetter)
	if !ok {
		return nil, fmt.Errorf("%s has no main loop", mainloop.ExtensionName(e.E))
	}
	return g.MainLoop()
}

func extensionAttrMore(e *Extension, name string) (starlark.Value, bool, error) {
	switch name {
	case "main_loop":
		m, err := mainLoopOf(e)
		if err != nil {
			return nil, true, err
		}
		return mainLoopFace(m), true, nil
	case "do":
		return starlib.NewBuiltin("do", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(kwargs) > 0 {
				return nil, fmt.Errorf("do: unexpected keyword arguments")
			}
			cb := mainloop.Callback("")
			if len(args) > 0 && args[0] != starlark.None {
				s, ok := starlark.AsString(args[0])
				if !ok {
					return nil, fmt.Errorf("do: which_callback must be a callback name, got %s", args[0].Type())
				}
				cb = mainloop.Callback(s)
			}
			var rest []any
			var batch mainloop.Batch
			for _, a := range args[min(1, len(args)):] {
				rest = append(rest, a)
			}
			if d, ok := e.E.(doNower); ok {
				if err := e.withDuck(thread, func() error { return d.DoNow(cb, batch, rest...) }); err != nil {
					return nil, err
				}
				return starlark.None, nil
			}
			if !cb.Valid() {
				return nil, fmt.Errorf("do: %s runs its callbacks only: which_callback must be one of %v, got %q", mainloop.ExtensionName(e.E), mainloop.Callbacks, string(cb))
			}
			if err := e.withDuck(thread, func() error { return mainloop.Dispatch(e.E, cb, batch, nil) }); err != nil {
				return nil, err
			}
			return starlark.None, nil
		}).BindReceiver(e), true, nil
	case "dispatch":
		return starlib.NewBuiltin("dispatch", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var name string
			var from starlark.Value = starlark.None
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &name, &from); err != nil {
				return nil, fmt.Errorf("%w (dispatch(callback_invoked, *from_main_loop): the batch of before_batch and after_batch, the error of on_error)", err)
			}
			cb := mainloop.Callback(name)
			if !cb.Valid() {
				return nil, fmt.Errorf("dispatch: callback_invoked must be one of %v, got %q", mainloop.Callbacks, name)
			}
			batch, cause, err := fromMainLoop(cb, from, len(args) > 1)
			if err != nil {
				return nil, err
			}
			if err := e.withDuck(thread, func() error { return mainloop.Dispatch(e.E, cb, batch, cause) }); err != nil {
				return nil, err
			}
			return starlark.None, nil
		}).BindReceiver(e), true, nil
	case "_conditions":
		cl, ok := e.E.(conditionLister)
		if !ok {
			return nil, false, nil
		}
		var out []starlark.Value
		for _, c := range cl.Conditions() {
			cbName := string(c.Callback)
			if c.Trigger != "" {
				cbName = c.Trigger
			}
			var a []starlark.Value
			for _, x := range c.Args {
				if v, ok := x.(starlark.Value); ok {
					a = append(a, v)
				} else {
					a = append(a, goValue(x))
				}
			}
			out = append(out, starlark.Tuple{starlark.String(cbName), starlark.Tuple(a)})
		}
		return starlark.NewList(out), true, nil
	}
	switch x := e.E.(type) {
	case *extensions.EarlyStopping:
		if name == "sub_extensions" { // Blocks' EarlyStopping is a CompositeExtension
			var subs []starlark.Value
			for _, s := range x.SubExtensions {
				subs = append(subs, extensionValue(s))
			}
			return starlark.NewList(subs), true, nil
		}
	case *extensions.CompositeExtension:
		if name == "sub_extensions" {
			subs := e.subs
			if subs == nil {
				for _, s := range x.SubExtensions {
					subs = append(subs, extensionValue(s))
				}
			}
			return starlark.NewList(append([]starlark.Value(nil), subs...)), true, nil
		}
	case *extensions.ProgressBar:
		if name == "get_iter_per_epoch" {
			return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
					return nil, err
				}
				n, ok, err := x.IterPerEpoch()
				if err != nil {
					return nil, err
				}
				if !ok {
					return starlark.None, nil
				}
				return starlark.MakeInt(n), nil
			}).BindReceiver(e), true, nil
		}
	case *extensions.TrackTheBest:
		switch name {
		case "record_name":
			return starlark.String(x.RecordName), true, nil
		case "notification_name":
			return starlark.String(x.NotificationName), true, nil
		case "best_name":
			return starlark.String(x.BestName), true, nil
		}
	case *checkpoint.CheckpointExtension:
		if name == "path" {
			return starlark.String(x.Path), true, nil
		}
	case *checkpoint.LoadExtension:
		if name == "path" {
			return starlark.String(x.Path), true, nil
		}
	case *monitoringExtension:
		switch name {
		case "SEPARATOR":
			return starlark.String(extensions.Separator), true, nil
		case "prefix", "suffix":
			s := x.prefix
			if name == "suffix" {
				s = x.suffix
			}
			if s == "" {
				return starlark.None, true, nil
			}
			return starlark.String(s), true, nil
		case "_record_name":
			return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				var n starlark.Value
				if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &n); err != nil {
					return nil, err
				}
				s, ok := starlark.AsString(n)
				if !ok {
					return nil, fmt.Errorf("ValueError: record name must be a string")
				}
				return starlark.String(extensions.RecordName(x.prefix, s, x.suffix)), nil
			}).BindReceiver(e), true, nil
		}
	}
	return nil, false, nil
}

var _ starlark.HasSetField = (*Extension)(nil)

// SetField sets main_loop (Blocks' ext.main_loop = main_loop).
func (e *Extension) SetField(name string, v starlark.Value) error {
	if e.st != nil && name != "main_loop" {
		_, err := starlib.ScriptSetField(e, e.st, name, v, true)
		return err
	}
	if name != "main_loop" {
		return starlark.NoSuchAttrError(fmt.Sprintf("%s has no settable attribute %s", mainloop.ExtensionName(e.E), name))
	}
	return e.setMainLoop(v)
}

// mainLoopParts reads MainLoop's algorithm and data_stream, either of
// which may be None.
func mainLoopParts(algV, streamV starlark.Value) (*Algorithm, *starfuel.Stream, error) {
	var alg *Algorithm
	var stream *starfuel.Stream
	switch a := algV.(type) {
	case starlark.NoneType:
	case *Algorithm:
		alg = a
	default:
		if !isDuckAlgorithm(algV) { // else a script object: extensions_duck.go
			return nil, nil, fmt.Errorf("MainLoop: for parameter algorithm: got %s, want an algorithm (GradientDescent, UpdatesAlgorithm, an object with initialize() and process_batch(batch)) or None", algV.Type())
		}
	}
	switch s := streamV.(type) {
	case starlark.NoneType:
	case *starfuel.Stream:
		stream = s
	default:
		return nil, nil, fmt.Errorf("MainLoop: for parameter data_stream: got %s, want a data stream or None", streamV.Type())
	}
	return alg, stream, nil
}

var mainLoopAttrNamesMore = []string{"find_extension", "iteration_state", "model", "_run_extensions"}

func mainLoopAttrMore(m *MainLoop, name string) (starlark.Value, bool, error) {
	switch name {
	case "model":
		if mm, ok := m.M.Model.(*bricks.Model); ok {
			return &Model{M: mm, g: &ComputationGraph{G: mm.ComputationGraph}}, true, nil
		}
		return starlark.None, true, nil
	case "algorithm":
		switch a := m.M.Algorithm.(type) {
		case *algorithms.GradientDescent:
			return &Algorithm{GD: a}, true, nil
		case *algorithms.UpdatesAlgorithm:
			return &Algorithm{UA: a}, true, nil
		case *scriptAlgorithm:
			return a.obj, true, nil
		case nil:
			return starlark.None, true, nil
		}
		return nil, true, fmt.Errorf("algorithm: %T has no Starlark face", m.M.Algorithm)
	case "data_stream":
		if m.M.DataStream == nil {
			return starlark.None, true, nil
		}
		return &starfuel.Stream{S: m.M.DataStream, Name: "DataStream"}, true, nil
	case "find_extension":
		return starlib.NewBuiltin("find_extension", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var name string
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name); err != nil {
				return nil, err
			}
			e, err := m.M.FindExtension(name)
			if err != nil {
				return nil, fmt.Errorf("find_extension: %w", err)
			}
			return extensionValue(e), nil
		}).BindReceiver(m), true, nil
	case "iteration_state":
		it := m.M.EpochIterator()
		if m.M.DataStream == nil || it == nil {
			return starlark.None, true, nil
		}
		return starlark.Tuple{
			&starfuel.Stream{S: m.M.DataStream, Name: "DataStream"},
			&starfuel.EpochIterator{It: it, Sources: m.M.DataStream.Sources(), AsDict: true},
		}, true, nil
	case "_run_extensions":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var method string
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "method_name", &method); err != nil {
				return nil, err
			}
			if err := m.M.RunExtensions(mainloop.Callback(method), nil); err != nil {
				return nil, err
			}
			return starlark.None, nil
		}).BindReceiver(m), true, nil
	}
	return nil, false, nil
}

// fromMainLoop reads what the main loop gives a callback, as the script
// passes it to dispatch: the batch of before_batch and after_batch (a dict
// of arrays, or None), the error of on_error (its message, or None);
// the other callbacks take nothing.
func fromMainLoop(cb mainloop.Callback, v starlark.Value, given bool) (mainloop.Batch, error, error) {
	switch {
	case !given || v == starlark.None:
		return nil, nil, nil
	case cb == mainloop.BeforeBatch || cb == mainloop.AfterBatch:
		d, ok := v.(starlark.IterableMapping)
		if !ok {
			return nil, nil, fmt.Errorf("dispatch: the batch of %s is a dict of arrays (a source's name to its array), got %s", cb, v.Type())
		}
		batch := mainloop.Batch{}
		for _, kv := range d.Items() {
			k, ok := starlark.AsString(kv[0])
			if !ok {
				return nil, nil, fmt.Errorf("dispatch: the batch's keys are source names, got %s", kv[0].Type())
			}
			a, err := starlib.ToArray(kv[1], nil)
			if err != nil {
				return nil, nil, fmt.Errorf("dispatch: the batch's %q: %w", k, err)
			}
			batch[k] = a
		}
		return batch, nil, nil
	case cb == mainloop.OnError:
		s, ok := starlark.AsString(v)
		if !ok {
			s = v.String()
		}
		return nil, errors.New(s), nil
	}
	return nil, nil, fmt.Errorf("dispatch: the main loop gives %s nothing, got %s", cb, v.Type())
}
