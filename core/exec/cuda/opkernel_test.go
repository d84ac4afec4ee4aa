package cuda

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// These tests read the backend's source and core's (they run without the
// cuda tag and without a GPU): the kernel table of opkernel.go is built
// only with the tag.

// kernelTable is opkernel.go's opKernels: each kind and the function
// registered for it.
func kernelTable(t *testing.T) map[string]string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "opkernel.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]string{}
	found := false
	ast.Inspect(file, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "opKernels" || len(vs.Values) != 1 {
			return true
		}
		found = true
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			t.Fatal("opKernels is not a map literal")
		}
		for _, el := range lit.Elts {
			kv := el.(*ast.KeyValueExpr)
			k, kok := kv.Key.(*ast.BasicLit)
			f, fok := kv.Value.(*ast.Ident)
			if !kok || !fok || k.Kind != token.STRING {
				t.Fatalf("opKernels entry %#v: want \"kind\": function", kv)
			}
			kind, _ := strconv.Unquote(k.Value)
			table[kind] = f.Name
		}
		return false
	})
	if !found {
		t.Fatal("no opKernels in opkernel.go")
	}
	return table
}

// The kernel table registers exactly the kinds route.go routes to the GPU,
// each to a function of the package with an opKernel's signature, and
// none of the kinds declared for the CPU.
func TestKernelTableMatchesRoutes(t *testing.T) {
	table := kernelTable(t)
	for kind := range gpuRoutes {
		if _, ok := table[kind]; !ok {
			t.Errorf("kind %q is routed to the GPU but has no kernel in opKernels", kind)
		}
	}
	for kind := range table {
		if _, ok := gpuRoutes[kind]; !ok {
			t.Errorf("kind %q has a kernel in opKernels but no route in gpuRoutes", kind)
		}
		if _, ok := cpuKinds[kind]; ok {
			t.Errorf("kind %q has a kernel and a declared CPU route", kind)
		}
	}
	// Each function registered is a kernel: func(s *opStep) (bool, error).
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	kernels := map[string]bool{}
	fset := token.NewFileSet()
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
			if !ok || fd.Recv != nil || len(fd.Type.Params.List) != 1 || fd.Type.Results == nil || len(fd.Type.Results.List) != 2 {
				continue
			}
			if star, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == "opStep" {
					kernels[fd.Name.Name] = true
				}
			}
		}
	}
	for kind, f := range table {
		if !kernels[f] {
			t.Errorf("kind %q: %s is not a function of an *opStep", kind, f)
		}
	}
	if len(table) < 40 {
		t.Errorf("found only %d kernels", len(table))
	}
}

// coreOps is every op type of package core (a type with the Op
// interface's Grad method, as the CPU backend's TestEveryOpHasAKernel
// finds them) and the kinds core.Spec gives it: the string literals its
// case of Spec's and specExt's type switches assigns to the kind (none
// for an op named in the case of the ops without a description). An op
// named in no case is absent from kinds.
func coreOps(t *testing.T) (ops map[string]bool, kinds map[string][]string) {
	t.Helper()
	files, err := filepath.Glob("../../*.go")
	if err != nil {
		t.Fatal(err)
	}
	ops, kinds = map[string]bool{}, map[string][]string{}
	fset := token.NewFileSet()
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
			if !ok {
				continue
			}
			if fd.Recv != nil && fd.Name.Name == "Grad" && len(fd.Type.Params.List) == 2 {
				if id, ok := typeName(fd.Recv.List[0].Type); ok {
					ops[id] = true
				}
			}
			if fd.Recv == nil && (fd.Name.Name == "Spec" || fd.Name.Name == "specExt") {
				specCases(fd.Body, kinds)
			}
		}
	}
	return ops, kinds
}

// typeName is T for the type expressions T and *T.
func typeName(e ast.Expr) (string, bool) {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	id, ok := e.(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

// specCases adds the op types named in the cases of body's type switches
// with the kinds each case assigns (kind = "..." or OpSpec{Kind: "..."}).
func specCases(body *ast.BlockStmt, kinds map[string][]string) {
	ast.Inspect(body, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSwitchStmt)
		if !ok {
			return true
		}
		for _, c := range ts.Body.List {
			cc := c.(*ast.CaseClause)
			ks := []string{}
			ast.Inspect(cc, func(n ast.Node) bool {
				var lit ast.Expr
				switch x := n.(type) {
				case *ast.AssignStmt:
					for k, l := range x.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name == "kind" && k < len(x.Rhs) {
							lit = x.Rhs[k]
						}
					}
				case *ast.KeyValueExpr:
					if id, ok := x.Key.(*ast.Ident); ok && id.Name == "Kind" {
						lit = x.Value
					}
				}
				if b, ok := lit.(*ast.BasicLit); ok && b.Kind == token.STRING {
					s, _ := strconv.Unquote(b.Value)
					ks = append(ks, s)
				}
				return true
			})
			for _, e := range cc.List {
				if name, ok := typeName(e); ok {
					kinds[name] = ks
				}
			}
		}
		return false
	})
}

// TestEveryOpHasACUDARoute: every op of core (the ops the CPU backend has
// a kernel for, TestEveryOpHasAKernel) runs on the GPU through a kernel
// registered for its kind (opKernels, routed in gpuRoutes) or takes a
// declared CPU route: its kind in cpuKinds, or no kind, the op named in
// core.Spec's case for the ops without a description (undescribed). An op
// core.Spec does not name at all is an error: adding an op means its
// description (or its place among the undescribed) and a kernel here or
// a declared route.
func TestEveryOpHasACUDARoute(t *testing.T) {
	table := kernelTable(t)
	ops, kinds := coreOps(t)
	if len(ops) < 40 {
		t.Fatalf("found %d op types in core", len(ops))
	}
	var gpu, cpu, none []string
	for op := range ops {
		ks, named := kinds[op]
		if !named {
			t.Errorf("op %s is named in no case of core.Spec: describe it (a kind with a kernel in opKernels, or one of cpuKinds) or name it among the ops without a description", op)
			continue
		}
		if len(ks) == 0 {
			none = append(none, op)
			continue
		}
		for _, k := range ks {
			_, kernel := table[k]
			_, declared := cpuKinds[k]
			switch {
			case kernel && declared:
				t.Errorf("op %s: kind %q has a kernel and a declared CPU route", op, k)
			case kernel:
				gpu = append(gpu, op+" ("+k+")")
			case declared:
				cpu = append(cpu, op+" ("+k+")")
			default:
				t.Errorf("op %s: kind %q has no CUDA kernel (opKernels) and no declared CPU route (cpuKinds)", op, k)
			}
		}
	}
	for op := range kinds {
		if !ops[op] {
			t.Errorf("core.Spec names %s, which is not an op type of core", op)
		}
	}
	for _, l := range [][]string{gpu, cpu, none} {
		sort.Strings(l)
	}
	t.Logf("on the GPU: %s", strings.Join(gpu, ", "))
	t.Logf("on the CPU (cpuKinds): %s", strings.Join(cpu, ", "))
	t.Logf("on the CPU (%s): %s", undescribed, strings.Join(none, ", "))
	if !slices.Contains(gpu, "ElemOp (elemwise)") {
		t.Errorf("ElemOp is not among the ops on the GPU: the source's form changed under the test")
	}
}
