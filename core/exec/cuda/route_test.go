package cuda

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
)

// Every kind of op core.Spec describes has a route: kernels of the
// backend's (each loaded), or a reason to run on the CPU; every kernel
// loaded serves some route.
func TestRoutesCoverEverySpecKind(t *testing.T) {
	for _, k := range core.SpecKinds {
		_, gpu := gpuRoutes[k]
		_, cpu := cpuKinds[k]
		if gpu == cpu {
			t.Errorf("kind %q: routed to the GPU %v, listed for the CPU %v (want exactly one)", k, gpu, cpu)
		}
	}
	for k := range gpuRoutes {
		if !slices.Contains(core.SpecKinds, k) {
			t.Errorf("route for %q, which core.Spec never returns", k)
		}
	}
	used := map[string]bool{}
	for k, ks := range gpuRoutes {
		for _, name := range ks {
			if strings.HasPrefix(name, "(") || strings.HasPrefix(name, "cu") {
				continue // no kernel, cuBLAS, or a driver call
			}
			used[name] = true
			if !slices.Contains(kernelNames, name) {
				t.Errorf("kind %q: kernel %s is not loaded", k, name)
			}
		}
	}
	for _, name := range kernelNames {
		if !used[name] && name != "gemm_tiled" {
			t.Errorf("kernel %s serves no route", name)
		}
	}
	for _, l := range RouteTable() {
		t.Log(l)
	}
}

// Every fused step rule the dispatcher knows has an arity and a code.
func TestFusedRules(t *testing.T) {
	for name := range fusedRules {
		if _, ok := fusedArity[name]; !ok {
			t.Errorf("fused rule %s has no arity", name)
		}
	}
	for name := range fusedArity {
		if _, ok := fusedRules[name]; !ok {
			t.Errorf("fused rule %s has no code", name)
		}
	}
}

// Every launch in the dispatcher's source passes as many arguments as its
// kernel has parameters (a missing or extra argument would be read as
// garbage on the GPU, with no error).
func TestLaunchArgumentCounts(t *testing.T) {
	sigs := kernelSignatures(t)
	fset := token.NewFileSet()
	n := 0
	files, err := filepath.Glob("kernels_*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, "opkernel.go", "rnn_launch.go") {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || call.Ellipsis.IsValid() {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			fixed := map[string]int{"launch": 3, "launch2": 5, "kernel": 2}[sel.Sel.Name]
			lit, ok := call.Args[0].(*ast.BasicLit)
			if fixed == 0 || !ok || lit.Kind != token.STRING {
				return true
			}
			name := strings.Trim(lit.Value, `"`)
			params, ok := sigs[name]
			if !ok {
				t.Errorf("%s: launches %s, which kernels.cu does not define", fset.Position(call.Pos()), name)
				return true
			}
			if got := len(call.Args) - fixed; got != len(params) {
				t.Errorf("%s: %s gets %d arguments, has %d parameters", fset.Position(call.Pos()), name, got, len(params))
			}
			n++
			return true
		})
	}
	if n < 40 {
		t.Errorf("found only %d launches", n)
	}
}
