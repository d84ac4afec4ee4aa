package all

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
	"github.com/blocks-go/blocks/starlib/json"
	"github.com/blocks-go/blocks/starlib/numpy"
	"github.com/blocks-go/blocks/starlib/tensor"
)

// families are the module packages, by directory, with their modules.
func families() map[string][]*starlarkstruct.Module {
	return map[string][]*starlarkstruct.Module{
		"../json":   {json.Module},
		"..":        {starlib.ConfigModule},
		"../numpy":  numpy.Modules(),
		"../tensor": tensor.Modules(),
		"../blocks": starblocks.Modules(),
		"../fuel":   starfuel.Modules(),
	}
}

// moduleDocs is the text of the doc comments that document a package's
// modules: those of its exported Module variables and of the functions
// that return modules (go.starlark.net's lib/math style: the comment
// lists the builtins with their signatures).
func moduleDocs(t *testing.T, dir string) string {
	t.Helper()
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		// Free-standing module docs: "Module blocks.roles: ...", "More of
		// blocks.initialization: ...".
		for _, cg := range f.Comments {
			if t := cg.Text(); strings.HasPrefix(t, "Module ") || strings.HasPrefix(t, "More of ") {
				b.WriteString(t)
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok {
						continue
					}
					for _, n := range vs.Names {
						if strings.HasSuffix(n.Name, "Module") {
							b.WriteString(d.Doc.Text())
							b.WriteString(vs.Doc.Text())
						}
					}
				}
			case *ast.FuncDecl:
				if strings.HasSuffix(d.Name.Name, "Modules") {
					b.WriteString(d.Doc.Text())
				}
			}
		}
	}
	return b.String()
}

// TestModuleDocsListMembers checks every name a script loads against the
// modules' doc comments: each member of each module appears there, as
// the Go reader's list of builtins. (cmd/blocks-repl's
// TestHelpForEveryName checks the same names against docs/, which :help
// prints.)
func TestModuleDocsListMembers(t *testing.T) {
	n := 0
	for dir, mods := range families() {
		doc := moduleDocs(t, dir)
		var missing []string
		for _, m := range mods {
			for name := range m.Members {
				n++
				if !listed(doc, name) {
					missing = append(missing, m.Name+"."+name)
				}
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s: the module docs do not list %d members: %s", dir, len(missing), strings.Join(missing, ", "))
		}
	}
	if n < 100 {
		t.Errorf("only %d members checked", n)
	}
}

// listed reports whether doc names name: as a word, or by a prefix
// ending in * (BATCH_NORM_* lists BATCH_NORM_OFFSET).
func listed(doc, name string) bool {
	if regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(name) + `\b`).MatchString(doc) {
		return true
	}
	for _, m := range regexp.MustCompile(`\b(\w+)\*`).FindAllStringSubmatch(doc, -1) {
		if strings.HasPrefix(name, m[1]) {
			return true
		}
	}
	return false
}

// TestLibrary checks that the standard library builds: no member is
// defined twice.
func TestLibrary(t *testing.T) {
	lib := Library()
	for _, want := range []string{"numpy", "numpy.random", "tensor", "tensor.nnet", "theano", "theano.tensor", "json", "math", "blocks.bricks", "fuel.datasets"} {
		if _, ok := lib.Lookup(want); !ok {
			t.Errorf("no module %s", want)
		}
	}
}
