package extensions

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/blocks-go/blocks/internal/tty"

	"github.com/blocks-go/blocks/train/mainloop"
)

// ProgressBar shows the progress of the current epoch (Blocks'
// ProgressBar). On a terminal it redraws one line in place — a bar, the
// step, the rate in iterations per second, the elapsed time and the ETA —
// at most every RedrawInterval. Elsewhere (a pipe, a file, a log) it
// prints plain lines instead: one every LineInterval of an epoch and, for
// an epoch that printed any, one at its end; an epoch shorter than
// LineInterval prints none.
//
// The length of an epoch is IterationsPerEpoch when set, else the
// stream's (EpochLengther), else that of the previous epoch; while it is
// unknown the bar only counts.
type ProgressBar struct {
	mainloop.TrainingExtension
	// Out receives the bar; nil means os.Stderr.
	Out io.Writer
	// Terminal forces the terminal (true) or plain (false) display; nil
	// means a terminal when Out is a terminal device.
	Terminal *bool
	// IterationsPerEpoch, when positive, is the length of an epoch.
	IterationsPerEpoch int
	// Width is the number of cells of the bar (default 40).
	Width int
	// RedrawInterval limits terminal redraws (default 100ms);
	// LineInterval spaces plain lines (default 10s).
	RedrawInterval, LineInterval time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	iterCount int
	total     int
	start     time.Time
	lastDraw  time.Time
	lastBatch time.Time // the end of the last batch: a pause starts there
	active    bool
	started   bool // start was set by BeforeEpoch
	printed   bool // a plain line was printed in this epoch
	terminal  bool
}

// NewProgressBar returns a progress bar writing to out.
func NewProgressBar(out io.Writer) *ProgressBar {
	p := &ProgressBar{Out: out}
	p.ExtensionName = "ProgressBar"
	return p
}

func (p *ProgressBar) out() io.Writer {
	if p.Out == nil {
		return os.Stderr
	}
	return p.Out
}

func (p *ProgressBar) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// BeforeEpoch resets the count.
func (p *ProgressBar) BeforeEpoch() error {
	p.iterCount = 0
	p.start = p.now()
	p.started = true
	return nil
}

// AfterBatch advances the bar (after the batch, so the rate counts
// finished iterations).
func (p *ProgressBar) AfterBatch(batch mainloop.Batch) error {
	loop, err := p.MainLoop()
	if err != nil {
		return err
	}
	now := p.now()
	first := !p.active
	if first {
		p.active = true
		if !p.started { // resumed mid-epoch: time from here
			p.start = now
		}
		p.total = p.iterationsPerEpoch(loop)
		if p.Terminal != nil {
			p.terminal = *p.Terminal
		} else {
			p.terminal = tty.Is(p.out())
		}
	}
	p.iterCount++
	p.lastBatch = now
	epoch := loop.Log.Status.EpochsDone
	if p.terminal {
		if first || now.Sub(p.lastDraw) >= durationOr(p.RedrawInterval, 100*time.Millisecond) || p.iterCount == p.total {
			p.lastDraw = now
			_, err = io.WriteString(p.out(), "\r"+p.barLine(epoch, now)+"\x1b[K")
		}
		return err
	}
	// Plain lines: every LineInterval of the epoch, none for an epoch
	// shorter than that (a log is not filled with two lines per epoch of
	// a quick run).
	if first {
		p.lastDraw, p.printed = p.start, false
	}
	if now.Sub(p.lastDraw) >= durationOr(p.LineInterval, 10*time.Second) {
		p.lastDraw, p.printed = now, true
		_, err = io.WriteString(p.out(), p.plainLine(epoch, now)+"\n")
	}
	return err
}

// EpochEnded draws the epoch's last line and ends it (terminal) or prints
// it (plain), as the epoch's data runs out: before any after_epoch
// callback, so that what those print (Printing's block) follows the bar
// instead of being followed by a redraw of it (mainloop.EpochEndListener).
// The rate and elapsed time are those at the end of the last batch.
func (p *ProgressBar) EpochEnded() error {
	return p.endEpoch(0) // the epoch is not counted yet
}

// endEpoch ends the bar of the active epoch, the main loop's EpochsDone
// less counted (1 when the main loop has counted the epoch).
func (p *ProgressBar) endEpoch(counted int) error {
	if !p.active {
		return nil
	}
	p.active = false
	p.started = false
	loop, err := p.MainLoop()
	if err != nil {
		return err
	}
	return p.endLine(loop.Log.Status.EpochsDone - counted)
}

func (p *ProgressBar) endLine(epoch int) error {
	if p.terminal {
		_, err := io.WriteString(p.out(), "\r"+p.barLine(epoch, p.lastBatch)+"\x1b[K\n")
		return err
	}
	if !p.printed || p.lastDraw.Equal(p.lastBatch) {
		return nil // a quick epoch, or its last batch has just printed
	}
	_, err := io.WriteString(p.out(), p.plainLine(epoch, p.lastBatch)+"\n")
	return err
}

// AfterEpoch ends the bar of an epoch EpochEnded was not told about (a
// main loop that does not tell it).
func (p *ProgressBar) AfterEpoch() error {
	return p.endEpoch(1)
}

// OnResumption, in an epoch a pause interrupted (the REPL's Ctrl-C, then
// run() again), leaves the time between the pause and now out of the
// rate, the elapsed time and the ETA, and draws afresh at the next batch.
func (p *ProgressBar) OnResumption() error {
	if p.active && !p.lastBatch.IsZero() {
		p.start = p.start.Add(p.now().Sub(p.lastBatch))
		p.lastDraw = time.Time{}
	}
	return nil
}

func durationOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// IterPerEpoch is Blocks' get_iter_per_epoch: the number of batches of an
// epoch of the main loop's stream, when its iteration scheme tells.
func (p *ProgressBar) IterPerEpoch() (int, bool, error) {
	loop, err := p.MainLoop()
	if err != nil {
		return 0, false, err
	}
	if l, ok := loop.DataStream.(EpochLengther); ok {
		n, ok := l.BatchesPerEpoch()
		return n, ok, nil
	}
	return 0, false, nil
}

func (p *ProgressBar) iterationsPerEpoch(loop *mainloop.MainLoop) int {
	if p.IterationsPerEpoch > 0 {
		return p.IterationsPerEpoch
	}
	if l, ok := loop.DataStream.(EpochLengther); ok {
		if n, ok := l.BatchesPerEpoch(); ok {
			return n
		}
	}
	ends := loop.Log.Status.EpochEnds
	switch len(ends) {
	case 0:
		return 0
	case 1:
		return ends[0]
	}
	return ends[len(ends)-1] - ends[len(ends)-2]
}

func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// progress returns the rate (iterations per second, 0 when no time has
// passed), the elapsed time and, when the length is known, the ETA.
func (p *ProgressBar) progress(now time.Time) (rate float64, elapsed, eta time.Duration, known bool) {
	elapsed = now.Sub(p.start)
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(p.iterCount) / s
	}
	known = p.total > 0 && p.iterCount <= p.total
	if known && rate > 0 {
		eta = time.Duration(float64(p.total-p.iterCount) / rate * float64(time.Second))
	}
	return rate, elapsed, eta, known
}

func (p *ProgressBar) barLine(epoch int, now time.Time) string {
	width := p.Width
	if width <= 0 {
		width = 40
	}
	rate, elapsed, eta, known := p.progress(now)
	if !known {
		return fmt.Sprintf("Epoch %d, step %d | %.2f it/s | Elapsed Time: %s", epoch, p.iterCount, rate, clock(elapsed))
	}
	filled := width * p.iterCount / p.total
	return fmt.Sprintf("Epoch %d, step %d/%d (%3d%%) |%s%s| %.2f it/s | Elapsed Time: %s ETA: %s", epoch, p.iterCount, p.total,
		100*p.iterCount/p.total, strings.Repeat("#", filled), strings.Repeat(" ", width-filled), rate, clock(elapsed), clock(eta))
}

func (p *ProgressBar) plainLine(epoch int, now time.Time) string {
	rate, elapsed, eta, known := p.progress(now)
	if !known {
		return fmt.Sprintf("Epoch %d, step %d, %.2f it/s, elapsed %s", epoch, p.iterCount, rate, clock(elapsed))
	}
	return fmt.Sprintf("Epoch %d, step %d/%d (%d%%), %.2f it/s, elapsed %s, ETA %s", epoch, p.iterCount, p.total,
		100*p.iterCount/p.total, rate, clock(elapsed), clock(eta))
}
