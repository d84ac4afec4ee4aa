package mainloop

import "fmt"

// A LogMirror is a training log kept outside the loop that is the truth
// (a script's log object: starlib/blocks). The loop's Log then mirrors
// it: Run pulls the outside log's status and current row into Log when it
// starts and after every call that may run code reading or writing the
// outside log (each extension's callback, the algorithm's initialize and
// process_batch), and pushes what the loop and its extensions wrote into
// Log before each such call and when it returns. So the two are equal
// wherever either is read, and the library's extensions, which read Log,
// stay in step with the script's. Rows other than the current one are
// the outside log's own: the loop and the extensions write only the
// current row.
type LogMirror interface {
	// Pull copies the outside log's status and current row into l.
	Pull(l *TrainingLog) error
	// Push writes into the outside log what changed in l's status and
	// current row since the last Pull or Push.
	Push(l *TrainingLog) error
}

// pullLog and pushLog are no-ops without a mirror (the loop's own log:
// nothing is copied, nothing allocated).
func (m *MainLoop) pullLog() error {
	if m.Mirror == nil {
		return nil
	}
	if err := m.Mirror.Pull(m.Log); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}

func (m *MainLoop) pushLog() error {
	if m.Mirror == nil {
		return nil
	}
	if err := m.Mirror.Push(m.Log); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}
