package docs

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/internal/fixtures"
)

// fuelAPI is internal/fixtures' api/fuel-api.json (or blocks-api.json):
// every public module, class and function of Fuel (Blocks), read from its
// source.
type fuelAPI struct {
	Modules []struct {
		Module  string
		Classes []struct {
			Name  string
			Bases []string
			Init  []apiParam
		}
		Functions []struct {
			Name   string
			Params []apiParam
		}
	}
}

type apiParam struct {
	Name    string
	Default *string
}

// fuelDocs are the files that document Fuel's API.
var fuelDocs = []string{"fuel-data.md", "fuel-streams.md", "fuel-server.md"}

// projectAdditions are documented signatures Fuel does not have, or
// parameters the project adds: each departure is explained where it is
// documented.
var projectAdditions = map[string]string{
	"EmbeddedMNIST":    "the MNIST subset shipped in the binary",
	"start_server":     "host: the address bound (loopback by default; docs/fuel-server.md)",
	"ServerDataStream": "timeout: seconds to wait for a batch (docs/fuel-server.md)",
	"fill_hdf5_file":   "a path where Fuel takes an open h5py file (h5file); axis_labels and attributes written with it",
	"Window":           "step_size: how far the window moves (Fuel's moves by 1)",
	"OneBillionWord":   "the keywords are TextFile's (Fuel passes **kwargs on)",
}

// readAPI reads an API inventory (fuel-api.json, blocks-api.json) from
// internal/fixtures' api/.
func readAPI(t *testing.T, file string) fuelAPI {
	t.Helper()
	b, err := fixtures.Read("api/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var api fuelAPI
	if err := json.Unmarshal(b, &api); err != nil {
		t.Fatal(err)
	}
	return api
}

// loadFuelAPI reads the reference.
func loadFuelAPI(t *testing.T) (map[string][][]apiParam, map[string]bool) {
	t.Helper()
	api := readAPI(t, "fuel-api.json")
	// A class's __init__, through its bases when it has none of its own
	// (SequentialScheme is BatchScheme's) or only passes *args, **kwargs
	// on (ShuffledScheme).
	type class struct {
		bases []string
		init  []apiParam
	}
	classes := map[string]class{}
	for _, m := range api.Modules {
		for _, c := range m.Classes {
			classes[c.Name] = class{c.Bases, c.Init}
		}
	}
	var initOf func(name string, depth int) []apiParam
	initOf = func(name string, depth int) []apiParam {
		c, ok := classes[name]
		if !ok || depth > 10 {
			return nil
		}
		onlyForward := len(c.init) > 0
		for _, p := range c.init {
			if !strings.HasPrefix(p.Name, "*") {
				onlyForward = false
			}
		}
		if len(c.init) == 0 || onlyForward {
			for _, b := range c.bases {
				if in := initOf(b, depth+1); in != nil {
					if onlyForward {
						// The class takes more keywords than its base
						// (ShuffledScheme's rng): keep its **kwargs.
						in = append(slices.Clone(in), apiParam{Name: "**kwargs"})
					}
					return in
				}
			}
		}
		return c.init
	}
	sigs := map[string][][]apiParam{}
	public := map[string]bool{}
	for _, m := range api.Modules {
		for _, c := range m.Classes {
			sigs[c.Name] = append(sigs[c.Name], initOf(c.Name, 0))
			public[m.Module+"."+c.Name] = true
		}
		for _, f := range m.Functions {
			sigs[f.Name] = append(sigs[f.Name], f.Params)
			public[m.Module+"."+f.Name] = true
		}
	}
	return sigs, public
}

// entryRE finds an API entry: a list item starting with signatures in
// backquotes ("- `Name(params)` —" or "- `A(...)`, `B(...)` —").
var (
	entryRE = regexp.MustCompile("^- ((?:`[A-Za-z_][A-Za-z_0-9.]*\\([^`]*\\)`(?:, )?)+)")
	sigRE   = regexp.MustCompile("`([A-Za-z_][A-Za-z_0-9.]*)\\(([^`]*)\\)`")
)

// splitParams splits a parameter list at its top-level commas.
func splitParams(s string) []apiParam {
	var out []apiParam
	depth, start := 0, 0
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p == "" {
			return
		}
		if n, d, ok := strings.Cut(p, "="); ok {
			d = strings.TrimSpace(d)
			out = append(out, apiParam{Name: strings.TrimSpace(n), Default: &d})
		} else {
			out = append(out, apiParam{Name: p})
		}
	}
	for i, c := range s {
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// sameDefault compares defaults as Python values: quotes and 1. vs 1.0
// aside.
func sameDefault(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	norm := func(s string) string {
		s = strings.ReplaceAll(s, "'", "\"")
		s = strings.TrimPrefix(s, "math.")
		if strings.HasSuffix(s, ".") {
			s += "0"
		}
		return s
	}
	return norm(*a) == norm(*b)
}

// matches says whether a documented signature agrees with Fuel's: Fuel's
// named parameters first, in order, with the same defaults (a trailing
// "..." stands for the rest); more parameters only where Fuel passes
// **kwargs (or *args) on to a base class, or where the project says why.
func matches(doc, up []apiParam, name string) bool {
	var named []apiParam
	forwards := false
	for _, p := range up {
		if p.Name == "self" {
			continue
		}
		if strings.HasPrefix(p.Name, "*") {
			forwards = true
			continue
		}
		named = append(named, p)
	}
	ellipsis := len(doc) > 0 && doc[len(doc)-1].Name == "..."
	if ellipsis {
		doc = doc[:len(doc)-1]
	}
	if len(doc) < len(named) && !ellipsis {
		return false
	}
	for i, p := range named {
		if i >= len(doc) {
			return ellipsis
		}
		if doc[i].Name != p.Name || !sameDefault(doc[i].Default, p.Default) {
			// A documented rename (fill_hdf5_file's path for h5file).
			if !(i == 0 && name == "fill_hdf5_file" && doc[i].Name == "path") {
				return false
			}
		}
	}
	return len(doc) == len(named) || forwards || projectAdditions[name] != ""
}

// The API entries of docs/fuel-*.md give Fuel's signatures: every
// documented class or function that Fuel has takes Fuel's parameters, in
// Fuel's order, with Fuel's defaults.
func TestFuelSignaturesMatchFuel(t *testing.T) {
	sigs, _ := loadFuelAPI(t)
	n := 0
	for _, file := range fuelDocs {
		b, err := files.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			m := entryRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			for _, s := range sigRE.FindAllStringSubmatch(m[1], -1) {
				name := s[1][strings.LastIndex(s[1], ".")+1:]
				doc := splitParams(s[2])
				ups, ok := sigs[name]
				if !ok {
					if projectAdditions[name] == "" {
						t.Errorf("%s: %s(%s) is not in Fuel's API: say why in projectAdditions, or fix the name", file, name, s[2])
					}
					continue
				}
				n++
				found := false
				for _, up := range ups {
					if matches(doc, up, name) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: %s(%s) does not match Fuel's signature %v", file, name, s[2], describe(ups))
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d documented signatures checked", n)
	}
}

func describe(ups [][]apiParam) []string {
	var out []string
	for _, up := range ups {
		var ps []string
		for _, p := range up {
			if p.Default != nil {
				ps = append(ps, p.Name+"="+*p.Default)
			} else {
				ps = append(ps, p.Name)
			}
		}
		out = append(out, "("+strings.Join(ps, ", ")+")")
	}
	return out
}

// Every public class and function of Fuel's modules that scripts use is
// named in docs/fuel-*.md: documented, or listed with the reason it is
// not provided.
func TestFuelAPIComplete(t *testing.T) {
	_, public := loadFuelAPI(t)
	var text strings.Builder
	for _, file := range fuelDocs {
		b, err := files.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text.Write(b)
	}
	all := text.String()
	for full := range public {
		mod, name := full[:strings.LastIndex(full, ".")], full[strings.LastIndex(full, ".")+1:]
		if strings.HasPrefix(mod, "fuel.bin") || strings.HasPrefix(mod, "fuel.downloaders") {
			continue // the command line (docs/fuel-server.md, fuel-data.md: blocks-repl fuel ...)
		}
		if !regexp.MustCompile("`[^`\n]*\\b" + regexp.QuoteMeta(name) + "\\b").MatchString(all) {
			t.Errorf("%s is named nowhere in %v", full, fuelDocs)
		}
	}
}
