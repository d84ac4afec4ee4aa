package extensions

import (
	"fmt"
	"strings"

	"github.com/blocks-go/blocks/train/mainloop"
)

// behind reports whether c can never hold again from log on: an
// after_n_epochs or after_n_batches target the count has reached (the
// predicate compares with ==, and counts only grow).
func (c condition) behind(log *mainloop.TrainingLog) bool {
	switch c.trigger {
	case TriggerAfterNEpochs:
		return log.Status.EpochsDone >= c.n
	case TriggerAfterNBatches:
		return log.Status.IterationsDone >= c.n
	}
	return false
}

// FinishPending is mainloop.Finisher: whether one of FinishAfter's
// conditions may still hold (a condition added with AddCondition always
// may).
func (f *FinishAfter) FinishPending(log *mainloop.TrainingLog) bool {
	for _, c := range f.conditions {
		if !c.behind(log) {
			return true
		}
	}
	return false
}

// String describes FinishAfter by its conditions:
// "FinishAfter(after_n_epochs=2)".
func (f *FinishAfter) String() string {
	var parts []string
	for _, c := range f.conditions {
		switch {
		case c.n > 0:
			parts = append(parts, fmt.Sprintf("%s=%d", c.trigger, c.n))
		case c.trigger != "":
			parts = append(parts, c.trigger+"=True")
		default:
			parts = append(parts, "a condition added with add_condition")
		}
	}
	return "FinishAfter(" + strings.Join(parts, ", ") + ")"
}

// FinishPending is mainloop.Finisher: patience may always run out.
func (f *FinishIfNoImprovementAfter) FinishPending(*mainloop.TrainingLog) bool { return true }
