package mainloop

import (
	"errors"
	"fmt"
)

// BatchError is an error of the algorithm on one batch that names the
// batch: the iteration (1-based, counted over the whole run), the epoch
// (1-based) and the batch's position in the epoch. The main loop wraps
// the algorithm's errors that ask for it (a NaN or infinite cost: they
// have a NonFinite() bool method).
type BatchError struct {
	Iteration, Epoch, Batch int
	Err                     error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("iteration %d (batch %d of epoch %d): %v", e.Iteration, e.Batch, e.Epoch, e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// batchError wraps err in a BatchError for the batch being processed
// when err asks for it.
func (m *MainLoop) batchError(err error) error {
	var nf interface{ NonFinite() bool }
	if !errors.As(err, &nf) || !nf.NonFinite() {
		return err
	}
	st := &m.Log.Status
	start := 0
	if n := len(st.EpochEnds); n > 0 {
		start = st.EpochEnds[n-1]
	}
	return &BatchError{Iteration: st.IterationsDone + 1, Epoch: st.EpochsDone + 1, Batch: st.IterationsDone + 1 - start, Err: err}
}
