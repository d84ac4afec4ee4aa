package docs

import (
	"regexp"
	"strings"
	"testing"
)

// Every public class and function of Blocks' modules is named in
// docs/reference.md: documented, or listed with the reason it is not
// provided ("Blocks names not provided as such").
func TestBlocksAPIComplete(t *testing.T) {
	api := readAPI(t, "blocks-api.json")
	b, err := files.ReadFile("reference.md")
	if err != nil {
		t.Fatal(err)
	}
	all := string(b)
	n := 0
	for _, m := range api.Modules {
		var names []string
		for _, c := range m.Classes {
			names = append(names, c.Name)
		}
		for _, f := range m.Functions {
			names = append(names, f.Name)
		}
		for _, name := range names {
			if strings.HasPrefix(name, "_") {
				continue
			}
			n++
			if !regexp.MustCompile("`[^`\n]*\\b" + regexp.QuoteMeta(name) + "\\b").MatchString(all) {
				t.Errorf("%s.%s is named nowhere in docs/reference.md", m.Module, name)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d public Blocks names checked", n)
	}
}
