package scripts

import (
	"strings"
	"testing"
)

// TestFuelStreamsScript runs the Fuel pipeline walkthrough twice: the
// outputs agree (every draw is seeded) and say what the script shows.
func TestFuelStreamsScript(t *testing.T) {
	_, out := run(t, "fuel_streams.star", nil)
	_, again := run(t, "fuel_streams.star", nil)
	if out != again {
		t.Errorf("two runs differ:\n%s\n---\n%s", out, again)
	}
	for _, want := range []string{
		`sources: ("words", "words_mask")`,
		"image batch (16, 1728) float32",
		"resumed 3 batches, identical: True",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var tri string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "trigrams:") {
			tri = l
		}
	}
	f := strings.Fields(tri)
	if len(f) != 4 || f[1] != f[3] {
		t.Errorf("trigram count line %q", tri)
	}
}
