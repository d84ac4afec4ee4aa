package core

import (
	"fmt"
	"strings"
	"sync"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// Update asks a function to store Value into the shared variable Shared
// after each call (Theano's updates). All updates of a call see the values
// from before it.
type Update struct {
	Shared, Value *Variable
}

// Function is a compiled computation: given arrays for its inputs it
// returns its outputs and applies its updates. It is planned once per
// input-shape signature; the plans are cached. Safe for concurrent use (calls
// are serialised).
type Function struct {
	inputs  []*Variable
	outputs []*Variable
	updates []Update

	nodes []*Variable       // topological order
	index map[*Variable]int // position in nodes
	argOf []int             // node -> input argument index, or -1

	// maxBytes bounds each value the function computes (0: the machine's
	// memory); SetMemoryLimit.
	maxBytes uint64
	maxWhat  string

	backend Backend
	device  device.Device
	exec    Executor

	mu sync.Mutex // serialises calls
}

// InputError is a data input given with the wrong dtype or dimensions.
type InputError struct {
	Input *Variable
	Msg   string
}

func (e *InputError) Error() string { return e.Msg }

// SetMemoryLimit makes the function refuse, before allocating, a value
// larger than bytes (0: the machine's memory); what names the limit in
// the error. Call it before the first Call.
func (f *Function) SetMemoryLimit(bytes uint64, what string) {
	f.maxBytes, f.maxWhat = bytes, what
}

// Compile plans a function computing outputs from inputs and applying
// updates, to run on the CPU (CompileFor names another device). Every data
// input the outputs and updates depend on must be listed in inputs.
func Compile(inputs, outputs []*Variable, updates []Update) (*Function, error) {
	return CompileFor(device.Device{}, inputs, outputs, updates)
}

// CompileFor is Compile for device d, on the backend of d's kind
// (BackendFor); the zero Device is the CPU. Nothing in the process selects
// a device: the caller says where (a run's config.device, an algorithm's
// Device field).
func CompileFor(d device.Device, inputs, outputs []*Variable, updates []Update) (*Function, error) {
	b, err := BackendFor(d)
	if err != nil {
		return nil, err
	}
	return compileOn(b, d, inputs, outputs, updates)
}

// CompileOn is Compile on backend b, for the device of b's kind with
// index 0 (CompileFor names an index).
func CompileOn(b Backend, inputs, outputs []*Variable, updates []Update) (*Function, error) {
	return compileOn(b, device.Device{Kind: device.Kind(b.Name())}, inputs, outputs, updates)
}

func compileOn(b Backend, d device.Device, inputs, outputs []*Variable, updates []Update) (*Function, error) {
	if d.IsCPU() {
		d = device.Device{Kind: device.CPU}
	}
	f, err := compileGraph(inputs, outputs, updates)
	if err != nil {
		return nil, err
	}
	f.backend, f.device = b, d
	if f.exec, err = b.Executor(f); err != nil {
		return nil, fmt.Errorf("%s backend: %w", b.Name(), err)
	}
	return f, nil
}

// compileCPU is Compile: the step functions of loops, which the CPU
// executor runs itself (scan.go).
func compileCPU(inputs, outputs []*Variable, updates []Update) (*Function, error) {
	return Compile(inputs, outputs, updates)
}

// compileGraph checks the request and orders its graph.
func compileGraph(inputs, outputs []*Variable, updates []Update) (*Function, error) {
	f := &Function{inputs: inputs, outputs: outputs, updates: updates}
	roots := append([]*Variable(nil), outputs...)
	for _, u := range updates {
		if !u.Shared.IsShared() {
			return nil, fmt.Errorf("update target %s is not a shared variable", u.Shared)
		}
		if u.Value.ndim != u.Shared.ndim {
			return nil, fmt.Errorf("update of %s (%d-d) with a %d-d value %s", u.Shared, u.Shared.ndim, u.Value.ndim, u.Value)
		}
		roots = append(roots, u.Value)
	}
	f.nodes = Ancestors(append(roots, inputs...))
	f.index = make(map[*Variable]int, len(f.nodes))
	for i, v := range f.nodes {
		f.index[v] = i
	}
	f.argOf = make([]int, len(f.nodes))
	for i := range f.argOf {
		f.argOf[i] = -1
	}
	for k, in := range inputs {
		if !in.IsInput() {
			return nil, fmt.Errorf("function input %s is not an input variable (it is %s)", in, kindName(in.kind))
		}
		if f.argOf[f.index[in]] >= 0 {
			return nil, fmt.Errorf("input %s is given twice", in)
		}
		f.argOf[f.index[in]] = k
	}
	var missing []string
	for i, v := range f.nodes {
		if v.IsInput() && f.argOf[i] < 0 {
			missing = append(missing, fmt.Sprintf("%s (%s)", v, v.TypeString()))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the outputs depend on inputs that were not given: %s", strings.Join(missing, ", "))
	}
	return f, nil
}

func kindName(k Kind) string {
	return [...]string{"an input", "a shared variable", "a constant", "the result of an operation"}[k]
}

// Inputs are the function's input variables, in argument order.
func (f *Function) Inputs() []*Variable { return f.inputs }

// Outputs are the function's outputs.
func (f *Function) Outputs() []*Variable { return f.outputs }

// Call runs the function. It returns fresh copies of the outputs.
func (f *Function) Call(args []*nd.Array) ([]*nd.Array, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.call(args, true)
}

// CallView is Call without copying the outputs: it returns the function's
// own output buffers (and slice), valid until its next call; an output
// that is an input, or a view of one, shares the caller's array. A
// training step that only reads a scalar output uses it to allocate
// nothing.
func (f *Function) CallView(args []*nd.Array) ([]*nd.Array, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.call(args, false)
}

func (f *Function) call(args []*nd.Array, copyOutputs bool) ([]*nd.Array, error) {
	if len(args) != len(f.inputs) {
		return nil, fmt.Errorf("function takes %d inputs, got %d", len(f.inputs), len(args))
	}
	for k, a := range args {
		in := f.inputs[k]
		if a.NDim() != in.ndim {
			return nil, &InputError{in, fmt.Sprintf("input %s is %s (%d-d) but got an array of shape %s (%d-d)",
				in, in.TypeString(), in.ndim, nd.ShapeString(a.Shape), a.NDim())}
		}
		if !canFeed(a.DType(), in.dtype) {
			return nil, &InputError{in, fmt.Sprintf("input %s is %s but got %s data; convert the data to %s first",
				in, in.TypeString(), a.DType(), in.dtype)}
		}
	}
	return f.exec.Run(args, copyOutputs)
}

// CanFeed reports whether data of dtype from may feed an input variable
// of dtype to, as Theano's TensorType.filter decides it without
// allow_input_downcast: when the upcast of the two dtypes is to, so that
// no value is lost (a uint8 or int16 batch into a float32 input, int32
// into int64; never float64 into float32, int32 into float32 or a float
// into an integer). The function converts the data.
func CanFeed(from, to nd.DType) bool { return canFeed(from, to) }

func canFeed(from, to nd.DType) bool {
	return from.IsNumeric() && to.IsNumeric() && promote(from, to) == to
}

func (f *Function) nodeError(i int, err error) error {
	v := f.nodes[i]
	where := ""
	if v.Trace != "" {
		where = " (made at " + v.Trace + ")"
	}
	var ins []string
	for _, in := range v.inputs {
		ins = append(ins, in.String())
	}
	return fmt.Errorf("computing %s = %s(%s)%s: %w", v, v.op, strings.Join(ins, ", "), where, err)
}

// Program lists the ops the function runs for the given arguments, one
// "node = op(inputs)" line per step in execution order (views marked), for
// tests and performance work. It plans the function for these shapes.
func (f *Function) Program(args []*nd.Array) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exec.Program(args)
}
