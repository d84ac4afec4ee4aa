package mainloop

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// A Finisher is an extension that may request the end of training
// (FinishAfter, FinishIfNoImprovementAfter, an extension whose code the
// loop cannot see). FinishPending reports whether it may still do so from
// the state in log: false only when every condition it finishes on is
// behind the log (FinishAfter(after_n_epochs=2) once two epochs are done:
// Blocks compares with ==, so such a condition never fires again).
type Finisher interface {
	FinishPending(log *TrainingLog) bool
}

// NothingToTrainError is what Run returns, having done nothing, when the
// loop has trained before (iterations_done > 0) and every stopping
// condition of its extensions is behind it. In Blocks such a run trains
// forever; here it returns at once (docs/training.md).
type NothingToTrainError struct {
	IterationsDone, EpochsDone int
	// Finishers describe the conditions that are behind ("FinishAfter
	// (after_n_epochs=2)").
	Finishers []string
}

func (e *NothingToTrainError) Error() string {
	return fmt.Sprintf("nothing left to train: every stopping condition is behind the loop (%s; iteration %d, epoch %d done)",
		strings.Join(e.Finishers, ", "), e.IterationsDone, e.EpochsDone)
}

// IsNothingToTrain reports whether err is a NothingToTrainError.
func IsNothingToTrain(err error) bool {
	var n *NothingToTrainError
	return errors.As(err, &n)
}

// nothingToTrain is a NothingToTrainError when the loop has trained and
// has at least one finisher, none of them pending.
func (m *MainLoop) nothingToTrain() error {
	st := m.Log.Status
	if st.IterationsDone == 0 {
		return nil
	}
	var behind []string
	for _, ext := range m.Extensions {
		f, ok := ext.(Finisher)
		if !ok {
			continue
		}
		if f.FinishPending(m.Log) {
			return nil
		}
		d := ExtensionName(ext)
		if s, ok := ext.(fmt.Stringer); ok {
			d = s.String()
		}
		behind = append(behind, d)
	}
	if len(behind) == 0 {
		return nil
	}
	return &NothingToTrainError{IterationsDone: st.IterationsDone, EpochsDone: st.EpochsDone, Finishers: behind}
}

// Pause, sent on MainLoop.Signals, stops the loop after the current batch
// without finishing training: no message, no training_finished, no
// after_training; Run returns nil, Paused reports true, and the next Run
// continues (the interactive session's Ctrl-C).
var Pause os.Signal = pauseSignal{}

type pauseSignal struct{}

func (pauseSignal) String() string { return "pause" }
func (pauseSignal) Signal()        {}

var errPaused = errors.New("training paused")

// Paused reports whether the last Run stopped on Pause.
func (m *MainLoop) Paused() bool { return m.paused }
