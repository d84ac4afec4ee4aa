package mainloop

import "errors"

// A SetupChecker is an extension that may find, when it is given its main
// loop, that the loop must not run: a checkpoint to resume from that does
// not fit the model the script builds. Run asks every SetupChecker after
// SetMainLoop and, on an error, returns a *RefusedError having run
// nothing: no extension, no on_error, no error banner, nothing written.
type SetupChecker interface {
	SetupError() error
}

// RefusedError is what Run returns when an extension refused the run
// before it started (SetupChecker).
type RefusedError struct {
	// Extension is the name of the extension that refused.
	Extension string
	Err       error
}

func (e *RefusedError) Error() string { return e.Err.Error() }

func (e *RefusedError) Unwrap() error { return e.Err }

// IsRefused reports whether err is a run that never started: a
// *RefusedError or a *NothingToTrainError.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r) || IsNothingToTrain(err)
}

// setupError is the first SetupChecker's refusal.
func (m *MainLoop) setupError() error {
	for _, ext := range m.Extensions {
		if c, ok := ext.(SetupChecker); ok {
			if err := c.SetupError(); err != nil {
				return &RefusedError{Extension: ExtensionName(ext), Err: err}
			}
		}
	}
	return nil
}
