package layout_test

import (
	"go/ast"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTestsSelfContained keeps make test self-contained (issue 33): the
// suite needs nothing outside the repository. The project's shared data
// (../shared: full MNIST, the PyTorch baselines) reaches a test only
// through fixtures.Shared, which only acceptance tests (TestAccept...,
// make accept), the soak (TestSoak) and benchmarks call, and which skips a
// test without BLOCKS_ACCEPT=1. So no Go file but internal/fixtures and
// make bench's report tool (bench/) names BLOCKS_SHARED or ../shared in a
// string, no testdata script sets a path from $BLOCKS_SHARED, and no
// product code imports internal/fixtures.
func TestTestsSelfContained(t *testing.T) {
	fset := token.NewFileSet()
	files := parseModule(t, fset, "../..")
	const fixtures = module + "internal/fixtures"
	checked := 0
	for _, mf := range files {
		pos := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
		exempt := mf.dir == "internal/fixtures" || mf.dir == "internal/layout" || under(mf.dir, "bench")
		ast.Inspect(mf.f, func(n ast.Node) bool {
			if exempt {
				return false
			}
			switch n := n.(type) {
			case *ast.BasicLit:
				if s := stringLit(n); strings.Contains(s, "BLOCKS_SHARED") || strings.Contains(s, "../shared") {
					t.Errorf("%s: %s: the shared data reaches tests only through fixtures.Shared (acceptance tests, benchmarks, the soak)", pos(n), n.Value)
				}
			case *ast.CallExpr: // filepath.Join("..", "..", "shared")
				up, shared := false, false
				for _, a := range n.Args {
					if l, ok := a.(*ast.BasicLit); ok {
						up = up || stringLit(l) == ".."
						shared = shared || stringLit(l) == "shared"
					}
				}
				if up && shared {
					t.Errorf("%s: a path to ../shared: the shared data reaches tests only through fixtures.Shared", pos(n))
				}
			}
			return true
		})
		local := ""
		for _, im := range mf.f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == fixtures {
				local = "fixtures"
				if im.Name != nil {
					local = im.Name.Name
				}
				if !mf.test {
					t.Errorf("%s: product code imports internal/fixtures (test data)", pos(im))
				}
			}
		}
		if local == "" {
			continue
		}
		checked++
		for _, d := range mf.f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			allowed := strings.HasPrefix(fn.Name.Name, "TestAccept") || strings.HasPrefix(fn.Name.Name, "TestSoak") ||
				strings.HasPrefix(fn.Name.Name, "Benchmark") || takesB(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Shared" {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == local && !allowed {
					t.Errorf("%s: %s calls fixtures.Shared: only TestAccept..., TestSoak and benchmarks use the shared data (make test needs nothing outside the repository)", pos(sel), fn.Name.Name)
				}
				return true
			})
		}
	}
	if checked < 5 {
		t.Errorf("found %d test files importing internal/fixtures: is the module root ../..?", checked)
	}
	// The scripts the tests run (testdata) take no path from BLOCKS_SHARED.
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != "../.." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.Contains(filepath.ToSlash(p), "/testdata/") || !strings.HasSuffix(p, ".star") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "$BLOCKS_SHARED") {
			t.Errorf("%s: a test script reads $BLOCKS_SHARED (write the data with an option:fixture instead)", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stringLit is the value of a string literal, else "".
func stringLit(l *ast.BasicLit) string {
	if l.Kind != token.STRING {
		return ""
	}
	s, _ := strconv.Unquote(l.Value)
	return s
}

// takesB says whether fn has a *testing.B parameter (a benchmark's
// helper).
func takesB(fn *ast.FuncDecl) bool {
	for _, f := range fn.Type.Params.List {
		if st, ok := f.Type.(*ast.StarExpr); ok {
			if sel, ok := st.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "B" {
				return true
			}
		}
	}
	return false
}
