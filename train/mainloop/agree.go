package mainloop

import "fmt"

// agree combines, when Agree is set, this process's reasons to stop
// (finish requested, batch interrupt, epoch interrupt) with those of the
// other processes of a data-parallel job, so that all stop after the same
// batch: a signal that reached one process stops them all there. Agree
// receives the flags (0 or 1) and leaves in them their maximum over the
// processes.
func (m *MainLoop) agree() error {
	if m.Agree == nil {
		return nil
	}
	st := &m.Log.Status
	row := m.Log.CurrentRow()
	flag := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	f := []int64{flag(Truthy(row[RecordTrainingFinishRequested])), flag(st.BatchInterruptReceived), flag(st.EpochInterruptReceived)}
	if err := m.Agree(f); err != nil {
		return fmt.Errorf("main loop: agreeing with the other processes on when to stop: %w", err)
	}
	if f[0] == 1 && !Truthy(row[RecordTrainingFinishRequested]) {
		row[RecordTrainingFinishRequested] = true
	}
	if f[1] == 1 && !st.BatchInterruptReceived {
		st.BatchInterruptReceived = true
		row[RecordBatchInterruptReceived] = true
	}
	if f[2] == 1 && !st.EpochInterruptReceived {
		st.EpochInterruptReceived = true
		row[RecordEpochInterruptReceived] = true
	}
	return nil
}
