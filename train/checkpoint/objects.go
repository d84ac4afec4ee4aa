package checkpoint

import (
	"bytes"
	"fmt"
)

// MemberScriptObjects holds the attributes of the script's objects that
// are part of the training state (a script dataset, scheme, transformer,
// extension, step rule or monitored quantity): written only when the run
// has such objects, so other checkpoints are unchanged.
const MemberScriptObjects = "script_objects.json"

// ObjectStates is state a checkpoint carries without knowing its form:
// the attributes of a script's objects (starlib encodes them). The
// checkpoint calls it on the main loop's goroutine.
type ObjectStates interface {
	// Seal is called when the main loop starts: the objects that exist
	// then are those saved and restored (a resumed run has built the
	// same ones by then).
	Seal()
	// CaptureObjects encodes the objects' state; an error names what
	// cannot be saved. nil data: there is nothing to save.
	CaptureObjects() ([]byte, error)
	// RestoreObjects checks data against the objects and returns the
	// function that puts it back (it may be called more than once).
	RestoreObjects(data []byte) (func() error, error)
}

// captureObjects fills c.ScriptObjects.
func (b Bindings) captureObjects(c *Checkpoint) error {
	if b.Objects == nil {
		return nil
	}
	data, err := b.Objects.CaptureObjects()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.ScriptObjects = data
	return nil
}

// restoreObjects checks c's script objects against b's and returns the
// function that restores them (nil when there is nothing to restore).
func (b Bindings) restoreObjects(c *Checkpoint) (func() error, error) {
	if b.Objects == nil {
		if len(c.ScriptObjects) > 0 {
			return nil, fmt.Errorf("checkpoint: the checkpoint holds the state of script objects but this run has none")
		}
		return nil, nil
	}
	f, err := b.Objects.RestoreObjects(c.ScriptObjects)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return f, nil
}

// diffObjects compares the script objects' states of now and c.
func diffObjects(now, c *Checkpoint) []string {
	if bytes.Equal(now.ScriptObjects, c.ScriptObjects) {
		return nil
	}
	return []string{"script objects: their attributes differ"}
}
