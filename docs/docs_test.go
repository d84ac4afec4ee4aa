package docs

import (
	"strings"
	"testing"
)

// Every heading, table row and list item that documents a name is found
// by :help's lookup; a name documented nowhere is not.
func TestLookup(t *testing.T) {
	for name, want := range map[string]string{
		"MLP":               "A multi-layer perceptron",               // a heading in reference.md
		"blocks.bricks.MLP": "A multi-layer perceptron",               // qualified
		"blocks.extensions": "Extensions are called by the main loop", // a module heading
		"Adam":              "Adam",                                   // a table row in training.md
		"Padding":           "Padding",                                // fuel-streams.md
		"SequenceGenerator": "SequenceGenerator",
		"ShuffledScheme":    "ShuffledScheme",
	} {
		secs := Lookup(name)
		if len(secs) == 0 {
			t.Errorf("Lookup(%q) found nothing", name)
			continue
		}
		if !strings.Contains(secs[0].Text, want) {
			t.Errorf("Lookup(%q)[0] = %s:\n%s\nwant it to contain %q", name, secs[0].File, secs[0].Text, want)
		}
	}
	if got := Lookup("NoSuchBrickAnywhere"); len(got) != 0 {
		t.Errorf("Lookup of an undocumented name found %v", got)
	}
}

func TestSplitIgnoresHeadingsInCode(t *testing.T) {
	secs := split("x.md", "# A\ntext\n```\n# not a heading\n```\n## `B(x)`\nb text\n")
	if len(secs) != 2 || secs[1].Heading != "`B(x)`" || !strings.Contains(secs[0].Text, "# not a heading") {
		t.Errorf("split: %+v", secs)
	}
}
