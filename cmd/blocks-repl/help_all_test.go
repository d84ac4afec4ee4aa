package main

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"

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
			found, signed, described := false, false, false
			_, callable := m.Members[name].(starlark.Callable)
			for _, sec := range docs.Lookup(mod + "." + name) {
				if strings.Contains(sec.Text, "`"+name) || strings.Contains(sec.Text, "."+name+"(") {
					found = true
					// A signature: name( ... ) for what a script calls.
					signed = signed || !callable || strings.Contains(sec.Text, name+"(")
					// A few words on it besides the signature.
					described = described || len(strings.Fields(sec.Text)) >= 4
				}
			}
			switch {
			case !found:
				t.Errorf(":help %s.%s: no documentation entry names it", mod, name)
			case !signed:
				t.Errorf(":help %s.%s: its entry has no signature %s(...)", mod, name, name)
			case !described:
				t.Errorf(":help %s.%s: its entry has no description", mod, name)
			}
		}
	}
	if n-nFuel < 300 || nFuel < 40 {
		t.Errorf("only %d names checked (%d of them fuel.*)", n, nFuel)
	}
}
