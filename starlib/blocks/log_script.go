package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/mainloop"
)

// A script object as a MainLoop's log (MainLoop(log=obj)), Blocks'
// TrainingLog protocol: log.status (a dict: iterations_done,
// epochs_done, ...) and log.current_row (a dict, the row of the current
// iteration).
//
//   - An instance of a TrainingLog subclass (blocks.log) is a TrainingLog:
//     its base, the Go log, is the loop's log, which the loop and the
//     library's extensions write as they train; the script's overrides
//     are called and its attributes kept (saved by checkpoints). When the
//     class overrides status, current_row, previous_row, last_epoch_row or
//     __getitem__, the loop keeps its log in step with what those give, as
//     for a plain object.
//   - Any other object with status and current_row (a plain `object`
//     subclass, as Blocks' tests write their mocks) is the truth: the loop
//     trains on a Go log that mirrors it (mainloop.LogMirror), copying the
//     object's status and current row in after every extension's callback
//     and algorithm call, and writing back what the loop and the library's
//     extensions changed before the next one and when run() returns. A
//     checkpoint cannot save such a log (its rows are the object's own):
//     run() refuses a Checkpoint with it, naming the class.
//
// main_loop.log is the object, main_loop.status its status.

// trainingLogBase is TrainingLog (blocks.log): called, an empty log; as
// a base, its subclasses' instances are logs (Log with st set).
func trainingLogBase(fn starlark.Callable) *starlib.CallableLibClass {
	base := &starlib.LibClass{State: true, ClassName: "TrainingLog",
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			return &Log{L: mainloop.NewTrainingLog(), st: st}, nil
		},
		IsInst: func(v starlark.Value) bool { _, ok := v.(*Log); return ok },
		Super: func(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
			l, ok := self.(*Log)
			if !ok {
				return nil, nil
			}
			if name == "__getitem__" {
				return starlib.NewBuiltin("__getitem__", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
					var k starlark.Value
					if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &k); err != nil {
						return nil, err
					}
					v, _, err := l.baseGet(k)
					return v, err
				}), nil
			}
			return l.baseAttr(name)
		},
	}
	return &starlib.CallableLibClass{LibClass: base, Fn: fn}
}

// ScriptState is a script subclass's state; nil for a TrainingLog.
func (l *Log) ScriptState() *starlib.ObjectState { return l.st }

// SetField sets an attribute of a script subclass's instance.
func (l *Log) SetField(name string, v starlark.Value) error {
	if l.st == nil {
		return starlark.NoSuchAttrError(fmt.Sprintf("TrainingLog has no settable attribute %s", name))
	}
	_, err := starlib.ScriptSetField(l, l.st, name, v, true)
	return err
}

// scriptLog is a script object as a MainLoop's log (the mirror the loop
// keeps in step with it).
type scriptLog struct {
	obj starlark.Value
	// duck: obj is not a TrainingLog (the loop's log is a mirror of it).
	duck bool
	// log syncs the loop's log with obj; nil: nothing to sync (a
	// TrainingLog subclass that overrides none of logProtocol).
	log *duckLog
}

var _ mainloop.LogMirror = (*scriptLog)(nil)

func (s *scriptLog) Pull(l *mainloop.TrainingLog) error {
	if s.log == nil {
		return nil
	}
	return s.log.Pull(l)
}

func (s *scriptLog) Push(l *mainloop.TrainingLog) error {
	if s.log == nil {
		return nil
	}
	return s.log.Push(l)
}

// mainLoopLog is MainLoop's log argument: the Go log the loop trains on
// and, for a script object, its mirror.
func mainLoopLog(v starlark.Value) (*mainloop.TrainingLog, *scriptLog, error) {
	switch l := v.(type) {
	case starlark.NoneType:
		return mainloop.NewTrainingLog(), nil, nil
	case *Log:
		if l.st == nil {
			return l.L, nil, nil // the fast path: the loop writes the log itself
		}
		s := &scriptLog{obj: l}
		// The members of Blocks' TrainingLog that the loop and the
		// library's extensions read.
		for _, name := range []string{"status", "current_row", "previous_row", "last_epoch_row", "__getitem__"} {
			if fn, _ := l.st.Class.Lookup(name); fn != nil {
				s.log = strictDuckLog(l)
				break
			}
		}
		return l.L, s, nil
	}
	for _, name := range []string{"status", "current_row"} {
		m, err := optAttr(v, name)
		if err != nil {
			return nil, nil, fmt.Errorf("MainLoop: log.%s: %w", name, err)
		}
		if m == nil {
			return nil, nil, fmt.Errorf("MainLoop: log must be a TrainingLog or an object with status and current_row (Blocks' TrainingLog protocol), got %s, which has no %s", v.Type(), name)
		}
	}
	return mainloop.NewTrainingLog(), &scriptLog{obj: v, duck: true, log: strictDuckLog(v)}, nil
}

// strictDuckLog is obj as the truth of a MainLoop's log.
func strictDuckLog(obj starlark.Value) *duckLog {
	return &duckLog{what: "log", strict: true,
		statusOf: func() (starlark.Value, error) { return duckAttr(obj, "log", "status") },
		rowOf:    func() (starlark.Value, error) { return duckAttr(obj, "log", "current_row") },
	}
}

// logFace is main_loop.log: the script's log object, else the loop's
// log.
func logFace(m *mainloop.MainLoop) starlark.Value {
	if s, ok := m.Mirror.(*scriptLog); ok {
		return s.obj
	}
	return &Log{L: m.Log}
}

// statusFace is main_loop.status: log.status.
func statusFace(m *mainloop.MainLoop) (starlark.Value, error) {
	if s, ok := m.Mirror.(*scriptLog); ok && s.duck {
		return duckAttr(s.obj, "log", "status")
	}
	return &statusView{s: &m.Log.Status}, nil
}

// checkLogSavable refuses a checkpoint of a loop whose log is a plain
// script object: its rows are the object's own, which a checkpoint
// cannot save.
func checkLogSavable(m *mainloop.MainLoop) error {
	s, ok := m.Mirror.(*scriptLog)
	if !ok || !s.duck {
		return nil
	}
	for _, e := range m.Extensions {
		if c, ok := e.(*checkpoint.CheckpointExtension); ok {
			return fmt.Errorf("run: the Checkpoint (%s) cannot save the log, a %s: a log that is not a TrainingLog keeps its rows itself; make %s a subclass of TrainingLog (blocks.log), whose rows the loop keeps and checkpoints save", c.Path, s.obj.Type(), s.obj.Type())
		}
	}
	return nil
}
