package blocks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/internal/fixtures"
)

// blocksClass is a class of Blocks' API inventory.
type blocksClass struct {
	module string
	Name   string   `json:"name"`
	Bases  []string `json:"bases"`
	Init   []struct {
		Name    string  `json:"name"`
		Default *string `json:"default"`
	} `json:"init"`
}

// readBlocksClasses reads internal/fixtures' api/blocks-api.json: every
// class by name (a name may have several modules).
func readBlocksClasses(t *testing.T) map[string][]*blocksClass {
	t.Helper()
	data, err := fixtures.Read("api/blocks-api.json")
	if err != nil {
		t.Fatal(err)
	}
	var api struct {
		Modules []struct {
			Module  string         `json:"module"`
			Classes []*blocksClass `json:"classes"`
		} `json:"modules"`
	}
	if err := json.Unmarshal(data, &api); err != nil {
		t.Fatal(err)
	}
	out := map[string][]*blocksClass{}
	for _, m := range api.Modules {
		for _, c := range m.Classes {
			c.module = m.Module
			out[c.Name] = append(out[c.Name], c)
		}
	}
	return out
}

// blocksClassOf finds a table's class: the one of its name whose module
// is the table's or below it (blocks.bricks.Linear is
// blocks.bricks.simple.Linear).
func blocksClassOf(all map[string][]*blocksClass, module, name string) *blocksClass {
	var found *blocksClass
	for _, c := range all[name] {
		if c.module == module || strings.HasPrefix(c.module, module+".") {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}

// kwargsOf is what a class's **kwargs reaches: the parameters of its
// bases' __init__, through their own **kwargs, by name, with each one's
// default ("" when required) and the classes reached.
func kwargsOf(all map[string][]*blocksClass, c *blocksClass, params map[string]string, seen map[string]bool) {
	for _, b := range c.Bases {
		for _, bc := range all[b] {
			key := bc.module + "." + bc.Name
			if seen[key] {
				continue
			}
			seen[key] = true
			for _, p := range bc.Init {
				if strings.HasPrefix(p.Name, "*") {
					continue
				}
				if _, ok := params[p.Name]; !ok {
					params[p.Name] = def(p.Default)
				}
			}
			kwargsOf(all, bc, params, seen)
		}
	}
}

// initOf is the class whose __init__ c runs: c's own, or the first
// base's that has one (depth first, as Python's MRO for these classes).
func initOf(all map[string][]*blocksClass, c *blocksClass) *blocksClass {
	if c.Init != nil {
		return c
	}
	for _, b := range c.Bases {
		for _, bc := range all[b] {
			if i := initOf(all, bc); i != nil {
				return i
			}
		}
	}
	return nil
}

func def(d *string) string {
	if d == nil {
		return ""
	}
	return *d
}

// TestClassTablesMatchBlocks checks every class table against Blocks'
// own signatures: the positional parameters are Blocks' __init__
// parameters, in order, with the same defaults; each keyword-only one is
// a parameter of a base class's __init__ (reached through **kwargs), with
// its default; an extension's triggers go with a SimpleExtension. Each
// departure is listed in classTableDepartures, and documented in
// docs/reference.md's "Departures from Blocks' signatures".
func TestClassTablesMatchBlocks(t *testing.T) {
	all := readBlocksClasses(t)
	used := map[string]bool{}
	depart := func(key, msg string, args ...any) {
		if _, ok := classTableDepartures[key]; ok {
			used[key] = true
			return
		}
		t.Errorf(key+": "+msg, args...)
	}
	keys := make([]string, 0, len(classTables))
	for k := range classTables {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		tb := classTables[key]
		c := blocksClassOf(all, tb.Module, tb.Name)
		if c == nil {
			depart(key, "no class %s in Blocks' module %s or below it", tb.Name, tb.Module)
			continue
		}
		init := initOf(all, c)
		var pos []string
		var defaults []string
		hasKwargs := false
		for _, p := range init.Init {
			switch {
			case p.Name == "children" && init.Name == "Brick" && tb.param("children") == nil:
				// Brick's children: a script makes the bricks that hold
				// children; only the containers take them (documented).
			case p.Name == "**kwargs":
				hasKwargs = true
			case strings.HasPrefix(p.Name, "*"):
			default:
				pos = append(pos, p.Name)
				defaults = append(defaults, def(p.Default))
			}
		}
		var mine []classParam
		for _, p := range tb.Params {
			if !p.Keyword {
				mine = append(mine, p)
			}
		}
		if got := names(mine); strings.Join(got, ",") != strings.Join(pos, ",") {
			depart(key, "positional parameters %v, Blocks' are %v", got, pos)
		} else {
			for i, p := range mine {
				if want := defaults[i]; p.Default != want {
					depart(key+"."+p.Name, "default %q, Blocks' is %q", p.Default, want)
				}
				if p.Lazy && p.Default != "" {
					t.Errorf("%s.%s: a lazy parameter has no default", key, p.Name)
				}
			}
		}
		inherited := map[string]string{}
		kwargsOf(all, init, inherited, map[string]bool{})
		for _, p := range tb.Params {
			if !p.Keyword {
				continue
			}
			want, ok := inherited[p.Name]
			switch {
			case !hasKwargs:
				depart(key+"."+p.Name, "keyword %s, but Blocks' %s takes no **kwargs", p.Name, tb.Name)
			case !ok:
				depart(key+"."+p.Name, "keyword %s is no parameter of a base class of Blocks' %s", p.Name, tb.Name)
			case want != p.Default:
				depart(key+"."+p.Name, "default %q, Blocks' base class has %q", p.Default, want)
			}
		}
		if tb.Triggers && !descends(all, c, "SimpleExtension") {
			depart(key, "takes triggers, but Blocks' %s is no SimpleExtension", tb.Name)
		}
	}
	t.Logf("%d class tables checked against Blocks' signatures; %d listed departures", len(classTables), len(classTableDepartures))
	for k := range classTableDepartures {
		if !used[k] {
			t.Errorf("departure %s is listed but the table matches Blocks (remove it)", k)
		}
	}
	ref, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(ref), "## Departures from Blocks' signatures")
	if !ok {
		t.Fatal(`docs/reference.md has no section "## Departures from Blocks' signatures"`)
	}
	for k := range classTableDepartures {
		if !strings.Contains(section, "`"+k+"`") {
			t.Errorf("departure %s is not documented in docs/reference.md's \"Departures from Blocks' signatures\"", k)
		}
	}
}

func names(ps []classParam) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func descends(all map[string][]*blocksClass, c *blocksClass, base string) bool {
	if c.Name == base {
		return true
	}
	for _, b := range c.Bases {
		if b == base {
			return true
		}
		for _, bc := range all[b] {
			if descends(all, bc, base) {
				return true
			}
		}
	}
	return false
}

// TestClassSignature: :help's signature line comes from the table.
func TestClassSignature(t *testing.T) {
	lines, ok := ClassSignature("Adam")
	if !ok || len(lines) != 1 || lines[0] != "blocks.algorithms.Adam(learning_rate=0.002, beta1=0.9, beta2=0.999, epsilon=1e-08, decay_factor=1)" {
		t.Errorf("ClassSignature(Adam) = %q, %v", lines, ok)
	}
	if _, ok := ClassSignature("NoSuchClass"); ok {
		t.Error("ClassSignature(NoSuchClass) found something")
	}
}

// TestClassTablesDocumented: the complete API in docs/reference.md shows
// each table's signature, as the table writes it.
func TestClassTablesDocumented(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, api, _ := strings.Cut(string(ref), "## The complete API")
	sections := map[string]string{}
	for _, s := range strings.Split(api, "\n### ")[1:] {
		head, body, _ := strings.Cut(s, "\n")
		sections[strings.TrimSpace(head)] = body
	}
	for key, tb := range classTables {
		if !strings.Contains(sections[tb.Module], "\n| `"+tb.Signature()+"`") {
			t.Errorf("%s: docs/reference.md's complete API (### %s) has no row for `%s`", key, tb.Module, tb.Signature())
		}
	}
}
