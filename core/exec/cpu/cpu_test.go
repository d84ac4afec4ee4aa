package cpu_test

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// A function compiled on the CPU backend runs there, and reports it.
func TestBackendRunsFunction(t *testing.T) {
	x := core.NewInput("x", nd.Float32, 1)
	y := core.Mul(x, core.Const(nd.Float32, 3))
	f, err := core.CompileOn(cpu.Backend{}, []*core.Variable{x}, []*core.Variable{y}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Backend().Name() != "cpu" {
		t.Errorf("backend %q, want cpu", f.Backend().Name())
	}
	in := nd.New(nd.Float32, 3)
	for i := range 3 {
		in.SetFlat(i, float64(i+1))
	}
	out, err := f.Call([]*nd.Array{in})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{3, 6, 9} {
		if got := out[0].Flat(i); got != want {
			t.Errorf("y[%d] = %v, want %v", i, got, want)
		}
	}
}

// The default workers follow the number of CPUs, at most 8.
func TestDefaultSettings(t *testing.T) {
	for cpus, want := range map[int]int{1: 1, 2: 2, 16: 8} {
		if s := kernels.DefaultSettings(cpus); s.Workers != want {
			t.Errorf("%d CPUs: %d workers, want %d", cpus, s.Workers, want)
		}
	}
	s := cpu.Settings()
	if s.Workers < 1 || s.MinGemmSplit < 1 || s.MinElemPart < 1 || s.SpinMicros < 0 {
		t.Errorf("settings out of range: %+v", s)
	}
}

// Overrides come from the environment the program passes, malformed ones
// named in the error.
func TestFromEnv(t *testing.T) {
	env := map[string]string{"BLOCKS_CPU_WORKERS": "3", "BLOCKS_CPU_SPIN_US": "0", "BLOCKS_NOFUSE": "1"}
	s, err := kernels.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if s.Workers != 3 || s.SpinMicros != 0 || !s.NoFuse {
		t.Errorf("settings %+v, want 3 workers, no spin, fusion off", s)
	}
	for k, v := range map[string]string{"BLOCKS_CPU_WORKERS": "0", "BLOCKS_CPU_MIN_ELEM_PART": "x", "BLOCKS_NOFUSE": "yes"} {
		_, err := kernels.FromEnv(func(name string) string {
			if name == k {
				return v
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: error %v, want one naming %s", k, v, err, k)
		}
	}
	if err := kernels.Configure(kernels.Settings{Workers: 0}); err == nil {
		t.Error("Configure took 0 workers")
	}
}

// NoFuse in the settings in force turns the plan's fusions off, and back
// on.
func TestNoFuseSetting(t *testing.T) {
	saved := cpu.Settings()
	defer func() {
		if err := kernels.Configure(saved); err != nil {
			t.Fatal(err)
		}
	}()
	x := core.NewInput("x", nd.Float32, 2)
	b := core.NewShared(nd.New(nd.Float32, 4), "b")
	y := core.Relu(core.Add(x, b))
	prog := func(noFuse bool) string {
		s := saved
		s.NoFuse = noFuse
		if err := kernels.Configure(s); err != nil {
			t.Fatal(err)
		}
		f, err := core.CompileOn(cpu.Backend{}, []*core.Variable{x}, []*core.Variable{y}, nil)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := f.Program([]*nd.Array{nd.New(nd.Float32, 3, 4)})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	if p := prog(false); !strings.Contains(p, "BiasRelu") {
		t.Errorf("fusion on: no BiasRelu in\n%s", p)
	}
	if p := prog(true); strings.Contains(p, "BiasRelu") {
		t.Errorf("NoFuse: BiasRelu in\n%s", p)
	}
}

// An update of a shared variable the graph never reads lands in that
// variable, and a fused p − s·g stored into another variable than p
// leaves p alone (it used to be written in place into p when it was the
// function's only update).
func TestUpdateOfUnreadVariable(t *testing.T) {
	vec := func(vals ...float64) *nd.Array {
		a := nd.New(nd.Float32, len(vals))
		for i, v := range vals {
			a.SetFlat(i, v)
		}
		return a
	}
	for _, both := range []bool{false, true} {
		p := core.NewShared(vec(1, 2, 3), "p")
		m := core.NewShared(vec(0, 0, 0), "m")
		c := core.NewShared(vec(0, 0, 0), "c")
		g := core.NewInput("g", nd.Float32, 1)
		half := core.Const(nd.Float32, 0.5)
		updates := []core.Update{{Shared: m, Value: core.Sub(p, core.Mul(half, g))}}
		want := map[*core.Variable][]float64{p: {1, 2, 3}, m: {0, 1, 2}, c: {0, 0, 0}}
		if both {
			updates = append(updates, core.Update{Shared: c, Value: core.Mul(p, core.Const(nd.Float32, 2))})
			want[c] = []float64{2, 4, 6}
		}
		f, err := core.CompileOn(cpu.Backend{}, []*core.Variable{g}, nil, updates)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Call([]*nd.Array{vec(2, 2, 2)}); err != nil {
			t.Fatal(err)
		}
		for v, w := range want {
			for i, x := range w {
				if got := v.Value().Flat(i); got != x {
					t.Errorf("%d updates: %s[%d] = %v, want %v", len(updates), v, i, got, x)
				}
			}
		}
	}
}
