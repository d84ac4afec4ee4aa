package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/mainloop"
)

// scriptInterrupts gives Ctrl-C its meaning for a script run by run,
// resume and replay, as in Blocks: while a main loop trains, the first
// Ctrl-C finishes the epoch and the second the batch (the loop listens to
// them itself), then main_loop.run() returns and the script goes on; a
// third Ctrl-C in the same run ends the process at once (exit 130).
// Ctrl-C while no main loop trains stops the script (exit 1). SIGTERM is
// left to the main loop (a batch interrupt) and, outside training, to its
// default. The returned function stops listening.
func scriptInterrupts(in *starlib.Interp, stderr io.Writer) (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt)
	done := make(chan struct{})
	go func() {
		var run int64 = -1
		count := 0
		for {
			select {
			case <-done:
				return
			case <-ch:
			}
			if !in.Training() {
				in.Cancel("interrupted (Ctrl-C)")
				continue
			}
			if r := in.TrainingRuns(); r != run {
				run, count = r, 0
			}
			count++
			if count >= 3 {
				fmt.Fprintln(stderr, "KeyboardInterrupt: training stopped in the middle of a batch (the third Ctrl-C)")
				os.Exit(130)
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// nothingToResume is the message of a resumed run whose stopping
// conditions were all behind the checkpoint (mainloop.NothingToTrainError),
// else "".
func nothingToResume(err error) string {
	var nt *mainloop.NothingToTrainError
	if errors.As(err, &nt) {
		return nt.Error()
	}
	return ""
}
