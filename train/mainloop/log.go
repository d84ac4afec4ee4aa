package mainloop

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
)

// Row is the log's record of one iteration: record name → value (Blocks'
// log[iteration], a dict). Values are whatever extensions store: bools,
// numbers, strings, *nd.Array, ...
type Row map[string]any

// The record names the main loop and FinishAfter write.
const (
	RecordTrainingFinishRequested = "training_finish_requested"
	RecordTrainingFinished        = "training_finished"
	RecordGotException            = "got_exception"
	RecordEpochInterruptReceived  = "epoch_interrupt_received"
	RecordBatchInterruptReceived  = "batch_interrupt_received"
)

// The keys of Blocks' log status.
const (
	StatusIterationsDone         = "iterations_done"
	StatusEpochsDone             = "epochs_done"
	StatusEpochEnds              = "_epoch_ends"
	StatusResumedFrom            = "resumed_from"
	StatusTrainingStarted        = "training_started"
	StatusEpochStarted           = "epoch_started"
	StatusEpochInterruptReceived = "epoch_interrupt_received"
	StatusBatchInterruptReceived = "batch_interrupt_received"
	StatusReceivedFirstBatch     = "received_first_batch"
)

// Status is the log's status (Blocks' log.status): the state of training
// that is not bound to an iteration. The keys Blocks' main loop keeps are
// fields; extensions keep theirs in Extra (TrackTheBest's best_...).
type Status struct {
	IterationsDone int
	EpochsDone     int
	// EpochEnds are the values of IterationsDone at the end of each
	// epoch (Blocks' _epoch_ends).
	EpochEnds []int
	// ResumedFrom is the UUID of the log this one continues ("" for
	// Python's None).
	ResumedFrom            string
	TrainingStarted        bool
	EpochStarted           bool
	EpochInterruptReceived bool
	BatchInterruptReceived bool
	ReceivedFirstBatch     bool
	// Extra holds the entries extensions add.
	Extra map[string]any
}

var fieldKeys = []string{StatusIterationsDone, StatusEpochsDone, StatusEpochEnds, StatusResumedFrom,
	StatusTrainingStarted, StatusEpochStarted, StatusEpochInterruptReceived, StatusBatchInterruptReceived,
	StatusReceivedFirstBatch}

// Get returns the status entry key as Blocks' status dict holds it:
// IterationsDone as "iterations_done", EpochEnds as "_epoch_ends" (a
// []int), ResumedFrom as nil when empty, and Extra's entries.
func (s *Status) Get(key string) (any, bool) {
	switch key {
	case StatusIterationsDone:
		return s.IterationsDone, true
	case StatusEpochsDone:
		return s.EpochsDone, true
	case StatusEpochEnds:
		return slices.Clone(s.EpochEnds), true
	case StatusResumedFrom:
		if s.ResumedFrom == "" {
			return nil, true
		}
		return s.ResumedFrom, true
	case StatusTrainingStarted:
		return s.TrainingStarted, true
	case StatusEpochStarted:
		return s.EpochStarted, true
	case StatusEpochInterruptReceived:
		return s.EpochInterruptReceived, true
	case StatusBatchInterruptReceived:
		return s.BatchInterruptReceived, true
	case StatusReceivedFirstBatch:
		return s.ReceivedFirstBatch, true
	}
	v, ok := s.Extra[key]
	return v, ok
}

// Set sets a status entry. The main loop's keys take values of their
// field's type (an int, a []int, a string or nil, a bool); any other key
// goes to Extra.
func (s *Status) Set(key string, value any) error {
	bad := func() error { return fmt.Errorf("status %q cannot be set to %v (%T)", key, value, value) }
	setBool := func(dst *bool) error {
		b, ok := value.(bool)
		if !ok {
			return bad()
		}
		*dst = b
		return nil
	}
	switch key {
	case StatusIterationsDone, StatusEpochsDone:
		n, ok := value.(int)
		if !ok || n < 0 {
			return bad()
		}
		if key == StatusIterationsDone {
			s.IterationsDone = n
		} else {
			s.EpochsDone = n
		}
		return nil
	case StatusEpochEnds:
		ends, ok := value.([]int)
		if !ok {
			return bad()
		}
		s.EpochEnds = slices.Clone(ends)
		return nil
	case StatusResumedFrom:
		switch v := value.(type) {
		case nil:
			s.ResumedFrom = ""
		case string:
			s.ResumedFrom = v
		default:
			return bad()
		}
		return nil
	case StatusTrainingStarted:
		return setBool(&s.TrainingStarted)
	case StatusEpochStarted:
		return setBool(&s.EpochStarted)
	case StatusEpochInterruptReceived:
		return setBool(&s.EpochInterruptReceived)
	case StatusBatchInterruptReceived:
		return setBool(&s.BatchInterruptReceived)
	case StatusReceivedFirstBatch:
		return setBool(&s.ReceivedFirstBatch)
	}
	if s.Extra == nil {
		s.Extra = map[string]any{}
	}
	s.Extra[key] = value
	return nil
}

// Keys are the status keys, sorted (the main loop's and Extra's).
func (s *Status) Keys() []string {
	keys := slices.Clone(fieldKeys)
	for k := range s.Extra {
		if !slices.Contains(fieldKeys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// TrainingLog is Blocks' in-memory TrainingLog: rows keyed by iteration
// plus a status. As Blocks' defaultdict, asking for a row makes it.
type TrainingLog struct {
	Status Status
	// UUID identifies this log (hex); Resume gives it a new one.
	UUID string
	rows map[int]Row
}

// NewTrainingLog returns an empty log with a fresh UUID.
func NewTrainingLog() *TrainingLog {
	return &TrainingLog{UUID: newUUID(), rows: map[int]Row{}}
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

// Row returns the row of iteration i, making an empty one if there is
// none (Blocks' log[i]); i must not be negative.
func (l *TrainingLog) Row(i int) (Row, error) {
	if i < 0 {
		return nil, fmt.Errorf("time must be a non-negative integer, got %d", i)
	}
	if l.rows == nil {
		l.rows = map[int]Row{}
	}
	r, ok := l.rows[i]
	if !ok {
		r = Row{}
		l.rows[i] = r
	}
	return r, nil
}

// Lookup returns the row of iteration i without making one.
func (l *TrainingLog) Lookup(i int) (Row, bool) {
	r, ok := l.rows[i]
	return r, ok
}

// CurrentRow is the row of the current iteration (status iterations_done).
func (l *TrainingLog) CurrentRow() Row {
	r, _ := l.Row(l.Status.IterationsDone)
	return r
}

// PreviousRow is the row before the current one.
func (l *TrainingLog) PreviousRow() (Row, error) { return l.Row(l.Status.IterationsDone - 1) }

// LastEpochRow is the row of the last epoch's end.
func (l *TrainingLog) LastEpochRow() (Row, error) {
	if len(l.Status.EpochEnds) == 0 {
		return nil, fmt.Errorf("no epoch has ended yet")
	}
	return l.Row(l.Status.EpochEnds[len(l.Status.EpochEnds)-1])
}

// Len is the number of rows (len(log) in Blocks).
func (l *TrainingLog) Len() int { return len(l.rows) }

// Iterations are the iterations that have a row, in increasing order.
func (l *TrainingLog) Iterations() []int {
	return slices.Sorted(maps.Keys(l.rows))
}

// Resume marks the log as continued: a new UUID, with ResumedFrom set to
// the old one (Blocks' resume).
func (l *TrainingLog) Resume() {
	old := l.UUID
	l.UUID = newUUID()
	l.Status.ResumedFrom = old
}

// Truthy is Python's truth value of a log value: false for nil, false,
// zero numbers and empty strings, true otherwise.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case float32:
		return x != 0
	case string:
		return x != ""
	}
	return true
}
