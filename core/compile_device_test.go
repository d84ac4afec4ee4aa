package core_test

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	cpuexec "github.com/blocks-go/blocks/core/exec/cpu"
)

// Compile runs on the CPU; CompileFor compiles for the device it is given
// (the zero Device is the CPU) and refuses a device without a backend in
// this build. Nothing else decides where a function runs.
func TestCompileForDevice(t *testing.T) {
	x := NewInput("x", nd.Float32, 1)
	y := Mul(x, Const(nd.Float32, 2))
	cpu := device.Device{Kind: device.CPU}
	f, err := Compile([]*Variable{x}, []*Variable{y}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Device() != cpu || f.Backend() != Backend(cpuexec.Backend{}) {
		t.Errorf("Compile: device %v, backend %s; want the CPU", f.Device(), f.Backend().Name())
	}
	for _, d := range []device.Device{{}, cpu} {
		f, err := CompileFor(d, []*Variable{x}, []*Variable{y}, nil)
		if err != nil {
			t.Fatalf("CompileFor(%#v): %v", d, err)
		}
		if f.Device() != cpu || f.Backend() != Backend(cpuexec.Backend{}) {
			t.Errorf("CompileFor(%#v): device %v, backend %s; want the CPU", d, f.Device(), f.Backend().Name())
		}
		out, err := f.Call([]*nd.Array{nd.FromSlice([]float32{1, 2}, 2)})
		if err != nil || out[0].Flat(1) != 4 {
			t.Errorf("CompileFor(%#v): 2*[1 2] gave %v, %v", d, out, err)
		}
	}
	// core's tests link no CUDA backend (core/exec/cuda registers it).
	_, err = CompileFor(device.Device{Kind: device.CUDA, Index: 1}, []*Variable{x}, []*Variable{y}, nil)
	if err == nil || !strings.Contains(err.Error(), "no cuda backend in this build") {
		t.Errorf("CompileFor(cuda:1): %v; want the missing backend named", err)
	}
}
