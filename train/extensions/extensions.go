package extensions

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blocks-go/blocks/internal/termsafe"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/mainloop"
)

// FinishAfter requests the end of training when triggered: it writes
// training_finish_requested=True to the current row. It has no default
// triggers: FinishAfter({"after_n_epochs": 2}).
type FinishAfter struct {
	*SimpleExtension
}

// NewFinishAfter returns Blocks' FinishAfter(**triggers).
func NewFinishAfter(triggers Triggers) (*FinishAfter, error) {
	f := &FinishAfter{}
	se, err := newSimple("FinishAfter", f.do, triggers, nil)
	if err != nil {
		return nil, err
	}
	f.SimpleExtension = se
	return f, nil
}

func (f *FinishAfter) do(c Call) error {
	c.MainLoop.Log.CurrentRow()[mainloop.RecordTrainingFinishRequested] = true
	return nil
}

// Dashes is the banner line Printing draws (79 dashes).
var Dashes = strings.Repeat("-", 79)

// Printing prints the status and the current row of the log (Blocks'
// Printing). Defaults: before_first_epoch, on_resumption, after_epoch,
// after_training and on_interrupt. Keys and values are written with
// their control characters escaped (internal/termsafe): a log row is
// untrusted text.
type Printing struct {
	*SimpleExtension
	// Out receives the text; nil means os.Stdout.
	Out io.Writer
	// OneLine prints one line per call (printing_line.go) instead of
	// Blocks' block of the status and the log row.
	OneLine bool
}

// PrintingDefaults are Printing's default triggers.
var PrintingDefaults = Triggers{TriggerBeforeFirstEpoch: true, TriggerOnResumption: true,
	TriggerAfterTraining: true, TriggerAfterEpoch: true, TriggerOnInterrupt: true}

// NewPrinting returns Blocks' Printing(**triggers) writing to out.
func NewPrinting(out io.Writer, triggers Triggers) (*Printing, error) {
	p := &Printing{Out: out}
	se, err := newSimple("Printing", p.do, triggers, PrintingDefaults)
	if err != nil {
		return nil, err
	}
	p.SimpleExtension = se
	return p, nil
}

func (p *Printing) do(c Call) error {
	w := p.Out
	if w == nil {
		w = os.Stdout
	}
	if p.OneLine {
		_, err := io.WriteString(w, p.oneLine(c))
		return err
	}
	log := c.MainLoop.Log
	var b strings.Builder
	printStatus := true
	b.WriteString("\n" + Dashes + "\n")
	switch {
	case c.Callback == mainloop.BeforeEpoch && log.Status.EpochsDone == 0:
		b.WriteString("BEFORE FIRST EPOCH\n")
	case c.Callback == mainloop.OnResumption:
		b.WriteString("TRAINING HAS BEEN RESUMED\n")
	case c.Callback == mainloop.AfterTraining:
		b.WriteString("TRAINING HAS BEEN FINISHED:\n")
	case c.Callback == mainloop.AfterEpoch:
		b.WriteString("AFTER ANOTHER EPOCH\n")
	case c.Callback == mainloop.OnInterrupt:
		b.WriteString("TRAINING HAS BEEN INTERRUPTED\n")
		printStatus = false
	}
	b.WriteString(Dashes + "\n")
	if printStatus {
		b.WriteString("Training status:\n")
		for _, k := range log.Status.Keys() {
			if strings.HasPrefix(k, "_") {
				continue
			}
			v, _ := log.Status.Get(k)
			fmt.Fprintf(&b, "\t %s: %s\n", termsafe.Escape(k), termsafe.Escape(FormatValue(v)))
		}
		fmt.Fprintf(&b, "Log records from the iteration %d:\n", log.Status.IterationsDone)
		row := log.CurrentRow()
		keys := make([]string, 0, len(row))
		for k := range row {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if strings.HasPrefix(k, "_") {
				continue
			}
			fmt.Fprintf(&b, "\t %s: %s\n", termsafe.Escape(k), termsafe.Escape(FormatValue(row[k])))
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatValue prints a log value as Python's str() would: True/False,
// None, floats in repr form (0.5, 1.0, 1e-05), lists as [1, 2], arrays as
// numpy prints them.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	case float64:
		return pyFloat(x, 64)
	case float32:
		return pyFloat(float64(x), 32)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case *nd.Array:
		if x == nil {
			return "None"
		}
		if x.NDim() == 0 && x.DType().IsFloat() {
			// numpy prints a float scalar in the shortest form that reads
			// back to the same value of its dtype: 0.906, not 0.90600002.
			bits := 64
			if x.DType() == nd.Float32 {
				bits = 32
			}
			return pyFloat(x.Flat(0), bits)
		}
		return x.String()
	case []int:
		parts := make([]string, len(x))
		for i, n := range x {
			parts[i] = strconv.Itoa(n)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []float64:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = pyFloat(f, 64)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = pyRepr(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case mainloop.Tuple:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case mainloop.Dict:
		parts := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x.Values[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case time.Duration:
		return pyFloat(x.Seconds(), 64)
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// pyRepr is Python's repr for list elements: strings quoted.
func pyRepr(v any) string {
	if s, ok := v.(string); ok {
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
	}
	return FormatValue(v)
}

// pyFloat is Python's repr of a float (numpy's str for float32): the
// shortest digits that read back, positional between 1e-4 and 1e16.
func pyFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	if a := math.Abs(v); a != 0 && (a >= 1e16 || a < 1e-4) {
		return strconv.FormatFloat(v, 'e', -1, bits)
	}
	s := strconv.FormatFloat(v, 'f', -1, bits)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// Timing adds timing records to the log (Blocks' Timing): before the
// first epoch time_initialization; after an epoch (or batch, when
// triggered there) <prefix>_time_train_this_epoch,
// <prefix>_time_read_data_this_epoch and the totals
// <prefix>_time_train_total, <prefix>_time_read_data_total, in seconds.
// Defaults: before_first_epoch and after_epoch.
type Timing struct {
	*SimpleExtension
	Prefix string

	current, previous           map[string]map[string]float64
	currentIndex, previousIndex map[string]map[string]int
}

// NewTiming returns Blocks' Timing(prefix, **triggers).
func NewTiming(prefix string, triggers Triggers) (*Timing, error) {
	t := &Timing{Prefix: prefix}
	if t.Prefix != "" {
		t.Prefix += "_"
	}
	t.current, t.previous = timingFloats(), timingFloats()
	t.currentIndex, t.previousIndex = timingInts(), timingInts()
	se, err := newSimple("Timing", t.do, triggers, Triggers{TriggerBeforeFirstEpoch: true, TriggerAfterEpoch: true})
	if err != nil {
		return nil, err
	}
	t.SimpleExtension = se
	return t, nil
}

func timingFloats() map[string]map[string]float64 {
	return map[string]map[string]float64{"batch": {"train": 0, "read_data": 0}, "epoch": {"train": 0, "read_data": 0}}
}

func timingInts() map[string]map[string]int {
	return map[string]map[string]int{"batch": {"train": 0, "read_data": 0}, "epoch": {"train": 0, "read_data": 0}}
}

func (t *Timing) do(c Call) error {
	row := c.MainLoop.Log.CurrentRow()
	prof := c.MainLoop.Profile
	var level string
	var counter int
	switch c.Callback {
	case mainloop.BeforeEpoch:
		row["time_initialization"] = prof.Initialization.Seconds()
		return nil
	case mainloop.AfterBatch:
		level, counter = "batch", c.MainLoop.Log.Status.IterationsDone
	case mainloop.AfterEpoch:
		level, counter = "epoch", c.MainLoop.Log.Status.EpochsDone
	default:
		return fmt.Errorf("Timing: wrong callback type `%s`", c.Callback)
	}
	for _, action := range []string{"train", "read_data"} {
		t.previousIndex[level][action] = t.currentIndex[level][action]
		t.currentIndex[level][action] = counter
		cur, prev := t.currentIndex[level][action], t.previousIndex[level][action]
		if cur == prev {
			continue
		}
		t.previous[level][action] = t.current[level][action]
		total := prof.Train
		if action == "read_data" {
			total = prof.ReadData
		}
		t.current[level][action] = total.Seconds()
		row[fmt.Sprintf("%stime_%s_this_%s", t.Prefix, action, level)] =
			(t.current[level][action] - t.previous[level][action]) / float64(cur-prev)
		row[fmt.Sprintf("%stime_%s_total", t.Prefix, action)] = t.current[level][action]
	}
	return nil
}

// EpochLengther is a data stream that knows how many batches an epoch
// has; ProgressBar uses it when the stream implements it.
type EpochLengther interface {
	BatchesPerEpoch() (int, bool)
}
