package cpu_test

import (
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/nd"
)

// A function compiled on the CPU backend runs there, and reports it.
func TestBackendRunsFunction(t *testing.T) {
	x := core.NewInput("x", nd.Float32, 1)
	y := core.Mul(x, core.Const(nd.Float32, 3))
	f, err := core.CompileOn(cpu.Backend, []*core.Variable{x}, []*core.Variable{y}, nil)
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
		if s := core.DefaultCPUSettings(cpus); s.Workers != want {
			t.Errorf("%d CPUs: %d workers, want %d", cpus, s.Workers, want)
		}
	}
	s, err := cpu.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Workers < 1 || s.MinGemmSplit < 1 || s.MinElemPart < 1 || s.SpinMicros < 0 {
		t.Errorf("settings out of range: %+v", s)
	}
}
