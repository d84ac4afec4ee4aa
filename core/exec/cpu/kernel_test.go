package cpu

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
)

// TestEveryOpHasAKernel: every op type of package core (a type with the Op
// interface's Grad method) has exactly one CPU kernel, the backend's own,
// registered in opKernels or opKernelMakers, and no Run or RunErr of its
// own (core.Runner is the fallback of ops defined outside core).
func TestEveryOpHasAKernel(t *testing.T) {
	files, err := filepath.Glob("../../*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	ops, runs := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Type.Params.List) != 2 {
				continue
			}
			rt := fd.Recv.List[0].Type
			if s, ok := rt.(*ast.StarExpr); ok {
				rt = s.X
			}
			id, ok := rt.(*ast.Ident)
			if !ok {
				continue
			}
			switch fd.Name.Name {
			case "Grad":
				ops[id.Name] = true
			case "Run", "RunErr":
				runs[id.Name] = true
			}
		}
	}
	if len(ops) < 40 {
		t.Fatalf("found %d op types in core", len(ops))
	}
	registered := map[string]bool{}
	types := []reflect.Type{}
	for typ := range opKernels {
		types = append(types, typ)
	}
	for typ := range opKernelMakers {
		if _, ok := opKernels[typ]; ok {
			t.Errorf("%s has a kernel and a kernel maker: one kernel per backend", typ)
		}
		types = append(types, typ)
	}
	for _, typ := range types {
		named := typ
		if typ.Kind() == reflect.Pointer {
			named = typ.Elem()
		}
		if named.PkgPath() != reflect.TypeFor[core.Op]().PkgPath() {
			t.Errorf("kernel registered for %s, not an op of core", typ)
		}
		registered[named.Name()] = true
		if _, ok := reflect.Zero(typ).Interface().(core.Runner); ok {
			t.Errorf("%s has a registered kernel and a Run of its own: one kernel per backend", typ.Name())
		}
	}
	for op := range ops {
		if !registered[op] {
			t.Errorf("op %s has no CPU kernel: register one in opKernels", op)
		}
		if runs[op] {
			t.Errorf("op %s keeps a Run of its own in core: its kernel is the backend's", op)
		}
	}
	for name := range registered {
		if !ops[name] {
			t.Errorf("kernel registered for %s, which is not an op type of core", name)
		}
	}
}
