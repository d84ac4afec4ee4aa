package blocks

import (
	"fmt"
	"reflect"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Duck typing where Blocks takes an object by its methods: a script
// object (a plain `object` subclass, as Blocks' tests write their mocks)
// may stand for
//
//   - an extension's main loop: ext.main_loop = obj. The library's
//     extensions are Go code working on a Go main loop, so the extension
//     is given a loop of its own (the shadow, whose Front is obj), and
//     each ext.do(...) or ext.dispatch(...) the script makes copies
//     obj.log.status (else obj.status) and obj.log.current_row into the
//     shadow's log before the call and writes back after it the entries
//     the call changed; obj.algorithm, obj.data_stream and obj.extensions
//     go to the shadow where they are the library's. An object without a
//     log (or a status) reads as an empty one; an extension writing to it
//     is an error naming the record. ext.main_loop is obj, also in a
//     script extension's do and SimpleExtension(do)'s argument;
//   - a MainLoop's algorithm: MainLoop(algorithm=obj) calls
//     obj.initialize() once, then obj.process_batch(batch) with each batch
//     (a dict of arrays), Blocks' TrainingAlgorithm protocol;
//     main_loop.algorithm is obj;
//   - a CompositeExtension's sub-extension (and an extension of a
//     MainLoop): each callback calls obj.dispatch(callback_name, *args)
//     (the batch of before_batch/after_batch, None when the script
//     dispatched it without one; on_error's message), and giving the
//     composite a main loop sets obj.main_loop, as Blocks' does.

// duckLoop is a script object standing for an extension's main loop and
// the shadow loop the extension works on (whose Front is obj).
type duckLoop struct {
	obj    starlark.Value
	shadow *mainloop.MainLoop
}

// setMainLoop is ext.main_loop = v: a MainLoop, or any object (a duck).
// A CompositeExtension gives it to its children: a script object among
// them gets main_loop = v, as Blocks' main_loop setter gives it.
func (e *Extension) setMainLoop(v starlark.Value) error {
	if m, ok := v.(*MainLoop); ok {
		if m.M == nil {
			return fmt.Errorf("main_loop: the %s is not made yet (its __init__ calls super(%s, self).__init__(...))", m.Type(), m.Type())
		}
		e.E.SetMainLoop(m.M)
		return nil
	}
	shadow := mainloop.New(nil, nil, nil, nil, nil)
	shadow.Front = v
	e.E.SetMainLoop(shadow)
	return nil
}

// setMainLoopAttr is obj.main_loop = v.
func setMainLoopAttr(obj, v starlark.Value) error {
	sf, ok := obj.(starlark.HasSetField)
	if !ok {
		return fmt.Errorf("cannot set main_loop of %s", obj.Type())
	}
	return sf.SetField("main_loop", v)
}

// mainLoopFace is the main loop as the script sees it: what stands for
// it (a duck, a MainLoop subclass's instance), else its face.
func mainLoopFace(m *mainloop.MainLoop) starlark.Value {
	if v, ok := m.Front.(starlark.Value); ok && v != nil {
		return v
	}
	return &MainLoop{M: m}
}

// duckOf is the duck e's main loop stands for; nil when e's loop is a
// MainLoop (or e has none).
func (e *Extension) duckOf() *duckLoop {
	m, err := mainLoopOf(e)
	if err != nil {
		return nil
	}
	v, ok := m.Front.(starlark.Value)
	if !ok || v == nil {
		return nil
	}
	if _, isLoop := v.(*MainLoop); isLoop {
		return nil
	}
	return &duckLoop{obj: v, shadow: m}
}

// withDuck runs fn, the script's ext.do or ext.dispatch; with a duck
// main loop, its log is copied into the shadow's first and the changes
// copied back after.
func (e *Extension) withDuck(thread *starlark.Thread, fn func() error) error {
	d := e.duckOf()
	if d == nil {
		return fn()
	}
	log, err := d.syncIn(thread)
	if err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	return log.Push(d.shadow.Log)
}

// duckAttr is obj.name; an error when obj has no such attribute.
func duckAttr(obj starlark.Value, what, name string) (starlark.Value, error) {
	v, err := optAttr(obj, name)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", what, name, err)
	}
	if v == nil {
		return nil, fmt.Errorf("%s.%s: %s has no attribute %s (the extension reads %s.%s)", what, name, obj.Type(), name, what, name)
	}
	return v, nil
}

// optAttr is obj.name, nil when obj has none.
func optAttr(obj starlark.Value, name string) (starlark.Value, error) {
	h, ok := obj.(starlark.HasAttrs)
	if !ok {
		return nil, nil
	}
	v, err := h.Attr(name)
	if _, missing := err.(starlark.NoSuchAttrError); missing {
		return nil, nil
	}
	return v, err
}

// duckLogOf is the log of the duck main loop obj: obj.log.status (else
// obj.status) and obj.log.current_row. An object without a log (or a
// status) reads as an empty one; an extension writing to it is an error
// naming the record.
func duckLogOf(obj starlark.Value) *duckLog {
	logOf := func() (starlark.Value, error) {
		v, err := optAttr(obj, "log")
		if err != nil {
			return nil, fmt.Errorf("main_loop.log: %w", err)
		}
		return v, nil
	}
	return &duckLog{what: "main_loop.log",
		statusOf: func() (starlark.Value, error) {
			logV, err := logOf()
			if err != nil {
				return nil, err
			}
			if logV != nil {
				v, err := optAttr(logV, "status")
				if err != nil || v != nil {
					if err != nil {
						err = fmt.Errorf("main_loop.log.status: %w", err)
					}
					return v, err
				}
			}
			v, err := optAttr(obj, "status")
			if err != nil {
				return nil, fmt.Errorf("main_loop.status: %w", err)
			}
			return v, nil
		},
		rowOf: func() (starlark.Value, error) {
			logV, err := logOf()
			if err != nil || logV == nil {
				return nil, err
			}
			return duckAttr(logV, "main_loop.log", "current_row")
		},
		noMapping: func(part, k string) error {
			if part == "current_row" {
				return fmt.Errorf("main_loop.log: %s has no attribute log (the extension wrote current_row[%q])", obj.Type(), k)
			}
			return fmt.Errorf("main_loop.log.status: the extension set %q, and the main loop (%s) has no status (main_loop.log.status or main_loop.status)", k, obj.Type())
		},
	}
}

// syncIn copies the duck's status and current row into a fresh log of
// the shadow's, and its algorithm, data stream and extensions when they
// are the library's; the log returned writes the changes back.
func (d *duckLoop) syncIn(thread *starlark.Thread) (*duckLog, error) {
	d.shadow.Log = mainloop.NewTrainingLog()
	log := duckLogOf(d.obj)
	if err := log.Pull(d.shadow.Log); err != nil {
		return nil, err
	}
	d.shadow.Algorithm, d.shadow.DataStream, d.shadow.Extensions = nil, nil, nil
	if a, err := optAttr(d.obj, "algorithm"); err == nil && a != nil {
		if alg, ok := a.(*Algorithm); ok {
			d.shadow.Algorithm = alg.Algorithm()
		}
	}
	if s, err := optAttr(d.obj, "data_stream"); err == nil && s != nil {
		if st, ok := s.(*starfuel.Stream); ok {
			d.shadow.DataStream = st.S
		}
	}
	if l, err := optAttr(d.obj, "extensions"); err == nil && l != nil {
		if items, ok := starlib.Elems(l); ok {
			for _, x := range items {
				if e, ok := extensionOf(thread, x); ok {
					d.shadow.Extensions = append(d.shadow.Extensions, e)
				}
			}
		}
	}
	return log, nil
}

// sortedKeys are a row's record names in order (a deterministic order of
// writes back).
func sortedKeys(r mainloop.Row) []string {
	return (&LogRow{R: r}).keys()
}

// scriptAlgorithm is a script object as a MainLoop's algorithm (Blocks'
// TrainingAlgorithm protocol): initialize() and process_batch(batch).
type scriptAlgorithm struct {
	thread *starlark.Thread
	obj    starlark.Value
}

func (a *scriptAlgorithm) call(name string, args starlark.Tuple) error {
	m, err := duckAttr(a.obj, "algorithm", name)
	if err != nil {
		return err
	}
	if _, err := starlark.Call(a.thread, m, args, nil); err != nil {
		return fmt.Errorf("algorithm.%s: %w", name, scriptError(err))
	}
	return nil
}

// Initialize calls initialize().
func (a *scriptAlgorithm) Initialize() error { return a.call("initialize", nil) }

// ProcessBatch calls process_batch(batch), the batch a dict of arrays.
func (a *scriptAlgorithm) ProcessBatch(batch map[string]*nd.Array) error {
	return a.call("process_batch", starlark.Tuple{batchValue(batch)})
}

// isDuckAlgorithm tells a script object given as an algorithm: one with
// process_batch.
func isDuckAlgorithm(v starlark.Value) bool {
	m, err := optAttr(v, "process_batch")
	return err == nil && m != nil
}

// scriptSubExtension is a script object as an extension: each callback
// calls its dispatch(callback_name, *args); conditions given to it go to
// its add_condition (EarlyStopping's checkpoint_extension).
type scriptSubExtension struct {
	thread *starlark.Thread
	obj    starlark.Value
	name   string
	// pred is the predicate value add_condition is given (the library
	// hands its Go predicate over; EarlyStopping's is OnLogRecord of its
	// notification).
	pred starlark.Value
}

// AddCondition calls obj.add_condition(callbacks_names, predicate,
// arguments), as Blocks' EarlyStopping calls its checkpoint's.
func (s *scriptSubExtension) AddCondition(callbacks []mainloop.Callback, predicate extensions.Predicate, arguments ...any) error {
	m, err := duckAttr(s.obj, "checkpoint_extension", "add_condition")
	if err != nil {
		return err
	}
	names := make([]starlark.Value, len(callbacks))
	for i, c := range callbacks {
		names[i] = starlark.String(c)
	}
	pred := s.pred
	if pred == nil {
		pred = &Predicate{name: "predicate", P: predicate}
	}
	args := make(starlark.Tuple, len(arguments))
	for i, a := range arguments {
		if v, ok := a.(starlark.Value); ok {
			args[i] = v
		} else {
			args[i] = goValue(a)
		}
	}
	if _, err := starlark.Call(s.thread, m, starlark.Tuple{starlark.NewList(names), pred, args}, nil); err != nil {
		return scriptError(err)
	}
	return nil
}

// Name is the object's name attribute, else its class name.
func (s *scriptSubExtension) Name() string { return s.name }

// SetMainLoop sets obj.main_loop to the loop (what stands for it).
func (s *scriptSubExtension) SetMainLoop(m *mainloop.MainLoop) {
	_ = setMainLoopAttr(s.obj, mainLoopFace(m))
}

func (s *scriptSubExtension) dispatch(cb mainloop.Callback, args ...starlark.Value) error {
	m, err := duckAttr(s.obj, "extension", "dispatch")
	if err != nil {
		return err
	}
	if _, err := starlark.Call(s.thread, m, append(starlark.Tuple{starlark.String(cb)}, args...), nil); err != nil {
		return scriptError(err)
	}
	return nil
}

func (s *scriptSubExtension) BeforeTraining() error { return s.dispatch(mainloop.BeforeTraining) }
func (s *scriptSubExtension) BeforeEpoch() error    { return s.dispatch(mainloop.BeforeEpoch) }
func (s *scriptSubExtension) BeforeBatch(b mainloop.Batch) error {
	return s.dispatch(mainloop.BeforeBatch, batchValue(b))
}
func (s *scriptSubExtension) AfterBatch(b mainloop.Batch) error {
	return s.dispatch(mainloop.AfterBatch, batchValue(b))
}
func (s *scriptSubExtension) AfterEpoch() error    { return s.dispatch(mainloop.AfterEpoch) }
func (s *scriptSubExtension) AfterTraining() error { return s.dispatch(mainloop.AfterTraining) }
func (s *scriptSubExtension) OnResumption() error  { return s.dispatch(mainloop.OnResumption) }
func (s *scriptSubExtension) OnInterrupt() error   { return s.dispatch(mainloop.OnInterrupt) }
func (s *scriptSubExtension) OnError(err error) error {
	if err == nil {
		return s.dispatch(mainloop.OnError, starlark.None)
	}
	return s.dispatch(mainloop.OnError, starlark.String(err.Error()))
}

// extensionOf is v as a Go extension: a library or script-class
// extension, or a script object with a dispatch method (one adapter per
// object in a run, so that the library tells it among a loop's
// extensions).
func extensionOf(thread *starlark.Thread, v starlark.Value) (mainloop.Extension, bool) {
	if e, ok := v.(*Extension); ok {
		return e.E, true
	}
	if m, err := optAttr(v, "dispatch"); err != nil || m == nil {
		return nil, false
	}
	return scriptExtensionOf(thread, v), true
}

const duckExtensionsKey = "blocks.duckExtensions"

// scriptExtensionOf is the run's adapter of the script object v.
func scriptExtensionOf(thread *starlark.Thread, v starlark.Value) *scriptSubExtension {
	cache, _ := thread.Local(duckExtensionsKey).(map[starlark.Value]*scriptSubExtension)
	if cache == nil {
		cache = map[starlark.Value]*scriptSubExtension{}
		thread.SetLocal(duckExtensionsKey, cache)
	}
	hashable := reflect.TypeOf(v).Comparable()
	if hashable {
		if s, ok := cache[v]; ok {
			return s
		}
	}
	name := v.Type()
	if n, err := optAttr(v, "name"); err == nil && n != nil {
		if s, ok := starlark.AsString(n); ok {
			name = s
		}
	}
	s := &scriptSubExtension{thread: thread, obj: v, name: name}
	if hashable {
		cache[v] = s
	}
	return s
}

// extensionValue is a Go extension as the script sees it: the script
// object a scriptSubExtension stands for, else the extension's face.
func extensionValue(e mainloop.Extension) starlark.Value {
	if s, ok := e.(*scriptSubExtension); ok {
		return s.obj
	}
	return &Extension{E: e}
}
