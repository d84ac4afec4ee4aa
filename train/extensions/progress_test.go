package extensions

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/blocks-go/blocks/train/mainloop"
)

// runBar trains 2 epochs of 5 batches with the bar writing to out, the
// clock advancing 2 seconds per reading.
func runBar(t *testing.T, out io.Writer) {
	t.Helper()
	pb := NewProgressBar(out)
	pb.IterationsPerEpoch = 5
	now := time.Unix(0, 0)
	pb.Now = func() time.Time { now = now.Add(2 * time.Second); return now }
	pb.LineInterval = 5 * time.Second
	m := mainloop.New(nopAlgorithm{}, rangeStream(5, 0), nil, nil, []mainloop.Extension{pb, must(NewFinishAfter(Triggers{"after_n_epochs": 2}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestProgressBarInPseudoTerminal draws the bar on a real pseudo-terminal
// and reads what the terminal received: carriage-return redraws of one
// line per epoch with the bar, the rate and the ETA.
func TestProgressBarInPseudoTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	got := make(chan string)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, ptmx) // ends with EIO once tty is closed
		got <- b.String()
	}()
	runBar(t, tty)
	tty.Close()
	out := <-got
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per epoch, got %q", out)
	}
	// Every batch redraws (the clock moves 2 s > 100 ms), then the end.
	if n := strings.Count(lines[0], "\r"); n < 6 {
		t.Errorf("epoch 0: %d redraws in %q", n, lines[0])
	}
	final := regexp.MustCompile(`\rEpoch 1, step 5/5 \(100%\) \|#{40}\| 0\.50 it/s \| Elapsed Time: 0:00:10 ETA: 0:00:00\x1b\[K\r?$`)
	if !final.MatchString(lines[1]) {
		t.Errorf("epoch 1 line %q", lines[1])
	}
	mid := regexp.MustCompile(`\rEpoch 1, step 2/5 \( 40%\) \|#{16} {24}\| 0\.50 it/s \| Elapsed Time: 0:00:04 ETA: 0:00:06\x1b\[K`)
	if !mid.MatchString(lines[1]) {
		t.Errorf("epoch 1 has no 40%% bar with rate and ETA: %q", lines[1])
	}
}

// TestProgressBarInPipe: through a pipe the bar prints plain lines, no
// carriage returns or escape sequences.
func TestProgressBarInPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	runBar(t, w)
	w.Close()
	out := <-got
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("control characters in pipe output %q", out)
	}
	// A line every >= 5 s of the clock from the epoch's start (6 s here),
	// then one at the end of the epoch.
	want := "Epoch 0, step 3/5 (60%), 0.50 it/s, elapsed 0:00:06, ETA 0:00:04\n" +
		"Epoch 0, step 5/5 (100%), 0.50 it/s, elapsed 0:00:10, ETA 0:00:00\n" +
		"Epoch 1, step 3/5 (60%), 0.50 it/s, elapsed 0:00:06, ETA 0:00:04\n" +
		"Epoch 1, step 5/5 (100%), 0.50 it/s, elapsed 0:00:10, ETA 0:00:00\n"
	if out != want {
		t.Errorf("pipe output\n%s\nwant\n%s", out, want)
	}
	// An epoch shorter than LineInterval prints nothing.
	var quick bytes.Buffer
	pb := NewProgressBar(&quick)
	m := mainloop.New(nopAlgorithm{}, rangeStream(5, 0), nil, nil, []mainloop.Extension{pb, must(NewFinishAfter(Triggers{"after_n_epochs": 2}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if quick.Len() != 0 {
		t.Errorf("quick epochs printed %q", quick.String())
	}
}
