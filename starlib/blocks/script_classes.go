package blocks

import (
	"fmt"
	"slices"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Blocks' training classes as bases of script classes (starlib/classes.go):
//
//	blocks.algorithms.StepRule   compute_step(parameter, previous_step) -> (step, updates),
//	                             or compute_steps(previous_steps) -> (steps, updates)
//
// The instance is the library's own value (a StepRule), so it goes
// wherever a built-in one goes (GradientDescent(step_rule=...),
// CompositeRule); the library calls the script's methods.

// scriptClassModules are the bases of script classes:
//
//	StepRule (blocks.algorithms)                   compute_step(parameter, previous_step) or compute_steps(previous_steps)
//	TrainingAlgorithm (blocks.algorithms)          initialize(), process_batch(batch): a MainLoop's algorithm
//	NdarrayInitialization (blocks.initialization)  generate(rng, shape)
//	TrainingExtension, SimpleExtension (blocks.extensions: extensionBases)
func scriptClassModules() []*starlarkstruct.Module {
	stepRule := &starlib.LibClass{State: true, ClassName: "StepRule",
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			s := &StepRule{name: st.Class.Name(), st: st}
			s.R = &scriptStepRule{thread: thread, self: s}
			return s, nil
		},
		IsInst: func(v starlark.Value) bool { _, ok := v.(*StepRule); return ok },
	}
	// TrainingAlgorithm's subclasses define initialize() and
	// process_batch(batch): the instance is a plain object that a MainLoop
	// takes as its algorithm (extensions_duck.go).
	trainingAlgorithm := &starlib.LibClass{ClassName: "TrainingAlgorithm",
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			return starlib.NewInstance(st), nil
		}}
	trainingAlgorithm.IsInst = func(v starlark.Value) bool {
		so, ok := v.(starlib.ScriptObject)
		return ok && so.ScriptState() != nil && so.ScriptState().Class.Native() == starlib.NativeBase(trainingAlgorithm)
	}
	return []*starlarkstruct.Module{
		{Name: "blocks.algorithms", Members: starlark.StringDict{"StepRule": stepRule, "TrainingAlgorithm": trainingAlgorithm}},
		{Name: "blocks.initialization", Members: starlark.StringDict{"NdarrayInitialization": ndarrayInitializationBase()}},
	}
}

// ScriptState is a script step rule's state; nil for a built-in one.
func (s *StepRule) ScriptState() *starlib.ObjectState { return s.st }

// SetField sets a script step rule's attribute.
func (s *StepRule) SetField(name string, v starlark.Value) error {
	if s.st == nil {
		return fmt.Errorf("%s has no settable attributes", s.name)
	}
	_, err := starlib.ScriptSetField(s, s.st, name, v, true)
	return err
}

// scriptStepRule is a script class's step rule: its compute_steps, or
// its compute_step for each parameter in turn (Blocks' default
// compute_steps).
type scriptStepRule struct {
	thread *starlark.Thread
	self   *StepRule
}

func (r *scriptStepRule) ComputeSteps(params, prev []*core.Variable) ([]*core.Variable, []core.Update, error) {
	cls := r.self.st.Class
	thread := r.thread
	if fn, _ := cls.Lookup("compute_steps"); fn != nil {
		m, _, err := starlib.ScriptAttr(r.self, r.self.st, "compute_steps")
		if err != nil {
			return nil, nil, err
		}
		d := starlark.NewDict(len(params))
		for i, p := range params {
			if err := d.SetKey(&starlib.Variable{V: p}, starlib.NewVariable(thread, prev[i])); err != nil {
				return nil, nil, err
			}
		}
		res, err := starlark.Call(thread, m, starlark.Tuple{d}, nil)
		if err != nil {
			return nil, nil, err
		}
		stepsV, ups, err := stepResult(cls.Name()+".compute_steps", res)
		if err != nil {
			return nil, nil, err
		}
		sd, ok := stepsV.(*starlark.Dict)
		if !ok {
			return nil, nil, fmt.Errorf("%s.compute_steps must return (a dict of steps, updates), got %s", cls.Name(), stepsV.Type())
		}
		steps := make([]*core.Variable, len(params))
		for i, p := range params {
			v, found, err := sd.Get(&starlib.Variable{V: p})
			if err != nil || !found {
				return nil, nil, fmt.Errorf("%s.compute_steps: no step for %s", cls.Name(), p.Name)
			}
			if steps[i], err = starlib.AsVariable(thread, v); err != nil {
				return nil, nil, fmt.Errorf("%s.compute_steps: the step of %s: %v", cls.Name(), p.Name, err)
			}
		}
		return steps, ups, nil
	}
	if fn, _ := cls.Lookup("compute_step"); fn == nil {
		return nil, nil, fmt.Errorf("%s: a StepRule subclass defines compute_step(parameter, previous_step) or compute_steps(previous_steps)", cls.Name())
	}
	m, _, err := starlib.ScriptAttr(r.self, r.self.st, "compute_step")
	if err != nil {
		return nil, nil, err
	}
	steps := make([]*core.Variable, len(params))
	var all []core.Update
	for i, p := range params {
		res, err := starlark.Call(thread, m, starlark.Tuple{&starlib.Variable{V: p}, starlib.NewVariable(thread, prev[i])}, nil)
		if err != nil {
			return nil, nil, err
		}
		stepV, ups, err := stepResult(cls.Name()+".compute_step", res)
		if err != nil {
			return nil, nil, err
		}
		if steps[i], err = starlib.AsVariable(thread, stepV); err != nil {
			return nil, nil, fmt.Errorf("%s.compute_step: the step: %v", cls.Name(), err)
		}
		all = append(all, ups...)
	}
	return steps, all, nil
}

// stepResult splits (step(s), updates), updates a list of (shared
// variable, value) pairs.
func stepResult(fname string, res starlark.Value) (starlark.Value, []core.Update, error) {
	t, ok := res.(starlark.Tuple)
	if !ok || len(t) != 2 {
		return nil, nil, fmt.Errorf("%s must return a pair (step, updates), got %s", fname, res.Type())
	}
	elems, ok := starlib.Elems(t[1])
	if !ok {
		return nil, nil, fmt.Errorf("%s: updates must be a list of (shared variable, value) pairs, got %s", fname, t[1].Type())
	}
	var ups []core.Update
	for i, e := range elems {
		pair, ok := starlib.Elems(e)
		if !ok || len(pair) != 2 {
			return nil, nil, fmt.Errorf("%s: updates[%d] must be a pair (shared variable, value), got %s", fname, i, e.Type())
		}
		sv, ok := pair[0].(*starlib.Variable)
		if !ok || !sv.V.IsShared() {
			return nil, nil, fmt.Errorf("%s: updates[%d][0] must be a shared variable, got %s", fname, i, pair[0].Type())
		}
		val, err := starlib.AsVariable(nil, pair[1])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: updates[%d][1]: %v", fname, i, err)
		}
		ups = append(ups, core.Update{Shared: sv.V, Value: val})
	}
	return t[0], ups, nil
}

// extensionBases are SimpleExtension, TrainingExtension,
// CompositeExtension and Timestamp as bases of script classes:
// do(self, which_callback, *args) under the triggers given to __init__,
// the callbacks as methods (before_training, after_batch(batch),
// after_epoch, ...), or Timestamp's get_timestamp(self).
func extensionBases(members starlark.StringDict) {
	isExt := func(v starlark.Value) bool { _, ok := v.(*Extension); return ok }
	simple := &starlib.LibClass{State: true, ClassName: "SimpleExtension", IsInst: isExt,
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			e := &Extension{st: st}
			ext, err := extensions.NewSimpleExtension(st.Class.Name(), func(call extensions.Call) error {
				m, _, err := starlib.ScriptAttr(e, st, "do")
				if err != nil {
					return err
				}
				if m == nil {
					return fmt.Errorf("%s: a SimpleExtension subclass defines do(self, which_callback, *args)", st.Class.Name())
				}
				a := append(starlark.Tuple{starlark.String(call.Callback)}, callArgs(call)...)
				if _, err := starlark.Call(thread, m, a, nil); err != nil {
					return scriptError(err)
				}
				return nil
			}, nil)
			if err != nil {
				return nil, err
			}
			e.E = scriptExtension{ext}
			return e, nil
		}}
	simple.Init = func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
		e := self.(*Extension)
		if len(args) > 0 {
			return fmt.Errorf("SimpleExtension.__init__ takes keyword arguments (triggers, name), got %d positional", len(args))
		}
		tr, rest, err := splitTriggers(e.st.Class.Name(), kwargs)
		if err != nil {
			return err
		}
		for _, kv := range rest {
			k := string(kv[0].(starlark.String))
			if k != "name" {
				return fmt.Errorf("%s.__init__ got an unexpected keyword argument %s", e.st.Class.Name(), k)
			}
			s, ok := starlark.AsString(kv[1])
			if !ok {
				return fmt.Errorf("%s: name must be a string, got %s", e.st.Class.Name(), kv[1].Type())
			}
			e.E.(scriptExtension).SetName(s)
		}
		return e.E.(scriptExtension).SetConditions(tr)
	}
	members["SimpleExtension"] = &starlib.CallableLibClass{LibClass: simple, Fn: members["SimpleExtension"].(starlark.Callable)}
	training := &starlib.LibClass{State: true, ClassName: "TrainingExtension", IsInst: isExt,
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			e := &Extension{st: st}
			t := &scriptTrainingExtension{thread: thread, self: e}
			t.ExtensionName = st.Class.Name()
			e.E = t
			return e, nil
		}}
	training.Init = func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
		e := self.(*Extension)
		var name starlark.Value = starlark.None
		if err := starlark.UnpackArgs("TrainingExtension.__init__", args, kwargs, "name?", &name); err != nil {
			return err
		}
		if s, ok := starlark.AsString(name); ok {
			e.E.(*scriptTrainingExtension).SetName(s)
		}
		return nil
	}
	members["TrainingExtension"] = training
	composite := &starlib.LibClass{State: true, ClassName: "CompositeExtension", IsInst: isExt,
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			e := &Extension{st: st}
			ext, err := extensions.NewCompositeExtension(st.Class.Name(), nil, true, func(call extensions.Call) error {
				m, _, err := starlib.ScriptAttr(e, st, "do")
				if err != nil || m == nil {
					return err // Blocks' CompositeExtension.do does nothing
				}
				a := append(starlark.Tuple{starlark.String(call.Callback)}, callArgs(call)...)
				if _, err := starlark.Call(thread, m, a, nil); err != nil {
					return scriptError(err)
				}
				return nil
			}, nil)
			if err != nil {
				return nil, err
			}
			e.E = ext
			return e, nil
		}}
	composite.Init = func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
		e := self.(*Extension)
		cls := e.st.Class.Name()
		tr, rest, err := splitTriggers(cls, kwargs)
		if err != nil {
			return err
		}
		var subsV starlark.Value
		runBefore := true
		var name starlark.Value = starlark.None
		if err := starlark.UnpackArgs(cls+".__init__", args, rest, "sub_extensions", &subsV, "run_before_children?", &runBefore, "name?", &name); err != nil {
			return err
		}
		es, items, err := compositeSubs(thread, cls, subsV)
		if err != nil {
			return err
		}
		c := e.E.(*extensions.CompositeExtension)
		c.SubExtensions, c.RunBeforeChildren, e.subs = es, runBefore, items
		if s, ok := starlark.AsString(name); ok {
			c.SetName(s)
		}
		return c.SetConditions(tr)
	}
	members["CompositeExtension"] = &starlib.CallableLibClass{LibClass: composite, Fn: members["CompositeExtension"].(starlark.Callable)}
	timestamp := &starlib.LibClass{State: true, ClassName: "Timestamp", IsInst: isExt,
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			e := &Extension{st: st}
			ts, err := extensions.NewTimestamp("", "", nil)
			if err != nil {
				return nil, err
			}
			ts.SetName(st.Class.Name())
			ts.Get = func() (any, error) {
				m, _, err := starlib.ScriptAttr(e, st, "get_timestamp")
				if err != nil {
					return nil, err
				}
				if m == nil {
					return ts.GetTimestamp(), nil
				}
				v, err := starlark.Call(thread, m, nil, nil)
				if err != nil {
					return nil, scriptError(err)
				}
				if s, ok := starlark.AsString(v); ok {
					return s, nil
				}
				return v, nil
			}
			e.E = ts
			return e, nil
		},
		Super: func(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
			if name != "get_timestamp" {
				return nil, nil
			}
			ts := self.(*Extension).E.(*extensions.Timestamp)
			return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
					return nil, err
				}
				return starlark.String(ts.GetTimestamp()), nil
			}), nil
		}}
	timestamp.Init = func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
		e := self.(*Extension)
		cls := e.st.Class.Name()
		tr, rest, err := splitTriggers(cls, kwargs)
		if err != nil {
			return err
		}
		logRecord, separator := "timestamp", " "
		var name starlark.Value = starlark.None
		if err := starlark.UnpackArgs(cls+".__init__", args, rest, "log_record?", &logRecord, "separator?", &separator, "name?", &name); err != nil {
			return err
		}
		ts := e.E.(*extensions.Timestamp)
		ts.LogRecord, ts.Separator = logRecord, separator
		if s, ok := starlark.AsString(name); ok {
			ts.SetName(s)
		}
		all := extensions.Triggers{}
		for k, v := range extensions.TimestampDefaults {
			all[k] = v
		}
		for k, v := range tr {
			all[k] = v
		}
		return ts.SetConditions(all)
	}
	members["Timestamp"] = &starlib.CallableLibClass{LibClass: timestamp, Fn: members["Timestamp"].(starlark.Callable)}
}

// compositeSubs reads a CompositeExtension's sub_extensions, a list or
// tuple of extensions (or script objects with a dispatch method:
// extensions_duck.go).
func compositeSubs(thread *starlark.Thread, cls string, v starlark.Value) ([]mainloop.Extension, []starlark.Value, error) {
	items, ok := starlib.Elems(v)
	if !ok {
		return nil, nil, fmt.Errorf("%s: sub_extensions must be a list of extensions, got %s", cls, v.Type())
	}
	var es []mainloop.Extension
	for i, it := range items {
		e, ok := extensionOf(thread, it)
		if !ok {
			return nil, nil, fmt.Errorf("%s: sub_extensions[%d] is %s, want an extension (or an object with a dispatch method)", cls, i, it.Type())
		}
		es = append(es, e)
	}
	return es, items, nil
}

// ScriptState is a script extension's state; nil for a built-in one.
func (e *Extension) ScriptState() *starlib.ObjectState { return e.st }

// scriptTrainingExtension is a TrainingExtension subclass: each callback
// the class defines is called.
type scriptTrainingExtension struct {
	mainloop.TrainingExtension
	thread *starlark.Thread
	self   *Extension
}

func (t *scriptTrainingExtension) call(name string, args ...starlark.Value) error {
	if fn, _ := t.self.st.Class.Lookup(name); fn == nil {
		return nil
	}
	m, _, err := starlib.ScriptAttr(t.self, t.self.st, name)
	if err != nil {
		return err
	}
	if _, err := starlark.Call(t.thread, m, args, nil); err != nil {
		return scriptError(err)
	}
	return nil
}

// batchValue is the batch as a dict; None when there is none (a
// callback dispatched by the script: ext.dispatch("after_batch")).
func batchValue(b mainloop.Batch) starlark.Value {
	if b == nil {
		return starlark.None
	}
	return callArgs(extensions.Call{Batch: b})[0]
}

func (t *scriptTrainingExtension) BeforeTraining() error { return t.call("before_training") }
func (t *scriptTrainingExtension) BeforeEpoch() error    { return t.call("before_epoch") }
func (t *scriptTrainingExtension) BeforeBatch(b mainloop.Batch) error {
	return t.call("before_batch", batchValue(b))
}
func (t *scriptTrainingExtension) AfterBatch(b mainloop.Batch) error {
	return t.call("after_batch", batchValue(b))
}
func (t *scriptTrainingExtension) AfterEpoch() error    { return t.call("after_epoch") }
func (t *scriptTrainingExtension) AfterTraining() error { return t.call("after_training") }
func (t *scriptTrainingExtension) OnResumption() error  { return t.call("on_resumption") }
func (t *scriptTrainingExtension) OnInterrupt() error   { return t.call("on_interrupt") }
func (t *scriptTrainingExtension) OnError(err error) error {
	if err == nil { // ext.dispatch("on_error") from the script
		return t.call("on_error", starlark.None)
	}
	return t.call("on_error", starlark.String(err.Error()))
}

// ndarrayInitializationBase is blocks.initialization.NdarrayInitialization
// as the base of a script class: its generate(self, rng, shape) draws the
// values; the instance is a scheme (weights_init=..., initialize(var, rng)).
func ndarrayInitializationBase() *starlib.LibClass {
	return &starlib.LibClass{ClassName: "NdarrayInitialization",
		IsInst: func(v starlark.Value) bool { _, ok := v.(*Scheme); return ok },
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			s := &Scheme{}
			s.S = &scriptScheme{thread: thread, st: st, self: s}
			return s, nil
		}}
}

// scriptScheme is a script class's initialization scheme.
type scriptScheme struct {
	thread *starlark.Thread
	st     *starlib.ObjectState
	self   *Scheme
}

func (s *scriptScheme) String() string {
	return "<" + s.st.Class.Name() + " object>"
}

// Generate calls generate(rng, shape).
func (s *scriptScheme) Generate(rng *numpyrand.RandomState, shape []int) (*nd.Array, error) {
	m, _, err := starlib.ScriptAttr(s.self, s.st, "generate")
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%s: an NdarrayInitialization subclass defines generate(self, rng, shape)", s.st.Class.Name())
	}
	sh := make(starlark.Tuple, len(shape))
	for i, n := range shape {
		sh[i] = starlark.MakeInt(n)
	}
	var r starlark.Value = starlark.None
	if rng != nil {
		r = &starlib.RandomState{R: rng}
	}
	res, err := starlark.Call(s.thread, m, starlark.Tuple{r, sh}, nil)
	if err != nil {
		return nil, err
	}
	a, ok := res.(*starlib.Array)
	if !ok {
		return nil, fmt.Errorf("%s.generate must return an array, got %s", s.st.Class.Name(), res.Type())
	}
	if !slices.Equal(a.A.Shape, shape) {
		return nil, fmt.Errorf("%s.generate returned an array of shape %v, want %v", s.st.Class.Name(), a.A.Shape, shape)
	}
	return a.A.Astype(nd.Float64), nil
}

// ScriptState is a script scheme's state; nil for a built-in one.
func (s *Scheme) ScriptState() *starlib.ObjectState {
	if x, ok := s.S.(*scriptScheme); ok {
		return x.st
	}
	return nil
}

// SetField sets a script scheme's attribute.
func (s *Scheme) SetField(name string, v starlark.Value) error {
	st := s.ScriptState()
	if st == nil {
		return fmt.Errorf("%s has no settable attributes", schemeRepr(s.S))
	}
	_, err := starlib.ScriptSetField(s, st, name, v, true)
	return err
}
