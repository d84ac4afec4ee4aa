package core

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/blocks-go/blocks/nd"
)

var lastID atomic.Int64

// Kind says what a variable is: a data input, a shared value, a constant or
// the result of an op.
type Kind int

// The kinds of variable.
const (
	KindInput Kind = iota
	KindShared
	KindConstant
	KindOp
)

// Variable is a node of the symbolic graph. Its op, inputs, dtype and number
// of dimensions never change; its name and annotations may.
type Variable struct {
	id     int64
	kind   Kind
	op     Op
	inputs []*Variable
	dtype  nd.DType
	ndim   int

	// value is the array of a shared variable or a constant.
	value *nd.Array
	// readGuard, when set, holds a newer copy of value elsewhere (a
	// backend's device) until the host next reads value (SetReadGuard).
	readGuard ReadGuard
	// guards run before the next in-place write of value
	// (SetWriteGuard, BeforeWrite).
	guards []writeGuard

	// Name is the variable's name (Theano's .name); may be empty.
	Name string
	// Tag holds the annotations Blocks attaches (roles, brick, call).
	Tag Tag
	// Trace is where in the user's script the variable was made, when the
	// caller records it (used in error messages).
	Trace string
}

// Tag is Blocks' variable tag: roles and the annotations (bricks and
// application calls) that made the variable.
type Tag struct {
	Roles []*Role
	// Name is Blocks' tag.name: the short name a brick gave the variable
	// ("W", "output"), as opposed to the full Variable.Name.
	Name string
	// Annotations are the bricks and application calls the variable was
	// made by, in the order they were added.
	Annotations []Annotation
	// Brick, Application and Call are set on inputs and outputs of brick
	// applications.
	Brick           Annotation
	Application     string
	ApplicationCall *ApplicationCall
	// Aggregation is the monitoring aggregation scheme, when one is set.
	Aggregation any
	// ReplacementOf is, for a variable made by a graph transformation
	// (apply_dropout), the variable it replaced.
	ReplacementOf *Variable
	// ForParameter is the parameter an algorithm buffer (a step rule's
	// state, such as momentum's velocity) was made for: Blocks'
	// tag.for_parameter.
	ForParameter *Variable
}

// Annotation is anything that can annotate a variable: a brick or an
// application call.
type Annotation interface {
	// AnnotationName is a short description for printing.
	AnnotationName() string
}

// ApplicationCall records one call of a brick's application: the brick,
// the application name, auxiliary variables added during the call and
// free-form metadata.
type ApplicationCall struct {
	Brick              Annotation
	Application        string
	AuxiliaryVariables []*Variable
	Metadata           map[string]any
	ID                 int64
	// Super names the parent class whose application the brick's own
	// application called (Blocks' super().apply: Merge.apply runs
	// Parallel.apply); empty for a call of the brick's own application.
	Super string
}

// AnnotationName describes the call.
func (c *ApplicationCall) AnnotationName() string {
	return fmt.Sprintf("%s.%s call", c.Brick.AnnotationName(), c.Application)
}

// AddAuxiliaryVariable tags v as AUXILIARY (plus roles) and records it.
func (c *ApplicationCall) AddAuxiliaryVariable(v *Variable, name string, roles ...*Role) {
	if name != "" {
		v.Name = name
	}
	AddRole(v, Auxiliary)
	for _, r := range roles {
		AddRole(v, r)
	}
	// Blocks' ApplicationCall.add_auxiliary_variable annotates the
	// variable with the brick too (get_brick gives it).
	if c.Brick != nil && !slices.Contains(v.Tag.Annotations, c.Brick) {
		v.Tag.Annotations = append(v.Tag.Annotations, c.Brick)
	}
	v.Tag.Annotations = append(v.Tag.Annotations, c)
	c.AuxiliaryVariables = append(c.AuxiliaryVariables, v)
}

func newVar(kind Kind, op Op, inputs []*Variable, dt nd.DType, ndim int) *Variable {
	return &Variable{id: lastID.Add(1), kind: kind, op: op, inputs: inputs, dtype: dt, ndim: ndim}
}

// NewInput returns a new data input variable (Theano's tensor.matrix(name)...).
func NewInput(name string, dt nd.DType, ndim int) *Variable {
	v := newVar(KindInput, nil, nil, dt, ndim)
	v.Name = name
	return v
}

// NewShared returns a new shared variable holding value (Theano's shared).
func NewShared(value *nd.Array, name string) *Variable {
	v := newVar(KindShared, nil, nil, value.DType(), value.NDim())
	v.value = value
	v.Name = name
	return v
}

// NewConstant returns a variable whose value never changes.
func NewConstant(value *nd.Array) *Variable {
	v := newVar(KindConstant, nil, nil, value.DType(), value.NDim())
	v.value = value
	return v
}

// Const returns a 0-d constant of dtype dt. Elementwise ops let a 0-d
// constant take the dtype of the other operand when both are floats or both
// integers (Theano's autocasting of Python numbers).
func Const(dt nd.DType, x float64) *Variable {
	c := NewConstant(nd.Scalar(dt, x))
	c.Name = formatNumber(x)
	return c
}

func formatNumber(x float64) string {
	s := fmt.Sprintf("%g", x)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// ID is a unique, increasing identifier: a variable's inputs always have
// smaller IDs than the variable.
func (v *Variable) ID() int64 { return v.id }

// Kind says whether v is an input, shared, constant or op result.
func (v *Variable) Kind() Kind { return v.kind }

// Op is the operation that computes v (nil for leaves).
func (v *Variable) Op() Op { return v.op }

// Inputs are the op's inputs (nil for leaves).
func (v *Variable) Inputs() []*Variable { return v.inputs }

// DType is the element type.
func (v *Variable) DType() nd.DType { return v.dtype }

// NDim is the number of dimensions.
func (v *Variable) NDim() int { return v.ndim }

// IsShared reports whether v is a shared variable.
func (v *Variable) IsShared() bool { return v.kind == KindShared }

// IsInput reports whether v is a data input.
func (v *Variable) IsInput() bool { return v.kind == KindInput }

// IsConstant reports whether v is a constant.
func (v *Variable) IsConstant() bool { return v.kind == KindConstant }

// Value is the array of a shared variable or constant (nil otherwise). The
// array is the one every compiled function reads: change it in place
// (after BeforeWrite) or through SetValue. When a read guard holds a newer
// value (a function run on a GPU updated it), Value first runs the write
// guards, has the read guard copy its value in and removes it, so that
// what the caller reads, or writes in place, is what the next function
// run sees.
func (v *Variable) Value() *nd.Array {
	if g := v.readGuard; g != nil {
		v.readGuard = nil
		v.BeforeWrite()
		g.BeforeRead(v.value)
	}
	return v.value
}

// SetWriteGuard makes f run before the value's array is next written in
// place (BeforeWrite), once. owner identifies the guard: a later
// SetWriteGuard of the same owner replaces it (nil f removes it), one of
// another owner is kept beside it. A background checkpoint uses it to
// copy an array only when training is about to change it, off the
// training loop's path until then (train/checkpoint). Set it, and write
// the value, on the goroutine that trains.
func (v *Variable) SetWriteGuard(owner any, f func()) {
	for i, g := range v.guards {
		if g.owner == owner {
			v.guards = slices.Delete(v.guards, i, i+1)
			break
		}
	}
	if f != nil {
		v.guards = append(v.guards, writeGuard{owner, f})
	}
}

// writeGuard is a guard SetWriteGuard set.
type writeGuard struct {
	owner any
	f     func()
}

// BeforeWrite runs the write guards, if any, and clears them. Whoever
// writes a shared variable's array in place calls it first: the
// executors before storing an update, set_value, initialization,
// Restore. SetValue, which replaces the array, needs no guard.
func (v *Variable) BeforeWrite() {
	if len(v.guards) == 0 {
		return
	}
	gs := v.guards
	v.guards = nil
	for _, g := range gs {
		g.f()
	}
}

// ReadGuard is a backend's claim on a shared variable's value: it holds
// a copy elsewhere (core/exec/cuda: on its GPU) that may be newer than the
// host array. The variable keeps no more than the guard; what the copy is,
// and where, is the backend's business.
type ReadGuard interface {
	// BeforeRead copies the newer value into host, the variable's array,
	// before the host reads it (Value, after the write guards ran). The
	// claim ends with it.
	BeforeRead(host *nd.Array)
	// Dropped says the claim ended without a read: SetValue replaced the
	// array, or another guard took the variable (SetReadGuard), so the
	// copy is no longer the variable's value.
	Dropped()
}

// SetReadGuard records that g holds the variable's current value, until
// Value (g.BeforeRead) or SetValue (g.Dropped) ends the claim: the host
// array may be stale until then. A backend sets it after a run that
// updated the variable on its device. A different guard already set is
// dropped; nil removes the guard without a read (dropping it).
func (v *Variable) SetReadGuard(g ReadGuard) {
	old := v.readGuard
	v.readGuard = g
	if old != nil && old != g {
		old.Dropped()
	}
}

// SetValue replaces a shared variable's value. The new array must have the
// variable's dtype and number of dimensions.
func (v *Variable) SetValue(a *nd.Array) error {
	if v.kind != KindShared {
		return fmt.Errorf("core: %s is not a shared variable", v)
	}
	if a.NDim() != v.ndim {
		return fmt.Errorf("core: value for %s must be %d-d, got shape %v", v, v.ndim, a.Shape)
	}
	if a.DType() != v.dtype {
		a = a.Astype(v.dtype)
	}
	v.SetReadGuard(nil)
	v.value = a
	return nil
}

// TypeString is Theano's type description: "TensorType(float32, matrix)".
func (v *Variable) TypeString() string {
	return fmt.Sprintf("TensorType(%s, %s)", v.dtype, ndimName(v.ndim))
}

func ndimName(n int) string {
	switch n {
	case 0:
		return "scalar"
	case 1:
		return "vector"
	case 2:
		return "matrix"
	}
	return fmt.Sprintf("%dD", n)
}

// String is the variable's name, or its op and type when unnamed.
func (v *Variable) String() string {
	if v.Name != "" {
		return v.Name
	}
	switch v.kind {
	case KindOp:
		return fmt.Sprintf("%s.0", v.op)
	case KindConstant:
		if v.value.Size() == 1 {
			return fmt.Sprintf("Constant{%g}", v.value.Flat(0))
		}
		return "Constant"
	}
	return v.TypeString()
}

// Copy returns a new variable equal in value to v (Theano's tensor copy):
// a fresh node to hang annotations on. It costs nothing at run time.
func (v *Variable) Copy() *Variable {
	c := apply(CopyOp{}, v)
	c.Name = v.Name
	return c
}

// Rebuild returns a new variable computing v's op on other inputs, with v's
// name and annotations (used by graph replacement). Inputs must have the
// dtypes and dimensions the op accepts.
func Rebuild(v *Variable, inputs []*Variable) (*Variable, error) {
	if v.kind != KindOp {
		return nil, fmt.Errorf("core: cannot rebuild %s, which is not the result of an operation", v)
	}
	w, err := tryApply(v.op, inputs...)
	if err != nil {
		return nil, fmt.Errorf("core: rebuilding %s: %v", v, err)
	}
	w.Name, w.Trace = v.Name, v.Trace
	w.Tag = v.Tag
	w.Tag.Roles = append([]*Role(nil), v.Tag.Roles...)
	w.Tag.Annotations = append([]Annotation(nil), v.Tag.Annotations...)
	return w, nil
}
