package mainloop_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/train/mainloop"
)

// A chain is followed to its root; it stops with an error at a cycle and
// at a run the log does not hold, keeping what it walked.
func TestResumedChain(t *testing.T) {
	log := map[string]string{"c": "b", "b": "a", "a": "", "x": "y", "y": "z", "z": "x", "m": "gone"}
	parent := func(u string) (string, bool) { p, ok := log[u]; return p, ok }
	for _, c := range []struct {
		id    string
		chain []string
		err   string
	}{
		{"c", []string{"c", "b", "a"}, ""},
		{"a", []string{"a"}, ""},
		{"x", []string{"x", "y", "z"}, "cycle: x -> y -> z -> x"},
		{"m", []string{"m"}, "resumed from gone, which is not in this log"},
	} {
		chain, err := mainloop.ResumedChain(c.id, parent)
		if !slices.Equal(chain, c.chain) {
			t.Errorf("%s: chain %v, want %v", c.id, chain, c.chain)
		}
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: error %v, want %q", c.id, err, c.err)
		}
	}
}
