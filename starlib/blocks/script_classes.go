package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Blocks' training classes as bases of script classes (starlib/classes.go):
//
//	blocks.algorithms.StepRule   compute_step(parameter, previous_step) -> (step, updates),
//	                             or compute_steps(previous_steps) -> (steps, updates)
//
// The instance is the library's own value (a StepRule), so it goes
// wherever a built-in one goes (GradientDescent(step_rule=...),
// CompositeRule); the library calls the script's methods.

// libClass is a library class a script class derives from: newObj makes
// the instance's value (before __init__), which must be a
// starlib.ScriptObject; isInst tells its instances.
type libClass struct {
	name   string
	newObj func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error)
	isInst func(v starlark.Value) bool
}

var _ starlib.NativeBase = (*libClass)(nil)

func (c *libClass) Name() string          { return c.name }
func (c *libClass) String() string        { return "<class '" + c.name + "'>" }
func (c *libClass) Type() string          { return "type" }
func (c *libClass) Freeze()               {}
func (c *libClass) Truth() starlark.Bool  { return true }
func (c *libClass) Hash() (uint32, error) { return starlark.String(c.name).Hash() }

// ScriptNew makes the instance's value.
func (c *libClass) ScriptNew(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
	return c.newObj(thread, st)
}

// ScriptInit is the base's __init__, which takes no arguments.
func (c *libClass) ScriptInit(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
	if len(args) > 0 || len(kwargs) > 0 {
		return fmt.Errorf("%s.__init__() takes no arguments", c.name)
	}
	return nil
}

// ScriptInitDone has nothing to finish.
func (c *libClass) ScriptInitDone(thread *starlark.Thread, self starlark.Value) error { return nil }

// ScriptSuperAttr: the base's methods are abstract.
func (c *libClass) ScriptSuperAttr(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
	return nil, nil
}

// IsInstanceOf tells the class's instances.
func (c *libClass) IsInstanceOf(v starlark.Value) bool { return c.isInst(v) }

// IsSubclassOf: only the class itself.
func (c *libClass) IsSubclassOf(other starlark.Value) bool {
	o, ok := other.(*libClass)
	return ok && o.name == c.name
}

// Combine refuses a second library base.
func (c *libClass) Combine(other starlib.NativeBase) (starlib.NativeBase, error) {
	return nil, fmt.Errorf("%s and %s cannot both be bases", c.name, other.Name())
}

func scriptClassModules() []*starlarkstruct.Module {
	stepRule := &libClass{name: "StepRule",
		newObj: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			s := &StepRule{name: st.Class.Name(), st: st}
			s.R = &scriptStepRule{thread: thread, self: s}
			return s, nil
		},
		isInst: func(v starlark.Value) bool { _, ok := v.(*StepRule); return ok },
	}
	return []*starlarkstruct.Module{
		{Name: "blocks.algorithms", Members: starlark.StringDict{"StepRule": stepRule}},
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
