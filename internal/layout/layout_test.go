// Package layout_test checks the house's rules (README, "Architecture"):
// dependencies point one way, a Go program that uses a part of the
// project links only what that part needs, and no package keeps hidden
// global state (TestPackageState).
package layout_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "github.com/blocks-go/blocks/"

// deps is every package of the module with the module's packages it
// depends on, directly or not (go list -deps).
func deps(t *testing.T) map[string][]string {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "list", "-json=ImportPath,Deps", module+"...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	all := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var own []string
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module) || strings.HasPrefix(d, "go.starlark.net") {
				own = append(own, strings.TrimPrefix(d, module))
			}
		}
		all[strings.TrimPrefix(p.ImportPath, module)] = own
	}
	return all
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

func TestImportRules(t *testing.T) {
	all := deps(t)
	if len(all) < 20 {
		t.Fatalf("go list found %d packages", len(all))
	}
	rules := []struct {
		from, to, why string
	}{
		{"core", "go.starlark.net", "core is a Go library that knows nothing of Starlark"},
		{"bricks", "go.starlark.net", "bricks is a Go library that knows nothing of Starlark"},
		{"fuel", "go.starlark.net", "fuel is a Go library that knows nothing of Starlark"},
		{"core", "starlib", "dependencies point from starlib to core"},
		{"bricks", "starlib", "dependencies point from starlib to bricks"},
		{"fuel", "starlib", "dependencies point from starlib to fuel"},
		{"fuel", "core", "fuel stands alone"},
		{"fuel", "bricks", "fuel stands alone"},
		{"core", "bricks", "bricks are built on core, not the reverse"},
		{"core", "train", "the training layer is built on the graph, not the reverse"},
		{"core", "fuel/config", "floatX is passed to core explicitly (GradientDescentConfig.FloatX, the step rules' constructors), never read from the environment"},
		{"nd", "core", "nd is a leaf"},
		{"nd", "fuel", "nd is a leaf"},
		{"numpyrand", "nd", "numpyrand is a leaf"},
		{"fuel/streams", "fuel/h5", "a program using streams does not link libhdf5"},
		{"fuel/streams", "fuel/datasets", "a program using streams does not link the datasets"},
		{"fuel/transformers", "fuel/h5", "a program using transformers does not link libhdf5"},
	}
	// starlib is the Starlark runtime (values, the Library, load(), the
	// sandbox); each module family is a package under it, and starlib/all
	// assembles them explicitly. The runtime knows no module package, a
	// family none above it, and only cmd/ and scripts/ use the face.
	families := []string{"starlib/numpy", "starlib/tensor", "starlib/json", "starlib/blocks", "starlib/fuel"}
	below := map[string][]string{ // families a family must not depend on
		"starlib/json":   {"starlib/numpy", "starlib/tensor", "starlib/blocks", "starlib/fuel"},
		"starlib/numpy":  {"starlib/tensor", "starlib/blocks", "starlib/fuel"},
		"starlib/tensor": {"starlib/blocks", "starlib/fuel"},
		"starlib/fuel":   {"starlib/blocks"},
	}
	for pkg, ds := range all {
		for _, d := range ds {
			switch {
			case pkg == "starlib" && strings.HasPrefix(d, "starlib/"):
				t.Errorf("%s depends on %s: the Starlark runtime knows no module package (starlib/all assembles them)", pkg, d)
			case pkg == "starlib" && under(d, "train"):
				t.Errorf("%s depends on %s: the Starlark runtime knows no training package, as go.starlark.net's knows none of its modules (starlib/run and the module families call them)", pkg, d)
			case !under(pkg, "starlib") && !under(pkg, "cmd") && !under(pkg, "scripts") && under(d, "starlib"):
				t.Errorf("%s depends on %s: only cmd/ and scripts/ use the Starlark face", pkg, d)
			}
			for _, f := range families {
				if under(pkg, f) && under(d, "starlib/all") {
					t.Errorf("%s depends on %s: a module family does not take the whole library", pkg, d)
				}
				for _, b := range below[f] {
					if under(pkg, f) && under(d, b) {
						t.Errorf("%s depends on %s: module families depend one way (json, numpy, tensor, fuel, blocks)", pkg, d)
					}
				}
			}
		}
	}
	for pkg, ds := range all {
		for _, r := range rules {
			if !under(pkg, r.from) {
				continue
			}
			for _, d := range ds {
				if under(d, r.to) || (r.to == "go.starlark.net" && strings.HasPrefix(d, r.to)) {
					t.Errorf("%s depends on %s: %s", pkg, d, r.why)
				}
			}
		}
	}
}

// floors are the house's layers (README, "Architecture"), lowest first:
// a package imports only packages of lower floors, or of its own folder.
// Packages beside the house (docs, the tests' fixtures and rules, the
// example scripts, the benchmarks) are not placed.
var floors = []struct {
	name    string
	folders []string
}{
	{"leaves", []string{"nd", "numpyrand", "internal/vec", "internal/tty", "internal/termsafe", "stdlib"}},
	{"graph, data", []string{"core", "fuel"}},
	{"models, training", []string{"bricks", "train"}},
	{"Starlark modules", []string{"starlib"}},
	{"commands", []string{"cmd"}},
}

// floorOf returns pkg's floor and folder, or -1 for a package beside the
// house.
func floorOf(pkg string) (int, string) {
	for i, f := range floors {
		for _, dir := range f.folders {
			if under(pkg, dir) {
				return i, dir
			}
		}
	}
	return -1, ""
}

// TestFloors checks that no import runs back up: the folders read as the
// layers graph → execution → training → Starlark modules → commands.
func TestFloors(t *testing.T) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "list", "-json=ImportPath,Imports", module+"...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	placed := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, module)
		from, fromDir := floorOf(pkg)
		if from < 0 {
			continue
		}
		placed++
		for _, d := range p.Imports {
			if !strings.HasPrefix(d, module) {
				continue
			}
			dep := strings.TrimPrefix(d, module)
			to, toDir := floorOf(dep)
			switch {
			case to < 0 && floors[from].name != "commands":
				t.Errorf("%s imports %s, which stands beside the house: only tests and commands may", pkg, dep)
			case to < 0:
			case to > from:
				t.Errorf("%s (%s) imports %s (%s): an arrow back up", pkg, floors[from].name, dep, floors[to].name)
			case to == from && toDir != fromDir:
				t.Errorf("%s imports %s: folders of one floor (%s) stand side by side", pkg, dep, floors[from].name)
			}
		}
	}
	if placed < 40 {
		t.Fatalf("only %d packages placed on a floor", placed)
	}
}

// TestBackendSeam checks the split between the graph and its execution
// (docs/backends.md): cgo and the BLAS bindings live in the CPU backend's
// kernels (and in the packages binding other C libraries: MPI, HDF5,
// ZeroMQ), never in core's graph packages; core imports no backend (the
// backends import core and register themselves), except the CPU
// backend's leaf of numeric kernels, which the ops' Run methods still
// compute through; that leaf knows nothing of core.
func TestBackendSeam(t *testing.T) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "list", "-json=ImportPath,CgoFiles,Imports,Deps", module+"...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	cgoOK := map[string]bool{"core/exec/cpu/kernels": true, "train/parallel": true, "fuel/h5": true, "fuel/server": true, "core/exec/cuda": true}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p struct {
			ImportPath              string
			CgoFiles, Imports, Deps []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, module)
		if len(p.CgoFiles) > 0 && !cgoOK[pkg] {
			t.Errorf("%s has cgo files %v: C bindings belong in a backend's package (core/exec/cpu/kernels)", pkg, p.CgoFiles)
		}
		for _, d := range p.Imports {
			if (strings.HasPrefix(d, "gonum.org/v1/gonum/blas") || strings.HasPrefix(d, "gonum.org/v1/netlib")) && pkg != "core/exec/cpu/kernels" {
				t.Errorf("%s imports %s: products go through core/exec/cpu/kernels, the CPU backend's only BLAS binding", pkg, d)
			}
		}
		if pkg == "core" {
			seen++
			for _, d := range p.Deps {
				if under(strings.TrimPrefix(d, module), "core/exec") && d != module+"core/exec/cpu/kernels" {
					t.Errorf("core depends on %s: backends import core and register themselves (core.RegisterBackend), never the reverse", d)
				}
			}
		}
		if pkg == "core/exec/cpu" || pkg == "core/exec/cpu/kernels" {
			seen++
		}
		if pkg == "core/exec/cpu/kernels" {
			for _, d := range p.Deps {
				if d == module+"core/exec/cpu" || d == module+"core" {
					t.Errorf("the kernels depend on %s: they are the CPU backend's leaf", strings.TrimPrefix(d, module))
				}
			}
		}
	}
	if seen != 3 {
		t.Fatalf("go list found %d of core, core/exec/cpu and its kernels", seen)
	}
}
