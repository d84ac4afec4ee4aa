package extensions

import (
	"fmt"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/mainloop"
)

// OnLogRecord is Blocks' predicate OnLogRecord(record_name): true when
// the current row holds a true value under recordName.
func OnLogRecord(recordName string) Predicate {
	return func(log *mainloop.TrainingLog) bool {
		return mainloop.Truthy(log.CurrentRow()[recordName])
	}
}

// Timestamp writes an ISO 8601 timestamp (local time, Separator between
// date and time) to the current row under LogRecord (Blocks' Timestamp).
// Defaults: before_training, after_epoch, on_error, on_interrupt,
// on_resumption and after_training.
type Timestamp struct {
	*SimpleExtension
	LogRecord, Separator string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Get, when set, gives the timestamp written in place of
	// GetTimestamp's (a subclass's get_timestamp).
	Get func() (any, error)
}

// TimestampDefaults are Timestamp's default triggers.
var TimestampDefaults = Triggers{TriggerBeforeTraining: true, TriggerAfterEpoch: true, TriggerOnError: true,
	TriggerOnInterrupt: true, TriggerOnResumption: true, TriggerAfterTraining: true}

// NewTimestamp returns Blocks' Timestamp(log_record="timestamp",
// separator=" ", **triggers); empty strings take the defaults.
func NewTimestamp(logRecord, separator string, triggers Triggers) (*Timestamp, error) {
	if logRecord == "" {
		logRecord = "timestamp"
	}
	if separator == "" {
		separator = " "
	}
	ts := &Timestamp{LogRecord: logRecord, Separator: separator}
	se, err := newSimple("Timestamp", ts.do, triggers, TimestampDefaults)
	if err != nil {
		return nil, err
	}
	ts.SimpleExtension = se
	return ts, nil
}

func (ts *Timestamp) do(c Call) error {
	var stamp any
	if ts.Get == nil {
		stamp = ts.GetTimestamp()
	} else {
		var err error
		if stamp, err = ts.Get(); err != nil {
			return err
		}
	}
	c.MainLoop.Log.CurrentRow()[ts.LogRecord] = stamp
	return nil
}

// GetTimestamp is the time of now in Python's datetime.isoformat
// (microseconds, no zone), Separator between date and time (Blocks'
// get_timestamp).
func (ts *Timestamp) GetTimestamp() string {
	now := time.Now
	if ts.Now != nil {
		now = ts.Now
	}
	return now().Format("2006-01-02" + ts.Separator + "15:04:05.000000")
}

// CompositeExtension manages sub-extensions: each callback runs its own
// conditions (before the children when RunBeforeChildren, else after),
// then every sub-extension's callback (Blocks' CompositeExtension).
type CompositeExtension struct {
	*SimpleExtension
	SubExtensions     []mainloop.Extension
	RunBeforeChildren bool
}

// NewCompositeExtension returns Blocks' CompositeExtension(sub_extensions,
// run_before_children=True, **triggers); do may be nil.
func NewCompositeExtension(name string, subs []mainloop.Extension, runBeforeChildren bool, do func(Call) error, triggers Triggers) (*CompositeExtension, error) {
	if name == "" {
		name = "CompositeExtension"
	}
	se, err := newSimple(name, do, triggers, nil)
	if err != nil {
		return nil, err
	}
	return &CompositeExtension{SimpleExtension: se, SubExtensions: subs, RunBeforeChildren: runBeforeChildren}, nil
}

// SetMainLoop gives the main loop to the extension and its children.
func (c *CompositeExtension) SetMainLoop(m *mainloop.MainLoop) {
	c.SimpleExtension.SetMainLoop(m)
	for _, s := range c.SubExtensions {
		s.SetMainLoop(m)
	}
}

func (c *CompositeExtension) run(cb mainloop.Callback, batch mainloop.Batch, cause error) error {
	if c.RunBeforeChildren {
		if err := c.SimpleExtension.dispatch(cb, batch, cause); err != nil {
			return err
		}
	}
	for _, s := range c.SubExtensions {
		if err := mainloop.Dispatch(s, cb, batch, cause); err != nil {
			return fmt.Errorf("%s: %w", mainloop.ExtensionName(s), err)
		}
	}
	if !c.RunBeforeChildren {
		return c.SimpleExtension.dispatch(cb, batch, cause)
	}
	return nil
}

// The callbacks run the composite's conditions and the children's.
func (c *CompositeExtension) BeforeTraining() error { return c.run(mainloop.BeforeTraining, nil, nil) }
func (c *CompositeExtension) BeforeEpoch() error    { return c.run(mainloop.BeforeEpoch, nil, nil) }
func (c *CompositeExtension) BeforeBatch(b mainloop.Batch) error {
	return c.run(mainloop.BeforeBatch, b, nil)
}
func (c *CompositeExtension) AfterBatch(b mainloop.Batch) error {
	return c.run(mainloop.AfterBatch, b, nil)
}
func (c *CompositeExtension) AfterEpoch() error    { return c.run(mainloop.AfterEpoch, nil, nil) }
func (c *CompositeExtension) AfterTraining() error { return c.run(mainloop.AfterTraining, nil, nil) }
func (c *CompositeExtension) OnResumption() error  { return c.run(mainloop.OnResumption, nil, nil) }
func (c *CompositeExtension) OnInterrupt() error   { return c.run(mainloop.OnInterrupt, nil, nil) }
func (c *CompositeExtension) OnError(err error) error {
	return c.run(mainloop.OnError, nil, err)
}

// ChooseBest says whether current is better than best (Blocks'
// choose_best(current, best) == current, with current != best).
type ChooseBest func(current, best any) (bool, error)

// ChooseMin and ChooseMax are Blocks' min and max.
func ChooseMin(current, best any) (bool, error) { return compareNumbers(current, best, -1) }

// ChooseMax prefers the larger value.
func ChooseMax(current, best any) (bool, error) { return compareNumbers(current, best, 1) }

func compareNumbers(current, best any, sign float64) (bool, error) {
	c, ok1 := mainloop.LogNumber(current)
	b, ok2 := mainloop.LogNumber(best)
	if !ok1 || !ok2 {
		return false, fmt.Errorf("cannot compare %s and %s as numbers", FormatValue(current), FormatValue(best))
	}
	return sign*(c-b) > 0, nil
}

// statusValue is how a log value is kept in the status: one-element
// arrays as float64 (serialisable), everything else as is.
func statusValue(v any) any {
	if a, ok := v.(*nd.Array); ok && a != nil && a.Size() == 1 {
		if a.DType() == nd.Float32 {
			return float32(a.Flat(0)) // printed as float32: 0.138, not 0.1380000114440918
		}
		return a.Flat(0)
	}
	return v
}

// TrackTheBest tracks the best value of a log record (Blocks'
// TrackTheBest): when the current row's RecordName beats the status entry
// best_<record_name>, it becomes the new best and NotificationName
// (default <record_name>_best_so_far) is set to True in the current row.
// Default trigger: after_epoch. Its state is the status entry, so it is
// saved with the log.
type TrackTheBest struct {
	*SimpleExtension
	RecordName, NotificationName, BestName string
	Choose                                 ChooseBest
}

// NewTrackTheBest returns Blocks' TrackTheBest(record_name,
// notification_name=None, choose_best=min, **triggers); nil choose is min.
func NewTrackTheBest(recordName, notificationName string, choose ChooseBest, triggers Triggers) (*TrackTheBest, error) {
	if notificationName == "" {
		notificationName = recordName + "_best_so_far"
	}
	if choose == nil {
		choose = ChooseMin
	}
	tb := &TrackTheBest{RecordName: recordName, NotificationName: notificationName, BestName: "best_" + recordName, Choose: choose}
	se, err := newSimple("TrackTheBest", tb.do, triggers, Triggers{TriggerAfterEpoch: true})
	if err != nil {
		return nil, err
	}
	tb.SimpleExtension = se
	return tb, nil
}

func (tb *TrackTheBest) do(c Call) error {
	log := c.MainLoop.Log
	current, ok := log.CurrentRow()[tb.RecordName]
	if !ok || current == nil {
		return nil
	}
	best, ok := log.Status.Get(tb.BestName)
	better := !ok || best == nil
	if !better {
		var err error
		better, err = tb.Choose(current, best)
		if err != nil {
			return fmt.Errorf("TrackTheBest(%s): %w", tb.RecordName, err)
		}
	}
	if better {
		if err := log.Status.Set(tb.BestName, statusValue(current)); err != nil {
			return err
		}
		log.CurrentRow()[tb.NotificationName] = true
	}
	return nil
}

// FinishIfNoImprovementAfter requests the end of training when
// NotificationName has not appeared in the log for Iterations iterations
// or Epochs epochs since it last did (Blocks' FinishIfNoImprovementAfter).
// Each time it runs after a first notification, it writes the remaining
// patience to PatienceLogRecord (default <notification>_patience_epochs
// or _iterations); at 0 it finishes. Default trigger: after_epoch.
//
// The iteration and epoch of the last notification are kept in the status
// (under _<patience record>_last_best), so they are saved with the log.
type FinishIfNoImprovementAfter struct {
	*SimpleExtension
	NotificationName   string
	Iterations, Epochs int // exactly one is positive
	PatienceLogRecord  string
}

// NewFinishIfNoImprovementAfter returns Blocks' FinishIfNoImprovementAfter(
// notification_name, iterations=None, epochs=None,
// patience_log_record=None, **triggers); pass 0 for None.
func NewFinishIfNoImprovementAfter(notificationName string, iterations, epochs int, patienceLogRecord string, triggers Triggers) (*FinishIfNoImprovementAfter, error) {
	if (iterations > 0) == (epochs > 0) {
		return nil, fmt.Errorf("FinishIfNoImprovementAfter: need exactly one of epochs or iterations to be specified")
	}
	if patienceLogRecord == "" {
		patienceLogRecord = notificationName + "_patience"
		if epochs > 0 {
			patienceLogRecord += "_epochs"
		} else {
			patienceLogRecord += "_iterations"
		}
	}
	f := &FinishIfNoImprovementAfter{NotificationName: notificationName, Iterations: iterations, Epochs: epochs, PatienceLogRecord: patienceLogRecord}
	se, err := newSimple("FinishIfNoImprovementAfter", f.do, triggers, Triggers{TriggerAfterEpoch: true})
	if err != nil {
		return nil, err
	}
	f.SimpleExtension = se
	return f, nil
}

func (f *FinishIfNoImprovementAfter) stateKey() string {
	return "_" + f.PatienceLogRecord + "_last_best"
}

func (f *FinishIfNoImprovementAfter) do(c Call) error {
	log := c.MainLoop.Log
	st := &log.Status
	if _, ok := log.CurrentRow()[f.NotificationName]; ok {
		if err := st.Set(f.stateKey(), []int{st.IterationsDone, st.EpochsDone}); err != nil {
			return err
		}
	}
	v, ok := st.Get(f.stateKey())
	if !ok {
		return nil
	}
	last, ok := intsOf(v)
	if !ok || len(last) != 2 {
		return fmt.Errorf("FinishIfNoImprovementAfter: status %s is %v, want [iteration, epoch]", f.stateKey(), v)
	}
	var patience int
	if f.Epochs > 0 {
		patience = f.Epochs - (st.EpochsDone - last[1])
	} else {
		patience = f.Iterations - (st.IterationsDone - last[0])
	}
	log.CurrentRow()[f.PatienceLogRecord] = patience
	if patience == 0 {
		log.CurrentRow()[mainloop.RecordTrainingFinishRequested] = true
	}
	return nil
}

// ConditionAdder is an extension that takes extra conditions
// (SimpleExtension and everything built on it).
type ConditionAdder interface {
	AddCondition(callbacks []mainloop.Callback, predicate Predicate, arguments ...any) error
}

// EarlyStopping is Blocks' EarlyStopping: a CompositeExtension of
// TrackTheBest(record_name) and FinishIfNoImprovementAfter, optionally
// asking a checkpoint extension to save to checkpointFilename after each
// batch where a new best was found.
type EarlyStopping struct {
	*CompositeExtension
	Track *TrackTheBest
	Stop  *FinishIfNoImprovementAfter
}

// NewEarlyStopping returns Blocks' EarlyStopping(record_name,
// checkpoint_extension=None, checkpoint_filename=None,
// notification_name=None, choose_best=min, iterations=None, epochs=None,
// **triggers).
func NewEarlyStopping(recordName string, checkpoint mainloop.Extension, checkpointFilename, notificationName string,
	choose ChooseBest, iterations, epochs int, triggers Triggers) (*EarlyStopping, error) {
	if notificationName == "" {
		notificationName = recordName + "_best_so_far"
	}
	tr := withDefaults(triggers, Triggers{TriggerAfterEpoch: true})
	track, err := NewTrackTheBest(recordName, notificationName, choose, tr)
	if err != nil {
		return nil, fmt.Errorf("EarlyStopping: %w", err)
	}
	stop, err := NewFinishIfNoImprovementAfter(notificationName, iterations, epochs, "", tr)
	if err != nil {
		return nil, fmt.Errorf("EarlyStopping: %w", err)
	}
	if checkpoint != nil {
		if checkpointFilename == "" {
			return nil, fmt.Errorf("EarlyStopping: checkpoint_extension specified without checkpoint_filename")
		}
		ca, ok := checkpoint.(ConditionAdder)
		if !ok {
			return nil, fmt.Errorf("EarlyStopping: checkpoint extension %s does not take conditions", mainloop.ExtensionName(checkpoint))
		}
		if err := ca.AddCondition([]mainloop.Callback{mainloop.AfterBatch}, OnLogRecord(notificationName), checkpointFilename); err != nil {
			return nil, err
		}
	}
	es := &EarlyStopping{Track: track, Stop: stop}
	subs := []mainloop.Extension{track, stop}
	ce, err := NewCompositeExtension("EarlyStopping", subs, true, func(c Call) error {
		if checkpoint == nil {
			return nil
		}
		for _, e := range c.MainLoop.Extensions {
			if e == checkpoint {
				return nil
			}
		}
		// Not in the main loop: run it as a child, as Blocks does.
		checkpoint.SetMainLoop(c.MainLoop)
		es.SubExtensions = append(es.SubExtensions, checkpoint)
		return nil
	}, withDefaults(triggers, Triggers{TriggerBeforeTraining: true}))
	if err != nil {
		return nil, err
	}
	// The composite itself only acts before training; the children keep
	// their own triggers.
	if err := ce.SetConditions(Triggers{TriggerBeforeTraining: true}); err != nil {
		return nil, err
	}
	es.CompositeExtension = ce
	return es, nil
}

// SharedVariableModifier sets a shared variable after every batch (by
// default) to Function(iterations_done) or, with NumArgs 2,
// Function(iterations_done, old value): Blocks' learning-rate and other
// schedules.
type SharedVariableModifier struct {
	*SimpleExtension
	Parameter *core.Variable
	// Function returns the new value; old is nil when NumArgs is 1.
	Function func(iterationsDone int, old *nd.Array) (*nd.Array, error)
	NumArgs  int
}

// NewSharedVariableModifier returns Blocks' SharedVariableModifier(
// parameter, function, num_args, **triggers) (default after_batch).
func NewSharedVariableModifier(parameter *core.Variable, function func(int, *nd.Array) (*nd.Array, error), numArgs int, triggers Triggers) (*SharedVariableModifier, error) {
	if parameter == nil || !parameter.IsShared() {
		return nil, fmt.Errorf("SharedVariableModifier: %v is not a shared variable", parameter)
	}
	if numArgs != 1 && numArgs != 2 {
		return nil, fmt.Errorf("SharedVariableModifier: the function must take 1 or 2 arguments, not %d", numArgs)
	}
	s := &SharedVariableModifier{Parameter: parameter, Function: function, NumArgs: numArgs}
	se, err := newSimple("SharedVariableModifier", s.do, triggers, Triggers{TriggerAfterBatch: true})
	if err != nil {
		return nil, err
	}
	s.SimpleExtension = se
	return s, nil
}

func (s *SharedVariableModifier) do(c Call) error {
	var old *nd.Array
	if s.NumArgs == 2 {
		old = s.Parameter.Value().Copy()
	}
	v, err := s.Function(c.MainLoop.Log.Status.IterationsDone, old)
	if err != nil {
		return fmt.Errorf("SharedVariableModifier(%s): %w", s.Parameter.Name, err)
	}
	cur := s.Parameter.Value()
	if v.DType() != cur.DType() {
		v = v.Astype(cur.DType())
	}
	if err := s.Parameter.SetValue(v); err != nil {
		return fmt.Errorf("SharedVariableModifier(%s): %w", s.Parameter.Name, err)
	}
	return nil
}

// intsOf reads a list of integers kept in the status, as the main loop
// keeps it ([]int) or as a log reader gives it back (an array, []any).
func intsOf(v any) ([]int, bool) {
	switch x := v.(type) {
	case []int:
		return x, true
	case *nd.Array:
		out := make([]int, x.Size())
		for i := range out {
			out[i] = int(x.Flat(i))
		}
		return out, true
	case []any:
		out := make([]int, len(x))
		for i, e := range x {
			f, ok := mainloop.LogNumber(e)
			if !ok {
				return nil, false
			}
			out[i] = int(f)
		}
		return out, true
	}
	return nil, false
}
