package starlib

import (
	"errors"
	"os"

	"go.starlark.net/starlark"
)

// SetInterrupts routes the interrupts of the main loops that scripts run
// on this interpreter to ch instead of the process's signals: an
// os.Interrupt received on ch is Blocks' Ctrl+C (finish the epoch), a
// syscall.SIGTERM finishes the current batch. The interactive session
// uses it so that one Ctrl+C stops training at the end of the batch and
// main_loop.run() continues later. nil restores the process's signals.
func (in *Interp) SetInterrupts(ch <-chan os.Signal) {
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	in.state.interrupts = ch
}

// Training reports whether a main loop started by a script on this
// interpreter is running (safe from any goroutine).
func (in *Interp) Training() bool { return in.state.training.Load() > 0 }

// StartTraining is called by a module's main loop just before it trains
// for the script on thread: it returns ErrNoTrain while SetNoTrain is on,
// else the channel that replaces the process's signals for the loop
// (SetInterrupts; nil: the process's own) and done, which the loop calls
// when it stops training (Training counts the loops between the two).
// Outside a run done is nil: nothing is counted.
func StartTraining(thread *starlark.Thread) (interrupts <-chan os.Signal, done func(), err error) {
	s := state(thread)
	if s == nil {
		return nil, nil, nil
	}
	if s.noTrain.Load() {
		return nil, nil, ErrNoTrain
	}
	s.mu.Lock()
	ch := s.interrupts
	s.mu.Unlock()
	s.training.Add(1)
	s.trainingRuns.Add(1)
	return ch, func() { s.training.Add(-1) }, nil
}

// TrainingRuns counts the main_loop.run() calls started so far (safe from
// any goroutine): a signal handler tells one run from the next with it.
func (in *Interp) TrainingRuns() int64 { return in.state.trainingRuns.Load() }

// ErrNoTrain is what main_loop.run() returns, training nothing, while
// SetNoTrain is on (blocks-repl repl --no-train FILE).
var ErrNoTrain = errors.New("main_loop.run() not run (--no-train)")

// SetNoTrain makes main_loop.run() stop the script with ErrNoTrain
// instead of training, until it is turned off (safe from any goroutine).
func (in *Interp) SetNoTrain(on bool) { in.state.noTrain.Store(on) }
