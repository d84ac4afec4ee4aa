package starlib

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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

// readBlocksClasses reads ../shared/reference/api/blocks-api.json: every
// class by name (a name may have several modules).
func readBlocksClasses(t *testing.T) map[string][]*blocksClass {
	t.Helper()
	shared := os.Getenv("BLOCKS_SHARED")
	if shared == "" {
		shared = filepath.Join("..", "..", "shared")
	}
	data, err := os.ReadFile(filepath.Join(shared, "reference", "api", "blocks-api.json"))
	if err != nil {
		t.Fatalf("Blocks' API inventory: %v (set BLOCKS_SHARED)", err)
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
	ref, err := os.ReadFile(filepath.Join("..", "docs", "reference.md"))
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

// TestClassTableBinder checks the binder's rules on one table: Python's
// binding, Blocks' defaults, and the errors.
func TestClassTableBinder(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`Adam().learning_rate.get_value()`, "0.002"},
		{`Adam(0.1, 0.5).beta1.get_value()`, "0.5"},
		{`Adam(beta2=0.5).beta2.get_value()`, "0.5"},
		{`Adam(1, 2, 3, 4, 5, 6)`, "Adam takes at most 5 positional arguments (learning_rate, beta1, beta2, epsilon, decay_factor), got 6"},
		{`Adam(lr=1)`, "Adam got an unexpected keyword argument lr (it takes beta1, beta2, decay_factor, epsilon, learning_rate)"},
		{`Adam(0.1, learning_rate=1)`, "Adam got multiple values for argument learning_rate"},
		{`Adam("x")`, "Adam: for parameter learning_rate: got string, want a number"},
		{`Restrict(Scale())`, "Restrict: missing argument for variables"},
		{`StepClipping().threshold`, "None"},
		{`StepClipping(None).threshold`, "None"},
	} {
		got := evalBlocks(t, `load("blocks.algorithms", "Adam", "Restrict", "Scale", "StepClipping")`, c.src)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.src, got, c.want)
		}
	}
}

// TestClassTableBricksAndExtensions: the binder for brick classes (lazy
// arguments, Blocks' positional order, the rest set as attributes) and
// for extensions (the triggers beside the table's own).
func TestClassTableBricksAndExtensions(t *testing.T) {
	load := `load("blocks.bricks", "Linear", "Tanh", "MLP")
load("blocks.bricks.parallel", "Fork")
load("blocks.bricks.attention", "SequenceContentAttention")
load("blocks.extensions", "FinishAfter", "Timing")
load("blocks.extensions.saveload", "Checkpoint")`
	for _, c := range []struct{ src, want string }{
		{`Linear(3, 4).output_dim`, "4"},
		{`Linear().input_dim`, "NoneAllocation"},
		{`Linear(3, use_bias=False).use_bias`, "False"},
		{`Linear(3, 4, 5)`, "Linear takes at most 2 positional arguments (input_dim, output_dim), got 3"},
		{`Linear(input_dim="784")`, "input_dim must be an int, got string"},
		{`Tanh("t").name`, "t"},
		{`MLP([Tanh()], [2, 3], Linear(use_bias=False)).linear_transformations[0].use_bias`, "False"},
		{`MLP(dims=[2, 3])`, "MLP: missing argument for activations"},
		{`Fork(["a", "b"], 2, output_dims=[3, 4]).output_dims`, "[3, 4]"},
		{`Fork(["a"], 2, None, output_dims=[3]).input_dim`, "2"},
		{`SequenceContentAttention(5, state_names=["s"], attended_dim=3).match_dim`, "5"},
		{`SequenceContentAttention(5, 1)`, "state_transformer=1 is not supported"},
		{`FinishAfter(after_n_epochs=2).name`, "FinishAfter"},
		{`FinishAfter(1)`, "FinishAfter takes at most 0 positional arguments (), got 1"},
		{`Timing("p_", after_batch=True).name`, "Timing"},
		{`Timing(every_n_batches="x")`, "every_n_batches must be a bool or an int, got string"},
		{`Checkpoint("c.tar", None, None, True, False, 3)`, "Checkpoint takes at most 5 positional arguments"},
	} {
		got := evalBlocks(t, load, c.src)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.src, got, c.want)
		}
	}
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

// evalBlocks runs the load statement, then evaluates src: its value as
// text, or the error's message.
func evalBlocks(t *testing.T, load, src string) string {
	t.Helper()
	in, err := NewInterp(Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := in.ExecFile("t.star", []byte(load+"\nresult = "+src+"\n"))
	if err != nil {
		return err.Error()
	}
	return g["result"].String()
}

// TestClassTablesDocumented: the complete API in docs/reference.md shows
// each table's signature, as the table writes it.
func TestClassTablesDocumented(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("..", "docs", "reference.md"))
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
