// Package device names where a compiled graph runs (Device: the CPU or
// a CUDA GPU) and checks that this build of the project can run there.
//
// A device is explicit state: whoever compiles a graph says where
// (core.CompileFor, algorithms.UpdatesAlgorithm.Device, a script run's
// config.device); nothing in the process holds a selected device. The
// zero Device is the CPU.
//
// Every build has the CPU backend. The CUDA backend (core/exec/cuda) is
// in the build made with the cuda tag (make build-cuda) only; other builds
// refuse a CUDA device at once, saying which build is running and whether
// an NVIDIA driver is visible on the machine. Build names the build.
package device

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Kind is the kind of device.
type Kind string

// The kinds of device.
const (
	CPU  Kind = "cpu"
	CUDA Kind = "cuda"
)

// Device is a device: a kind and, for CUDA, the GPU's index. The zero
// Device (an empty Kind) is the CPU.
type Device struct {
	Kind  Kind
	Index int
}

// IsCPU reports whether d is the CPU (Kind CPU, or the zero Device).
func (d Device) IsCPU() bool { return d.Kind == CPU || d.Kind == "" }

func (d Device) String() string {
	if d.Kind == CUDA {
		return fmt.Sprintf("cuda:%d", d.Index)
	}
	if d.IsCPU() {
		return string(CPU)
	}
	return string(d.Kind)
}

// Parse reads "cpu", "cuda" (GPU 0) or "cuda:N".
func Parse(s string) (Device, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	switch {
	case s == "cpu":
		return Device{Kind: CPU}, nil
	case s == "cuda" || s == "gpu":
		return Device{Kind: CUDA}, nil
	case strings.HasPrefix(s, "cuda:"):
		n, err := strconv.Atoi(s[len("cuda:"):])
		if err != nil || n < 0 {
			return Device{}, fmt.Errorf("device %q: want cuda:N with N a GPU index (0, 1, ...)", s)
		}
		return Device{Kind: CUDA, Index: n}, nil
	}
	return Device{}, fmt.Errorf("unknown device %q (want cpu, cuda or cuda:N)", s)
}

// Check returns nil when this build can run graphs on d, else an error
// that says why: no CUDA backend in this build, or no NVIDIA driver or
// device visible here.
func Check(d Device) error {
	if d.IsCPU() {
		return nil
	}
	if !hasCUDA {
		return fmt.Errorf("device %s: this blocks-repl is the %s, which runs on the CPU only; %s", d, Build, driverStatus(d.Index))
	}
	if msg, ok := driverReady(d.Index); !ok {
		return fmt.Errorf("device %s: %s", d, msg)
	}
	return nil
}

// driverReady reports whether NVIDIA's driver and GPU index are visible,
// and otherwise what is missing.
func driverReady(index int) (string, bool) {
	if _, err := os.Stat("/proc/driver/nvidia/version"); err != nil {
		return driverStatus(index), false
	}
	if _, err := os.Stat(fmt.Sprintf("/dev/nvidia%d", index)); err != nil {
		return driverStatus(index), false
	}
	return "", true
}

// driverStatus describes what this machine shows of NVIDIA's driver.
func driverStatus(index int) string {
	v, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return "and no NVIDIA driver or CUDA device was found on this machine (/proc/driver/nvidia/version is absent)"
	}
	line := strings.TrimSpace(strings.SplitN(string(v), "\n", 2)[0])
	if _, err := os.Stat(fmt.Sprintf("/dev/nvidia%d", index)); err != nil {
		return fmt.Sprintf("an NVIDIA driver is loaded (%s) but there is no GPU %d (/dev/nvidia%d)", line, index, index)
	}
	return fmt.Sprintf("an NVIDIA driver (%s) and GPU %d are present, but this build cannot use them", line, index)
}
