package run

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/mainloop"
)

// MainLoop runs m for the script on thread: after the settings checkpoint
// (starlib.CheckSettings) and the run's probe, with the interpreter's
// interrupt channel when it has one (starlib.StartTraining); the run
// records it (TakeLoopRuns).
func MainLoop(thread *starlark.Thread, m *mainloop.MainLoop) error {
	// The settings are all known now: check them before anything trains.
	if err := starlib.CheckSettings(thread); err != nil {
		return err
	}
	if err := probeMainLoop(thread, m); err != nil {
		return err
	}
	ch, done, err := starlib.StartTraining(thread)
	if err != nil {
		return err
	}
	s := stateOf(thread)
	if done == nil || s == nil {
		return m.Run()
	}
	if ch != nil {
		saved := m.Signals
		m.Signals = ch
		defer func() { m.Signals = saved }()
	}
	defer done()
	continued := m.Paused()
	err = m.Run()
	s.mu.Lock()
	s.loopRuns = append(s.loopRuns, LoopRun{Continued: continued, Paused: m.Paused(), Iteration: m.Log.Status.IterationsDone, Log: m.Log})
	s.mu.Unlock()
	return err
}

// A LoopRun is one main_loop.run() a script made: whether it continued a
// loop that an interrupt had paused (starlib's Interp.SetInterrupts,
// mainloop.Pause), and whether it ended paused, at which iteration.
type LoopRun struct {
	Continued, Paused bool
	Iteration         int
	// Log is the main loop's log (its summary, once it finished).
	Log *mainloop.TrainingLog
}

// TakeLoopRuns returns the main_loop.run() calls that scripts made on in
// since the last call, in order.
func TakeLoopRuns(in *starlib.Interp) []LoopRun {
	s := stateOf(in.Thread)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.loopRuns
	s.loopRuns = nil
	return r
}

// RecordConfig writes the resolved settings to the log's row 0 (record
// "config") of a new main loop (starlib.ConfigRecord); nothing when the
// script has none.
func RecordConfig(thread *starlark.Thread, log *mainloop.TrainingLog) {
	if log == nil {
		return
	}
	record, ok := starlib.ConfigRecord(thread)
	if !ok {
		return
	}
	if r, err := log.Row(0); err == nil {
		r["config"] = record
	}
}
