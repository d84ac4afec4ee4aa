package device

import (
	"os"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Device{"cpu": {CPU, 0}, "CUDA": {CUDA, 0}, "cuda:1": {CUDA, 1}, "gpu": {CUDA, 0}} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "tpu", "cuda:", "cuda:-1", "cuda:x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// Without a CUDA backend, a CUDA device is refused at once with a message
// that names the build and what the machine shows of a driver.
func TestCUDARefusedClearly(t *testing.T) {
	if hasCUDA {
		t.Skip("the CUDA build accepts a CUDA device (core/exec/cuda's tests)")
	}
	if err := Check(Device{Kind: CPU}); err != nil {
		t.Fatal(err)
	}
	err := Check(Device{Kind: CUDA, Index: 0})
	if err == nil {
		t.Fatal("the CPU build accepted a CUDA device")
	}
	msg := err.Error()
	if !strings.Contains(msg, "CPU build") {
		t.Errorf("the message does not say which build runs: %s", msg)
	}
	if _, statErr := os.Stat("/proc/driver/nvidia/version"); statErr != nil && !strings.Contains(msg, "no NVIDIA driver") {
		t.Errorf("no driver here, but the message does not say so: %s", msg)
	}
}

// The zero Device is the CPU: it prints and checks as the CPU.
func TestZeroDeviceIsCPU(t *testing.T) {
	var d Device
	if !d.IsCPU() || d.String() != "cpu" {
		t.Errorf("the zero Device: IsCPU %v, String %q; want true, \"cpu\"", d.IsCPU(), d)
	}
	if err := Check(d); err != nil {
		t.Errorf("Check(zero Device) = %v", err)
	}
	if (Device{Kind: CUDA}).IsCPU() {
		t.Error("cuda:0 says it is the CPU")
	}
}
