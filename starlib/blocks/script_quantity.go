package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/monitoring"
)

// Blocks' MonitoredQuantity(requires=None, name=None) as the base of a
// script class (blocks.monitoring.aggregation): the subclass defines
// initialize(self), aggregate(self, *values) (the batch's values of
// requires, in order) and get_aggregated_value(self); its instance goes
// among the variables of DataStreamMonitoring, TrainingDataMonitoring or
// DatasetEvaluator, as in Blocks. Called with aggregate= it is the
// function form (monitoredQuantity).

// Quantity is an instance of a MonitoredQuantity subclass.
type Quantity struct {
	st *starlib.ObjectState
	// v is the placeholder variable, made once (monitoredVariable).
	v *core.Variable
}

var (
	_ starlib.ScriptObject = (*Quantity)(nil)
	_ starlark.HasSetField = (*Quantity)(nil)
)

func (q *Quantity) String() string {
	return fmt.Sprintf("<%s object>", q.st.Class.Name())
}
func (q *Quantity) Type() string          { return q.st.Class.Name() }
func (q *Quantity) Freeze()               {}
func (q *Quantity) Truth() starlark.Bool  { return true }
func (q *Quantity) Hash() (uint32, error) { return starlark.String(fmt.Sprintf("%p", q)).Hash() }

// ScriptState is the instance's class and attributes.
func (q *Quantity) ScriptState() *starlib.ObjectState { return q.st }

// Attr looks name up as Python does: the normal lookup, then the
// class's __getattr__.
func (q *Quantity) Attr(name string) (starlark.Value, error) {
	v, found, err := starlib.ScriptAttr(q, q.st, name)
	if found || err != nil {
		return v, err
	}
	return starlib.ScriptGetattr(q, q.st, name)
}

// AttrNames lists the attributes.
func (q *Quantity) AttrNames() []string { return starlib.ScriptAttrNames(q.st) }

// SetField sets an attribute.
func (q *Quantity) SetField(name string, v starlark.Value) error {
	_, err := starlib.ScriptSetField(q, q.st, name, v, true)
	return err
}

// monitoredQuantityClass is MonitoredQuantity: the function form, and
// the base of script classes.
func monitoredQuantityClass() starlark.Value {
	base := &starlib.LibClass{State: true, ClassName: "MonitoredQuantity",
		IsInst: func(v starlark.Value) bool { _, ok := v.(*Quantity); return ok },
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			return &Quantity{st: st}, nil
		},
		Init: func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
			q := self.(*Quantity)
			var requires, name starlark.Value = starlark.None, starlark.None
			if err := starlark.UnpackArgs("MonitoredQuantity.__init__", args, kwargs, "requires?", &requires, "name?", &name); err != nil {
				return err
			}
			if requires == starlark.None {
				requires = starlark.NewList(nil)
			}
			q.st.Set("requires", requires)
			q.st.Set("name", name)
			return nil
		}}
	return &starlib.CallableLibClass{LibClass: base, Fn: starlib.NewBuiltin("MonitoredQuantity", monitoredQuantity)}
}

// variable is the quantity's placeholder among monitored variables.
func (q *Quantity) variable(thread *starlark.Thread) (*core.Variable, error) {
	if q.v != nil {
		return q.v, nil
	}
	cls := q.st.Class.Name()
	nameV, _, err := starlib.ScriptAttr(q, q.st, "name")
	if err != nil {
		return nil, err
	}
	name, ok := starlark.AsString(nameV)
	if !ok || name == "" {
		return nil, fmt.Errorf("monitored quantities must have names: %s has name %s (pass name= to MonitoredQuantity.__init__)", cls, nameV)
	}
	reqV, _, err := starlib.ScriptAttr(q, q.st, "requires")
	if err != nil {
		return nil, err
	}
	reqs, err := variablesOf(thread, cls+": requires", reqV)
	if err != nil {
		return nil, err
	}
	mq := &monitoring.MonitoredQuantity{Name: name, Requires: reqs, New: func() monitoring.QuantityAccumulator {
		return &scriptQuantity{thread: thread, q: q}
	}}
	v, err := mq.Variable()
	if err != nil {
		return nil, err
	}
	q.v = v
	return v, nil
}

// monitoredVariablesOf is variablesOf for the variables of a monitoring
// extension or evaluator, which may hold MonitoredQuantity instances.
func monitoredVariablesOf(thread *starlark.Thread, what string, v starlark.Value) ([]*core.Variable, error) {
	elems, ok := starlib.Elems(v)
	if !ok {
		return variablesOf(thread, what, v)
	}
	list := make([]starlark.Value, len(elems))
	for i, x := range elems {
		list[i] = x
		if q, ok := x.(*Quantity); ok {
			mv, err := q.variable(thread)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
			}
			list[i] = starlib.NewVariable(thread, mv)
		}
	}
	return variablesOf(thread, what, starlark.NewList(list))
}

// scriptQuantity calls a MonitoredQuantity subclass's methods; its state
// is the instance's attributes, which checkpoints save with the script
// objects.
type scriptQuantity struct {
	thread *starlark.Thread
	q      *Quantity
}

var _ monitoring.OwnedState = (*scriptQuantity)(nil)

func (s *scriptQuantity) StateSavedByOwner() {}

func (s *scriptQuantity) call(name string, args starlark.Tuple) (starlark.Value, error) {
	if fn, _ := s.q.st.Class.Lookup(name); fn == nil {
		return nil, fmt.Errorf("%s: a MonitoredQuantity subclass defines %s (the base's is abstract)", s.q.st.Class.Name(), name)
	}
	m, _, err := starlib.ScriptAttr(s.q, s.q.st, name)
	if err != nil {
		return nil, err
	}
	r, err := starlark.Call(s.thread, m, args, nil)
	if err != nil {
		return nil, scriptError(err)
	}
	return r, nil
}

func (s *scriptQuantity) Initialize() error {
	_, err := s.call("initialize", nil)
	return err
}

func (s *scriptQuantity) Aggregate(values []*nd.Array) error {
	args := make(starlark.Tuple, len(values))
	for i, v := range values {
		args[i] = goValue(v)
	}
	_, err := s.call("aggregate", args)
	return err
}

func (s *scriptQuantity) Readout() (*nd.Array, error) {
	v, err := s.call("get_aggregated_value", nil)
	if err != nil {
		return nil, err
	}
	a, err := starlib.ToArray(v, nil)
	if err != nil {
		return nil, fmt.Errorf("%s.get_aggregated_value returned %s, not a number or an array: %v", s.q.st.Class.Name(), v.Type(), err)
	}
	return a, nil
}
