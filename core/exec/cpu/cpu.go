// Package cpu is the CPU backend's face: the backend every build has and
// every other backend is checked against (core.CPUBackend), and its
// machine-specific settings.
//
// The backend plans a function once per input-shape signature (shapes
// inferred, every buffer allocated, elementwise chains fused, updates made
// in place where safe), then runs the plan's kernels: products on
// OpenBLAS (gonum's Go BLAS in the pure-Go build, CGO_ENABLED=0), AVX2
// kernels each with a portable twin computing the same bits, and large
// kernels split across cores with a partition that depends on sizes only,
// so that results are the same bits on any machine and any load.
//
// The plans and kernels are still defined in package core beside the ops
// (each op's Run is its CPU kernel); core.Backend is the seam through
// which core.Function reaches them, and through which core/exec/cuda
// (build tag cuda) runs the same graphs on a GPU.
package cpu

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
)

// Backend is the CPU backend.
var Backend = core.CPUBackend

// Settings are the settings in force (kernels.Settings documents each).
func Settings() kernels.Settings { return kernels.Current() }

// ConfigureFromEnv puts in force this machine's default settings with the
// overrides getenv gives (kernels.Overrides: BLOCKS_CPU_WORKERS, ...,
// BLOCKS_NOFUSE); a program passes os.Getenv, once, at start-up. A
// malformed override is an error naming it (the others are applied).
func ConfigureFromEnv(getenv func(string) string) error {
	s, err := kernels.FromEnv(getenv)
	if cerr := kernels.Configure(s); cerr != nil {
		return cerr
	}
	return err
}

// BLASName names the BLAS this build multiplies with.
const BLASName = kernels.BLASName
