package extensions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/internal/termsafe"
	"github.com/blocks-go/blocks/train/mainloop"
)

// oneLine is Printing's text in its one-line mode (OneLine): one line per
// call instead of Blocks' block of the status and the row, e.g.
//
//	epoch 3 (iteration 300): test_error_rate 0.052, train_cost 0.183
func (p *Printing) oneLine(c Call) string {
	log := c.MainLoop.Log
	st := log.Status
	var head string
	records := true
	switch {
	case c.Callback == mainloop.BeforeEpoch && st.EpochsDone == 0:
		head = "before training"
	case c.Callback == mainloop.OnResumption:
		head = fmt.Sprintf("training resumed at epoch %d (iteration %d)", st.EpochsDone, st.IterationsDone)
		records = false
	case c.Callback == mainloop.AfterTraining:
		head = fmt.Sprintf("training finished after %d epochs (iteration %d)", st.EpochsDone, st.IterationsDone)
		records = false
	case c.Callback == mainloop.OnInterrupt:
		head = fmt.Sprintf("training interrupted in epoch %d (iteration %d)", st.EpochsDone+1, st.IterationsDone)
		records = false
	case c.Callback == mainloop.AfterEpoch:
		head = fmt.Sprintf("epoch %d (iteration %d)", st.EpochsDone, st.IterationsDone)
	default:
		head = fmt.Sprintf("iteration %d (epoch %d)", st.IterationsDone, st.EpochsDone+1)
	}
	if !records {
		return head + "\n"
	}
	row := log.CurrentRow()
	keys := make([]string, 0, len(row))
	for k := range row {
		if !strings.HasPrefix(k, "_") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		// An array prints on several lines: here on one.
		v := strings.Join(strings.Fields(FormatValue(row[k])), " ")
		parts[i] = termsafe.Escape(k) + " " + termsafe.Escape(v)
	}
	if len(parts) == 0 {
		return head + "\n"
	}
	return head + ": " + strings.Join(parts, ", ") + "\n"
}
