package core

import (
	"fmt"

	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/nd"
)

// CPUBackend is the CPU backend: the reference every other backend is
// checked against, and the one loops' step functions run on. It hands a
// function's graph to the executor of core/exec/cpu, which plans it per
// input-shape signature (with this package's shape inference) and runs
// each op's CPU kernel, its Run.
//
// An op's Run is therefore the CPU backend's kernel for it, kept beside
// the op's definition (as Theano keeps an op's perform beside its
// make_node): core's ops compute through core/exec/cpu/kernels and
// internal/vec, never through cgo or a BLAS binding of their own. A
// backend with kernels of its own describes ops with Spec and may fall
// back on Run for the others.
var CPUBackend Backend = cpuBackend{}

type cpuBackend struct{}

func (cpuBackend) Name() string { return "cpu" }

func (cpuBackend) Executor(f *Function) (Executor, error) {
	return cpuExecutor{cpu.New(f.cpuGraph())}, nil
}

// cpuExecutor is the CPU executor as a core.Executor.
type cpuExecutor struct{ *cpu.Executor }

// cpuGraph describes f to the CPU executor.
func (f *Function) cpuGraph() cpu.Graph {
	g := cpu.Graph{
		Nodes:       make([]cpu.Node, len(f.nodes)),
		InferShapes: f.inferShapes,
		NodeError:   f.nodeError,
		BiasRelu:    biasReluOp{},
		ScaledSub:   scaledSubOp{},
	}
	for i, v := range f.nodes {
		n := cpu.Node{DType: v.dtype, Arg: f.argOf[i], ShapeOnly: -1}
		switch {
		case f.argOf[i] >= 0:
			n.Kind = cpu.Input
		case v.kind == KindShared || v.kind == KindConstant:
			n.Kind = cpu.Stored
			n.Value = v.Value
			n.Shape = func() []int { return v.value.Shape }
			n.Shared = v.kind == KindShared
		default:
			n.Kind = cpu.Computed
			n.Op = v.op
			n.Inputs = make([]int, len(v.inputs))
			for k, in := range v.inputs {
				n.Inputs[k] = f.index[in]
			}
			switch o := v.op.(type) {
			case elemOp:
				n.Elem = elemNames[o.kind]
			case copyOp:
				n.Identity = true
			case sumToOp:
				n.ShapeOnly = 1
			}
		}
		g.Nodes[i] = n
	}
	for _, o := range f.outputs {
		g.Outputs = append(g.Outputs, f.index[o])
	}
	for _, u := range f.updates {
		s, ok := f.index[u.Shared]
		if !ok {
			s = -1 // updated, never read
		}
		g.Updates = append(g.Updates, cpu.Update{Value: f.index[u.Value], Shared: s, Target: u.Shared.Value, BeforeWrite: u.Shared.BeforeWrite, DType: u.Shared.dtype, Name: u.Shared.String()})
	}
	return g
}

// inferShapes is the shape of every node of f for args: the arguments'
// own, the stored values', and each op's Shape of its inputs' shapes. A
// shape that overflows, or that no machine (or the function's memory
// limit) could hold, is refused here, before anything is allocated.
func (f *Function) inferShapes(args []*nd.Array) ([][]int, error) {
	shapes := make([][]int, len(f.nodes))
	for i, v := range f.nodes {
		switch {
		case f.argOf[i] >= 0:
			a := args[f.argOf[i]]
			if err := a.Consistent(); err != nil {
				return nil, fmt.Errorf("argument %d: %w", f.argOf[i], err)
			}
			shapes[i] = a.Shape
		case v.kind == KindShared || v.kind == KindConstant:
			shapes[i] = v.value.Shape
		default:
			inShapes := make([][]int, len(v.inputs))
			for k, in := range v.inputs {
				inShapes[k] = shapes[f.index[in]]
			}
			s, err := v.op.Shape(inShapes)
			if err == nil {
				err = nd.CheckAlloc(v.dtype, s, f.maxBytes, f.maxWhat)
			}
			if err != nil {
				return nil, f.nodeError(i, err)
			}
			shapes[i] = s
		}
	}
	return shapes, nil
}
