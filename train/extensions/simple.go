package extensions

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/train/mainloop"
)

// Trigger names (SimpleExtension's keyword arguments). The boolean ones
// take a bool, the integer ones an int; nil, false and 0 mean "not set".
const (
	TriggerBeforeTraining   = "before_training"
	TriggerBeforeFirstEpoch = "before_first_epoch"
	TriggerBeforeEpoch      = "before_epoch"
	TriggerBeforeBatch      = "before_batch"
	TriggerOnResumption     = "on_resumption"
	TriggerOnInterrupt      = "on_interrupt"
	TriggerOnError          = "on_error"
	TriggerAfterEpoch       = "after_epoch"
	TriggerAfterBatch       = "after_batch"
	TriggerAfterTraining    = "after_training"
	TriggerAfterNEpochs     = "after_n_epochs"
	TriggerAfterNBatches    = "after_n_batches"
	TriggerEveryNEpochs     = "every_n_epochs"
	TriggerEveryNBatches    = "every_n_batches"
)

// BooleanTriggers and IntegerTriggers are Blocks' BOOLEAN_TRIGGERS and
// INTEGER_TRIGGERS, in the order conditions are added.
var (
	BooleanTriggers = []string{TriggerBeforeTraining, TriggerBeforeFirstEpoch, TriggerBeforeEpoch,
		TriggerBeforeBatch, TriggerOnResumption, TriggerOnInterrupt, TriggerOnError, TriggerAfterEpoch,
		TriggerAfterBatch, TriggerAfterTraining}
	IntegerTriggers = []string{TriggerAfterNEpochs, TriggerAfterNBatches, TriggerEveryNEpochs, TriggerEveryNBatches}
)

// Triggers are the trigger arguments of a SimpleExtension, by Blocks'
// names: {"after_n_epochs": 2}, {"after_batch": true}. A trigger absent
// from the map takes the extension's default.
type Triggers map[string]any

// triggerCallback is the callback each trigger runs in.
var triggerCallback = map[string]mainloop.Callback{
	TriggerBeforeTraining:   mainloop.BeforeTraining,
	TriggerBeforeFirstEpoch: mainloop.BeforeEpoch,
	TriggerBeforeEpoch:      mainloop.BeforeEpoch,
	TriggerBeforeBatch:      mainloop.BeforeBatch,
	TriggerOnResumption:     mainloop.OnResumption,
	TriggerOnInterrupt:      mainloop.OnInterrupt,
	TriggerOnError:          mainloop.OnError,
	TriggerAfterEpoch:       mainloop.AfterEpoch,
	TriggerAfterBatch:       mainloop.AfterBatch,
	TriggerAfterTraining:    mainloop.AfterTraining,
	TriggerAfterNEpochs:     mainloop.AfterEpoch,
	TriggerAfterNBatches:    mainloop.AfterBatch,
	TriggerEveryNEpochs:     mainloop.AfterEpoch,
	TriggerEveryNBatches:    mainloop.AfterBatch,
}

// withDefaults returns t with defaults for the keys t does not have
// (Python's kwargs.setdefault).
func withDefaults(t Triggers, defaults Triggers) Triggers {
	out := Triggers{}
	for k, v := range defaults {
		out[k] = v
	}
	for k, v := range t {
		out[k] = v
	}
	return out
}

// Predicate decides from the log whether a condition holds.
type Predicate func(log *mainloop.TrainingLog) bool

// EpochsPredicate and BatchesPredicate are Blocks' Predicate for the
// integer triggers: every: the count is a multiple of n; after: it equals n.
func EpochsPredicate(every bool, n int) Predicate {
	return func(log *mainloop.TrainingLog) bool { return countPredicate(every, log.Status.EpochsDone, n) }
}

// BatchesPredicate is EpochsPredicate for iterations.
func BatchesPredicate(every bool, n int) Predicate {
	return func(log *mainloop.TrainingLog) bool { return countPredicate(every, log.Status.IterationsDone, n) }
}

func countPredicate(every bool, count, n int) bool {
	if every {
		return count%n == 0
	}
	return count == n
}

// hasDoneNoEpochs is Blocks' has_done_epochs (true before the first epoch
// ends), the predicate of before_first_epoch.
func hasDoneNoEpochs(log *mainloop.TrainingLog) bool { return log.Status.EpochsDone == 0 }

// Call is what SimpleExtension's Do receives (Blocks' do(which_callback,
// *args)).
type Call struct {
	// Callback is the callback in which Do runs (before_epoch for
	// before_first_epoch).
	Callback mainloop.Callback
	// Batch is the batch, for before_batch and after_batch.
	Batch mainloop.Batch
	// Err is the error, for on_error.
	Err error
	// Args are the condition's extra arguments (AddCondition).
	Args []any
	// MainLoop is the extension's main loop.
	MainLoop *mainloop.MainLoop
}

type condition struct {
	callback  mainloop.Callback
	predicate Predicate
	args      []any
	// trigger and n name an integer trigger (after_n_epochs, 2); empty
	// for the others (finish.go reads them).
	trigger string
	n       int
}

// SimpleExtension is Blocks' SimpleExtension: Do runs in the callbacks
// whose conditions hold. Conditions come from triggers (SetConditions) and
// AddCondition; when several hold in one callback, Do runs once for each,
// in the order they were added.
type SimpleExtension struct {
	mainloop.TrainingExtension
	// Do does the extension's work.
	Do         func(c Call) error
	conditions []condition
}

// NewSimpleExtension returns a SimpleExtension named name running do
// under triggers.
func NewSimpleExtension(name string, do func(Call) error, triggers Triggers) (*SimpleExtension, error) {
	e := &SimpleExtension{Do: do}
	e.ExtensionName = name
	if err := e.SetConditions(triggers); err != nil {
		return nil, err
	}
	return e, nil
}

// newSimple is NewSimpleExtension with Blocks' per-extension defaults.
func newSimple(name string, do func(Call) error, triggers, defaults Triggers) (*SimpleExtension, error) {
	e, err := NewSimpleExtension(name, do, withDefaults(triggers, defaults))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return e, nil
}

// SetConditions replaces the conditions by those of triggers (Blocks'
// set_conditions).
func (e *SimpleExtension) SetConditions(triggers Triggers) error {
	for k := range triggers {
		if !slices.Contains(BooleanTriggers, k) && !slices.Contains(IntegerTriggers, k) {
			return fmt.Errorf("invalid condition: %s", k)
		}
	}
	var conds []condition
	for _, k := range BooleanTriggers {
		v, ok := triggers[k]
		if !ok || v == nil {
			continue
		}
		on, err := boolTrigger(k, v)
		if err != nil {
			return err
		}
		if !on {
			continue
		}
		c := condition{callback: triggerCallback[k], predicate: alwaysTrue, trigger: k}
		if k == TriggerBeforeFirstEpoch {
			c.predicate = hasDoneNoEpochs
		}
		conds = append(conds, c)
	}
	for _, k := range IntegerTriggers {
		v, ok := triggers[k]
		if !ok || v == nil {
			continue
		}
		n, ok := v.(int)
		if !ok {
			return fmt.Errorf("condition %s takes an integer, got %v (%T)", k, v, v)
		}
		if n == 0 {
			continue
		}
		if n < 0 {
			return fmt.Errorf("condition %s must be positive, got %d", k, n)
		}
		every := k == TriggerEveryNEpochs || k == TriggerEveryNBatches
		var p Predicate
		if k == TriggerAfterNEpochs || k == TriggerEveryNEpochs {
			p = EpochsPredicate(every, n)
		} else {
			p = BatchesPredicate(every, n)
		}
		conds = append(conds, condition{callback: triggerCallback[k], predicate: p, trigger: k, n: n})
	}
	e.conditions = conds
	return nil
}

func boolTrigger(k string, v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int:
		return x != 0, nil
	}
	return false, fmt.Errorf("condition %s takes a bool, got %v (%T)", k, v, v)
}

func alwaysTrue(*mainloop.TrainingLog) bool { return true }

// AddCondition makes Do run in each of callbacks when predicate (nil:
// always) holds, with arguments appended to the call (Blocks'
// add_condition). "before_first_epoch" is before_epoch while no epoch is
// done, as the trigger of that name.
func (e *SimpleExtension) AddCondition(callbacks []mainloop.Callback, predicate Predicate, arguments ...any) error {
	for _, cb := range callbacks {
		if !cb.Valid() && cb != TriggerBeforeFirstEpoch {
			return fmt.Errorf("%s is not a valid callback", string(cb))
		}
	}
	if predicate == nil {
		predicate = alwaysTrue
	}
	for _, cb := range callbacks {
		c := condition{callback: cb, predicate: predicate, args: slices.Clone(arguments)}
		if cb == TriggerBeforeFirstEpoch {
			p := predicate
			c.callback = mainloop.BeforeEpoch
			c.predicate = func(l *mainloop.TrainingLog) bool { return hasDoneNoEpochs(l) && p(l) }
		}
		e.conditions = append(e.conditions, c)
	}
	return nil
}

// Condition describes one of a SimpleExtension's conditions (Blocks'
// _conditions entries): the callback, the trigger it came from (empty
// for AddCondition) and the extra arguments.
type Condition struct {
	Callback mainloop.Callback
	Trigger  string
	Args     []any
}

// Conditions lists the extension's conditions in the order they were
// added.
func (e *SimpleExtension) Conditions() []Condition {
	out := make([]Condition, len(e.conditions))
	for i, c := range e.conditions {
		out[i] = Condition{Callback: c.callback, Trigger: c.trigger, Args: slices.Clone(c.args)}
	}
	return out
}

// DoNow runs Do at once in callback cb with args, whatever the conditions
// (Blocks' ext.do(which_callback, *args)); the main loop must be
// assigned.
func (e *SimpleExtension) DoNow(cb mainloop.Callback, batch mainloop.Batch, args ...any) error {
	loop, err := e.MainLoop()
	if err != nil {
		return err
	}
	if e.Do == nil {
		return nil
	}
	return e.Do(Call{Callback: cb, Batch: batch, Args: args, MainLoop: loop})
}

func (e *SimpleExtension) dispatch(cb mainloop.Callback, batch mainloop.Batch, cause error) error {
	loop, err := e.MainLoop()
	if err != nil {
		return err
	}
	// Conditions added by Do during the loop are seen, as in Blocks.
	for i := 0; i < len(e.conditions); i++ {
		c := e.conditions[i]
		if c.callback != cb || !c.predicate(loop.Log) {
			continue
		}
		if e.Do == nil {
			continue
		}
		if err := e.Do(Call{Callback: cb, Batch: batch, Err: cause, Args: c.args, MainLoop: loop}); err != nil {
			return err
		}
	}
	return nil
}

// The callbacks check the conditions and run Do.
func (e *SimpleExtension) BeforeTraining() error {
	return e.dispatch(mainloop.BeforeTraining, nil, nil)
}
func (e *SimpleExtension) BeforeEpoch() error { return e.dispatch(mainloop.BeforeEpoch, nil, nil) }
func (e *SimpleExtension) BeforeBatch(b mainloop.Batch) error {
	return e.dispatch(mainloop.BeforeBatch, b, nil)
}
func (e *SimpleExtension) AfterBatch(b mainloop.Batch) error {
	return e.dispatch(mainloop.AfterBatch, b, nil)
}
func (e *SimpleExtension) AfterEpoch() error    { return e.dispatch(mainloop.AfterEpoch, nil, nil) }
func (e *SimpleExtension) AfterTraining() error { return e.dispatch(mainloop.AfterTraining, nil, nil) }
func (e *SimpleExtension) OnResumption() error  { return e.dispatch(mainloop.OnResumption, nil, nil) }
func (e *SimpleExtension) OnInterrupt() error   { return e.dispatch(mainloop.OnInterrupt, nil, nil) }
func (e *SimpleExtension) OnError(err error) error {
	return e.dispatch(mainloop.OnError, nil, err)
}
