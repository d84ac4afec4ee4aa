package blocks

import (
	"errors"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/mainloop"
)

// nothingToTrain handles a main_loop.run() that found every stopping
// condition behind the loop (mainloop.NothingToTrainError). In a resumed
// run the error stands: the script stops there, before anything is
// written. Otherwise run() returns at once with a warning that says how
// to train on; in Blocks such a call trains forever (docs/training.md).
func nothingToTrain(thread *starlark.Thread, m *mainloop.MainLoop, err error) error {
	var nt *mainloop.NothingToTrainError
	if !errors.As(err, &nt) {
		return err
	}
	if ck := run.CheckpointOf(thread); ck != nil && ck.Resume != nil {
		return err
	}
	w := m.Messages
	if w == nil {
		w = &printWriter{thread: thread}
	}
	fmt.Fprintf(w, "WARNING:blocks.main_loop:main_loop.run() returns at once: %s. "+
		"(Blocks would train forever here.) To train on, give FinishAfter a later condition, as in Blocks: "+
		"[e for e in main_loop.extensions if e.name == \"FinishAfter\"][0].add_condition([\"after_epoch\"], "+
		"predicate = lambda log: log.status[\"epochs_done\"] == %d)\n", nt.Error(), nt.EpochsDone+1)
	return nil
}

// extensionList is main_loop.extensions: the loop's extensions, in order.
func extensionList(m *mainloop.MainLoop) *starlark.List {
	l := make([]starlark.Value, len(m.Extensions))
	for i, e := range m.Extensions {
		l[i] = extensionValue(e)
	}
	return starlark.NewList(l)
}
