//go:build unix

package mainloop_test

import (
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/train/mainloop"
)

// A real SIGINT sent to the process while Run runs finishes the epoch.
func TestRealSIGINT(t *testing.T) {
	// The test listens too, so that a signal delivered late can never
	// take the default action (ending the test binary).
	seen := make(chan os.Signal, 1)
	signal.Notify(seen, syscall.SIGINT)
	defer signal.Stop(seen)
	rec := &callbackRecorder{afterBatch: func(m *mainloop.MainLoop) error {
		if m.Status().IterationsDone == 2 {
			if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
				return err
			}
			select {
			case <-seen:
				time.Sleep(10 * time.Millisecond) // the loop's channel got it too
			case <-time.After(5 * time.Second):
				t.Error("SIGINT not delivered")
			}
		}
		// The runtime hands the signal to the loop's channel in the same
		// pass as to seen, a moment later at worst; on a loaded machine
		// that moment can outlast the 10 ms above and the rest of the
		// epoch's instant batches. Until the loop has taken it, each
		// batch of the epoch waits a little, so the epoch cannot end
		// first (the test would then see a second epoch, not a late
		// signal).
		if st := m.Status(); st.IterationsDone > 2 && st.IterationsDone < 10 && !st.EpochInterruptReceived {
			time.Sleep(100 * time.Millisecond)
		}
		if m.Status().IterationsDone > 100 {
			t.Fatal("the interrupt did not stop training")
		}
		return nil
	}}
	m := mainloop.New(&mockAlgorithm{}, &exampleStream{n: 10}, nil, nil, []mainloop.Extension{rec})
	m.Messages = io.Discard
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if st := m.Status(); st.IterationsDone != 10 || !st.EpochInterruptReceived {
		t.Errorf("status after SIGINT: %+v", st)
	}
}
