package mainloop

import (
	"fmt"
	"strings"
)

// ResumedChain is the run uuid and the runs it continues, newest first:
// it follows the status record resumed_from (StatusResumedFrom) through
// parent, which gives a run's resumed_from ("" for a run that resumed
// nothing) and whether the run is known at all. Every reader of a log
// that chains runs (the SQLite back-end's Load, the dashboard) walks it
// here.
//
// The walk stops at a run that is not known (the run it continues logged
// elsewhere) and at a cycle (which only a hand-edited or forged log
// holds), returning the chain up to there with an error that says which.
func ResumedChain(uuid string, parent func(uuid string) (resumedFrom string, known bool)) ([]string, error) {
	chain := []string{uuid}
	seen := map[string]bool{uuid: true}
	for cur := uuid; ; {
		p, ok := parent(cur)
		if !ok || p == "" {
			return chain, nil
		}
		if seen[p] {
			return chain, fmt.Errorf("the resumed_from chain has a cycle: %s -> %s", strings.Join(chain, " -> "), p)
		}
		if _, known := parent(p); !known {
			return chain, fmt.Errorf("run %s was resumed from %s, which is not in this log", cur, p)
		}
		seen[p] = true
		chain = append(chain, p)
		cur = p
	}
}
