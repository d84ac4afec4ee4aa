package cpu

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// Op is what the executor needs of an op: its name and its CPU kernel.
type Op interface {
	// String names the op in programs and profiles.
	String() string
	// Run computes out, allocated with the planned shape (or, for a
	// view, with no data: Run points it at its source's), from in.
	Run(out *nd.Array, in []*nd.Array)
}

// ViewOp is an op whose output can share its first input's data for some
// shapes (reshape, copy, flatten, ...): the plan allocates nothing for it.
type ViewOp interface {
	IsView(in [][]int, out []int) bool
}

// Checker is an op that validates its input values before running.
type Checker interface {
	Check(in []*nd.Array) error
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
// dtype it has no case for: panic(cpu.Unsupported(o, out.DType())).
func Unsupported(op fmt.Stringer, dt nd.DType) *DTypeError {
	return &DTypeError{Op: op.String(), DType: dt}
}

// recoverDType turns a kernel's DTypeError panic into err, the error of
// node cur (other panics go on).
func (g *Graph) recoverDType(r any, cur int, err *error) {
	e, ok := r.(*DTypeError)
	if !ok || cur < 0 {
		panic(r)
	}
	*err = g.NodeError(cur, e)
}

// ErrRunner is an op whose run can fail (a loop whose step checks its
// inputs); the executor reports the error instead of calling Run.
type ErrRunner interface {
	RunErr(out *nd.Array, in []*nd.Array) error
}

// NodeKind says what a node of a graph is.
type NodeKind int

const (
	// Input is a function argument.
	Input NodeKind = iota
	// Stored is a shared variable or a constant: its value lives outside
	// the executor.
	Stored
	// Computed is an op's result.
	Computed
)

// Node is one value of a graph.
type Node struct {
	Kind  NodeKind
	DType nd.DType
	// Arg is an input's argument index.
	Arg int
	// Value is a stored node's current host value; Shape its shape,
	// without bringing a device's copy back (Shared is true for a shared
	// variable, whose shape is part of the plan's signature).
	Value  func() *nd.Array
	Shape  func() []int
	Shared bool
	// Op and Inputs (positions in Graph.Nodes) make a computed node.
	Op     Op
	Inputs []int
	// What the planner fuses: Elem names an elementwise op's function
	// ("add", "relu", ...; "" for other ops), Identity marks the identity
	// (a copy, run as a view), ShapeOnly is the input the op reads for its
	// shape only (-1: none).
	Elem      string
	Identity  bool
	ShapeOnly int
}

// Update stores node Value into a shared variable after each run.
type Update struct {
	// Value is the node whose value is stored; Shared is the shared
	// variable's node, -1 when the graph does not read it.
	Value, Shared int
	// Target is the shared variable's current host value (where the
	// update is stored), DType its dtype and Name its name.
	Target func() *nd.Array
	// BeforeWrite, when set, is called before the executor first writes
	// the target's storage in a run (core.Variable.BeforeWrite: a
	// checkpoint's deferred copy of the value waits there).
	BeforeWrite func()
	DType       nd.DType
	Name        string
}

// Graph is a function as the executor sees it: nodes in topological
// order, its outputs and updates, and the graph's own services.
type Graph struct {
	Nodes   []Node
	Outputs []int
	Updates []Update
	// InferShapes is the shape of every node for these arguments (the
	// graph's shape inference, which also refuses values too large to
	// allocate); the executor plans with it.
	InferShapes func(args []*nd.Array) ([][]int, error)
	// NodeError wraps an op's error with what the node is.
	NodeError func(node int, err error) error
	// BiasRelu and ScaledSub are the graph's fused ops the planner puts
	// in place of relu(x + b) (inputs x, b) and p − s·g (inputs p, s, g),
	// computing the same bits; nil: no such fusion.
	BiasRelu, ScaledSub Op
}
