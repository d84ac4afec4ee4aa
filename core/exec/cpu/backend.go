package cpu

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// Backend is the CPU backend: the reference every other backend is
// checked against, and the one loops' step functions run on. It runs a
// function's lowered graph (core.Lowered) with an Executor. The package
// registers it as the backend of device.CPU when a program imports it.
type Backend struct{}

func init() { core.RegisterBackend(device.CPU, Backend{}) }

// Name is "cpu".
func (Backend) Name() string { return string(device.CPU) }

// Executor lowers f and returns its executor, refusing an op without a
// CPU kernel.
func (Backend) Executor(f *core.Function) (core.Executor, error) {
	g := f.Lower()
	for i, n := range g.Nodes {
		if n.Kind == core.NodeComputed {
			if _, err := kernelOf(n.Op); err != nil {
				return nil, g.NodeError(i, err)
			}
		}
	}
	return New(g), nil
}

// kernel is what a plan's step runs: an op's CPU kernel, or one of the
// planner's own (fusion.go).
type kernel interface {
	// String names the op in programs and profiles.
	String() string
	// Run computes out, allocated with the planned shape (or, for a
	// view, with no data: Run points it at its source's), from in.
	Run(out *nd.Array, in []*nd.Array)
}

// recoverDType turns a kernel's core.DTypeError panic into err, the error
// of node cur (other panics go on).
func recoverDType(g *core.Lowered, r any, cur int, err *error) {
	e, ok := r.(*core.DTypeError)
	if !ok || cur < 0 {
		panic(r)
	}
	*err = g.NodeError(cur, e)
}
