package core

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// The backend seam. core keeps the graph: variables, ops' definitions,
// roles, shape inference, Grad, and a Function's contract (its inputs
// checked, outputs returned, updates stored). Running a Function is a
// Backend's business: planning per input-shape signature, buffers,
// kernels, fusion. A backend imports core, consumes the function's
// lowered graph (Function.Lower, lowered.go) and registers itself from its
// package's init (RegisterBackend); core imports no backend. The CPU
// backend (core/exec/cpu) is the reference, and the one loops' step
// functions run on; core/exec/cuda (build tag cuda) registers the CUDA
// backend. A program links the CPU backend by importing core/exec/cpu
// (the packages that compile functions, such as core/graph, bricks and
// train/algorithms, do).

// Backend runs compiled functions.
type Backend interface {
	// Name names the backend by the device.Kind it runs: "cpu", "cuda".
	Name() string
	// Executor prepares f for running on this backend, on f.Device(). It
	// is called once, by CompileFor or CompileOn; the executor plans each
	// input-shape signature itself. A backend that cannot run one of f's
	// ops, or on f's device, says so here.
	Executor(f *Function) (Executor, error)
}

// Executor runs one compiled function.
type Executor interface {
	// Run computes the function's outputs for args (already checked by
	// the Function: their number, dtypes and dimensions) and stores its
	// updates into the shared variables' host arrays. With copyOutputs the
	// outputs are fresh host arrays holding the values from before the
	// updates; without, the executor's own host arrays, valid until the
	// next Run.
	Run(args []*nd.Array, copyOutputs bool) ([]*nd.Array, error)
	// Program lists the steps Run runs for args' shapes, one line each.
	Program(args []*nd.Array) ([]string, error)
}

// Graph is what a backend sees of a function: its inputs (in argument
// order), outputs and updates, and every node they depend on in
// topological order.
type Graph struct {
	Inputs  []*Variable
	Outputs []*Variable
	Updates []Update
	Nodes   []*Variable
}

// Graph returns the function's graph.
func (f *Function) Graph() Graph {
	return Graph{Inputs: f.inputs, Outputs: f.outputs, Updates: f.updates, Nodes: f.nodes}
}

// MemoryLimit is the bound on each value the function computes, and what
// names it (SetMemoryLimit); 0 means the machine's memory.
func (f *Function) MemoryLimit() (uint64, string) { return f.maxBytes, f.maxWhat }

// Backend is the backend the function runs on.
func (f *Function) Backend() Backend { return f.backend }

// Device is the device the function was compiled for (CompileFor's d;
// CompileOn's backend kind with index 0).
func (f *Function) Device() device.Device { return f.device }

var backends struct {
	mu sync.Mutex
	m  map[device.Kind]Backend
}

// RegisterBackend makes b the backend of devices of kind k (a backend
// package's init does it: core/exec/cpu for device.CPU, core/exec/cuda for
// device.CUDA).
func RegisterBackend(k device.Kind, b Backend) {
	backends.mu.Lock()
	defer backends.mu.Unlock()
	if backends.m == nil {
		backends.m = map[device.Kind]Backend{}
	}
	backends.m[k] = b
}

// BackendFor returns the backend of device d's kind (the CPU's for the
// zero Device).
func BackendFor(d device.Device) (Backend, error) {
	k := d.Kind
	if d.IsCPU() {
		k = device.CPU
	}
	backends.mu.Lock()
	defer backends.mu.Unlock()
	if b, ok := backends.m[k]; ok {
		return b, nil
	}
	if k == device.CPU {
		return nil, errors.New("no CPU backend linked into this program: import github.com/blocks-go/blocks/core/exec/cpu")
	}
	var have []string
	for k := range backends.m {
		if k != device.CPU {
			have = append(have, string(k))
		}
	}
	slices.Sort(have)
	return nil, fmt.Errorf("no %s backend in this build (%s); it has the CPU backend%s", d.Kind, device.Build, andList(have))
}

func andList(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return " and " + fmt.Sprint(s)
}
