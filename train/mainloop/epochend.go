package mainloop

// An EpochEndListener is told that the epoch's data ran out, before any
// extension's after_epoch callback runs: a progress display ends its line
// there, so that what the after_epoch callbacks print (Printing's block)
// comes after it and is not followed by a redraw of the finished epoch.
type EpochEndListener interface {
	EpochEnded() error
}

func (m *MainLoop) epochEnded() error {
	for _, ext := range m.Extensions {
		if l, ok := ext.(EpochEndListener); ok {
			if err := l.EpochEnded(); err != nil {
				return &ExtensionError{Extension: ExtensionName(ext), Callback: AfterEpoch, Err: err}
			}
		}
	}
	return nil
}
