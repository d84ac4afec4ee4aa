package run

import (
	"errors"
	"fmt"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/mainloop"
)

// A resume may apply an override only when it leaves what the checkpoint
// restores as it was: the parameters, the algorithm state (step-rule
// buffers, hyperparameters such as learning_rate), the generators and the
// training graph. Otherwise the checkpoint's state would silently replace
// what the override asked for, the new checkpoints would record a value
// training never used, and replay (which runs the recorded overrides from
// scratch) would not match. So blocks-repl resume, when --set changes an
// override, first runs the stored script with the checkpoint's own
// overrides up to its first main loop (a probe: nothing trains), then
// compares the state the script builds with the new overrides against it
// before restoring anything.

// Probe holds what a script builds before its first main loop trains.
type Probe struct {
	// State is the state the main loop's Checkpoint extension would save,
	// before training.
	State *checkpoint.Checkpoint
	// Graph is the training graph's fingerprint.
	Graph string
}

// ErrProbed stops a probe run at its first main loop.
var ErrProbed = errors.New("probe: stopped at the first main loop")

// OverrideRefusedError is a resume override that would change what the
// checkpoint restores.
type OverrideRefusedError struct {
	// Diffs are the differences, one per line.
	Diffs []string
}

func (e *OverrideRefusedError) Error() string {
	return "the override changes what the checkpoint restores or the training graph, so resume cannot apply it: " +
		strings.Join(e.Diffs, "; ")
}

// probeMainLoop serves Checkpoint.Probe (capture and stop) and
// Checkpoint.Expect (compare before the restore) at the start of a main
// loop run.
func probeMainLoop(thread *starlark.Thread, m *mainloop.MainLoop) error {
	ck := CheckpointOf(thread)
	if ck == nil || (ck.Probe == nil && ck.Expect == nil) {
		return nil
	}
	var b checkpoint.Bindings
	found := false
	for _, e := range m.Extensions {
		if c, ok := e.(*checkpoint.CheckpointExtension); ok {
			b, found = c.Bindings, true
			break
		}
	}
	if !found {
		return nil
	}
	b.Loop = m
	if ck.Probe != nil {
		st, err := checkpoint.Capture(b, "")
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
		ck.Probe.State, ck.Probe.Graph = st, checkpoint.GraphFingerprint(b)
		return ErrProbed
	}
	want := ck.Expect
	ck.Expect = nil // the first main loop only: later ones are the script's own
	diffs, err := checkpoint.Diff(b, want.State)
	if err != nil {
		return err
	}
	if checkpoint.GraphFingerprint(b) != want.Graph {
		diffs = append(diffs, "the training graph differs (an op or a constant of the cost or the updates)")
	}
	if len(diffs) > 0 {
		return &OverrideRefusedError{Diffs: diffs}
	}
	return nil
}
