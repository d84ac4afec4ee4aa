package main

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/docs"
	"github.com/blocks-go/blocks/starlib/all"
)

// TestHelpForEveryName checks that :help answers for every name a script
// can load: an entry that names it in code, with its signature when it is
// callable (docs/reference.md's complete API, docs/fuel-*.md for fuel.*,
// or a section of another docs file).
func TestHelpForEveryName(t *testing.T) {
	n, nFuel := 0, 0
	lib := all.Library()
	for _, mod := range lib.Names() {
		m, ok := lib.Lookup(mod)
		if !ok {
			continue
		}
		fuel := mod == "fuel" || strings.HasPrefix(mod, "fuel.")
		for name := range m.Members {
			if _, sub := lib.Lookup(mod + "." + name); sub {
				continue // a child module, documented by its members
			}
			n++
			if fuel {
				nFuel++
			}
			found := false
			for _, sec := range docs.Lookup(mod + "." + name) {
				if strings.Contains(sec.Text, "`"+name) || strings.Contains(sec.Text, "."+name+"(") {
					found = true
				}
			}
			if !found {
				t.Errorf(":help %s.%s: no documentation entry names it", mod, name)
			}
		}
	}
	if n-nFuel < 300 || nFuel < 40 {
		t.Errorf("only %d names checked (%d of them fuel.*)", n, nFuel)
	}
}
