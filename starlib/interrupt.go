package starlib

import (
	"errors"
	"os"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/train/mainloop"
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

// RunMainLoop runs m for the script on thread, with the interpreter's
// interrupt channel when it has one.
func RunMainLoop(thread *starlark.Thread, m *mainloop.MainLoop) error {
	// The settings are all known now: check them before anything trains.
	if err := settingsCheckpoint(thread); err != nil {
		return err
	}
	if err := probeMainLoop(thread, m); err != nil {
		return err
	}
	s := state(thread)
	if s != nil && s.noTrain.Load() {
		return ErrNoTrain
	}
	if s == nil {
		return m.Run()
	}
	s.mu.Lock()
	ch := s.interrupts
	s.mu.Unlock()
	if ch != nil {
		saved := m.Signals
		m.Signals = ch
		defer func() { m.Signals = saved }()
	}
	continued := m.Paused()
	s.training.Add(1)
	s.trainingRuns.Add(1)
	defer s.training.Add(-1)
	err := m.Run()
	s.mu.Lock()
	s.loopRuns = append(s.loopRuns, LoopRun{Continued: continued, Paused: m.Paused(), Iteration: m.Log.Status.IterationsDone, Log: m.Log})
	s.mu.Unlock()
	return err
}

// A LoopRun is one main_loop.run() a script made: whether it continued a
// loop that an interrupt had paused (SetInterrupts, mainloop.Pause), and
// whether it ended paused, at which iteration.
type LoopRun struct {
	Continued, Paused bool
	Iteration         int
	// Log is the main loop's log (its summary, once it finished).
	Log *mainloop.TrainingLog
}

// TakeLoopRuns returns the main_loop.run() calls made since the last
// call, in order.
func (in *Interp) TakeLoopRuns() []LoopRun {
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	r := in.state.loopRuns
	in.state.loopRuns = nil
	return r
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
