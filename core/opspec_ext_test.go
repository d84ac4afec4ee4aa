package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every op type of package core (a type with the Op interface's Grad
// method) has a case in Spec, so that a backend with kernels of its own
// either runs it or names it in its list of ops run on the CPU; and every
// kind Spec returns is in SpecKinds.
func TestSpecCoversEveryOp(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	ops := map[string]bool{}
	cases := map[string]bool{}
	kinds := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				// An op is a type with Op's Grad(in, out, gz).
				if n.Recv == nil || n.Name.Name != "Grad" || len(n.Type.Params.List) != 2 {
					break
				}
				rt := n.Recv.List[0].Type
				if s, ok := rt.(*ast.StarExpr); ok {
					rt = s.X
				}
				if id, ok := rt.(*ast.Ident); ok && strings.HasSuffix(id.Name, "Op") {
					ops[id.Name] = true
				}
			}
			if fd, ok := n.(*ast.FuncDecl); ok && (fd.Name.Name == "Spec" || fd.Name.Name == "specExt") && fd.Recv == nil {
				ast.Inspect(fd.Body, func(m ast.Node) bool {
					switch c := m.(type) {
					case *ast.CaseClause:
						for _, e := range c.List {
							if s, ok := e.(*ast.StarExpr); ok {
								e = s.X
							}
							if id, ok := e.(*ast.Ident); ok {
								cases[id.Name] = true
							}
						}
					case *ast.KeyValueExpr:
						if k, ok := c.Key.(*ast.Ident); ok && k.Name == "Kind" {
							if l, ok := c.Value.(*ast.BasicLit); ok {
								kinds[strings.Trim(l.Value, `"`)] = true
							}
						}
					case *ast.AssignStmt:
						for i, l := range c.Lhs {
							if id, ok := l.(*ast.Ident); ok && id.Name == "kind" && i < len(c.Rhs) {
								if v, ok := c.Rhs[i].(*ast.BasicLit); ok && v.Value != `""` {
									kinds[strings.Trim(v.Value, `"`)] = true
								}
							}
						}
					}
					return true
				})
			}
			return true
		})
	}
	if len(ops) < 40 {
		t.Fatalf("found only %d op types: %v", len(ops), ops)
	}
	for op := range ops {
		if !cases[op] {
			t.Errorf("op type %s has no case in Spec", op)
		}
	}
	for k := range kinds {
		if !slices.Contains(SpecKinds, k) {
			t.Errorf("Spec returns kind %q, which SpecKinds does not list", k)
		}
	}
	for _, k := range SpecKinds {
		if !kinds[k] {
			t.Errorf("SpecKinds lists %q, which Spec never returns", k)
		}
	}
}
