package core

import (
	"fmt"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// The lowered graph: what a backend's executor sees of a Function. core
// lowers a function once, when it is compiled (Function.Lower): numbered
// nodes in topological order (inputs, stored values, ops with the
// positions of their inputs), its outputs and updates, and two services
// of the graph's own, its shape inference and its error wrapping. A
// backend imports core and consumes this view; core imports no backend.

// Runner is an op's own host kernel, kept beside its definition: Run
// computes out, allocated with Shape's result, from in. The ops of this
// package have none (their kernels are the backends'); the CPU backend
// runs it for an op defined elsewhere (a RandomOp of another package), and
// core runs it to fold constants.
type Runner interface {
	Run(out *nd.Array, in []*nd.Array)
}

// HostRunner is a backend that runs one op on host arrays. core folds
// constants with the CPU backend's (core/exec/cpu), which holds the
// kernels of the ops whose definitions carry none (runOnHost).
type HostRunner interface {
	RunOp(op Op, out *nd.Array, in []*nd.Array) error
}

// runOnHost runs op on host arrays, to fold a constant: its own Run, else
// the CPU backend's kernel.
func runOnHost(op Op, out *nd.Array, in []*nd.Array) error {
	if r, ok := op.(Runner); ok {
		r.Run(out, in)
		return nil
	}
	b, err := BackendFor(device.Device{})
	if err != nil {
		return fmt.Errorf("folding %s: %w", op, err)
	}
	h, ok := b.(HostRunner)
	if !ok {
		return fmt.Errorf("%s has no host kernel to fold it with", op)
	}
	return h.RunOp(op, out, in)
}

// ViewOp is an op whose output can share its first input's data for some
// shapes (reshape, copy, flatten, ...): an executor allocates nothing for
// it.
type ViewOp interface {
	IsView(in [][]int, out []int) bool
}

// Checker is an op that validates its input values before running.
type Checker interface {
	Check(in []*nd.Array) error
}

// ErrRunner is a kernel whose run can fail (a loop's, whose step checks
// its inputs; a fused sequence's); an executor reports the error instead
// of calling Run.
type ErrRunner interface {
	RunErr(out *nd.Array, in []*nd.Array) error
}

// DTypeError is a kernel's refusal of a dtype it has no loop for. Run has
// no error result, so a kernel's dtype switch panics with one in its
// default case (see Unsupported) and the executor, which recovers only
// this type, reports it as the node's error: a dtype without a kernel is
// an error naming it, never an output left at zeros.
type DTypeError struct {
	Op    string
	DType nd.DType
}

func (e *DTypeError) Error() string {
	return fmt.Sprintf("%s has no kernel for dtype %s", e.Op, e.DType)
}

// Unsupported is the panic value of op's dtype switch when it meets a
// dtype it has no case for: panic(core.Unsupported(o, out.DType())).
func Unsupported(op fmt.Stringer, dt nd.DType) *DTypeError {
	return &DTypeError{Op: op.String(), DType: dt}
}

// NodeKind says what a node of a lowered graph is.
type NodeKind int

const (
	// NodeInput is a function argument.
	NodeInput NodeKind = iota
	// NodeStored is a shared variable or a constant: its value lives
	// outside the executor.
	NodeStored
	// NodeComputed is an op's result.
	NodeComputed
)

// LoweredNode is one value of a lowered graph.
type LoweredNode struct {
	Kind  NodeKind
	DType nd.DType
	// Arg is an input's argument index.
	Arg int
	// Value is a stored node's current host value; Shape its shape,
	// without bringing a device's copy back (Shared is true for a shared
	// variable, whose shape is part of a plan's signature).
	Value  func() *nd.Array
	Shape  func() []int
	Shared bool
	// Op and Inputs (positions in Lowered.Nodes) make a computed node.
	Op     Op
	Inputs []int
	// What a planner fuses: Elem names an elementwise op's function
	// ("add", "relu", ...; "" for other ops), Identity marks the identity
	// (a copy, run as a view), ShapeOnly is the input the op reads for its
	// shape only (-1: none).
	Elem      string
	Identity  bool
	ShapeOnly int
}

// LoweredUpdate stores node Value into a shared variable after each run.
type LoweredUpdate struct {
	// Value is the node whose value is stored; Shared is the shared
	// variable's node, -1 when the graph does not read it.
	Value, Shared int
	// Target is the shared variable's current host value (where the
	// update is stored), DType its dtype and Name its name.
	Target func() *nd.Array
	// BeforeWrite, when set, is called before the executor first writes
	// the target's storage in a run (Variable.BeforeWrite: a
	// checkpoint's deferred copy of the value waits there).
	BeforeWrite func()
	DType       nd.DType
	Name        string
}

// Lowered is a function as a backend's executor sees it: nodes in
// topological order, its outputs and updates, and the graph's own
// services.
type Lowered struct {
	Nodes   []LoweredNode
	Outputs []int
	Updates []LoweredUpdate
	// InferShapes is the shape of every node for these arguments (the
	// graph's shape inference, which also refuses values too large to
	// allocate); an executor plans with it.
	InferShapes func(args []*nd.Array) ([][]int, error)
	// NodeError wraps an op's error with what the node is.
	NodeError func(node int, err error) error
	// BiasRelu and ScaledSub are the graph's fused ops a planner may put
	// in place of relu(x + b) (inputs x, b) and p − s·g (inputs p, s, g),
	// computing the same bits.
	BiasRelu, ScaledSub Op
}

// Lower describes f to a backend's executor.
func (f *Function) Lower() Lowered {
	g := Lowered{
		Nodes:       make([]LoweredNode, len(f.nodes)),
		InferShapes: f.inferShapes,
		NodeError:   f.nodeError,
		BiasRelu:    BiasReluOp{},
		ScaledSub:   ScaledSubOp{},
	}
	for i, v := range f.nodes {
		n := LoweredNode{DType: v.dtype, Arg: f.argOf[i], ShapeOnly: -1}
		switch {
		case f.argOf[i] >= 0:
			n.Kind = NodeInput
		case v.kind == KindShared || v.kind == KindConstant:
			n.Kind = NodeStored
			n.Value = v.Value
			n.Shape = func() []int { return v.value.Shape }
			n.Shared = v.kind == KindShared
		default:
			n.Kind = NodeComputed
			n.Op = v.op
			n.Inputs = make([]int, len(v.inputs))
			for k, in := range v.inputs {
				n.Inputs[k] = f.index[in]
			}
			switch o := v.op.(type) {
			case ElemOp:
				n.Elem = elemNames[o.kind]
			case CopyOp:
				n.Identity = true
			case SumToOp:
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
		g.Updates = append(g.Updates, LoweredUpdate{Value: f.index[u.Value], Shared: s, Target: u.Shared.Value, BeforeWrite: u.Shared.BeforeWrite, DType: u.Shared.dtype, Name: u.Shared.String()})
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
