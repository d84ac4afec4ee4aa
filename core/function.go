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
	exec    Executor

	mu    sync.Mutex
	plans map[string]*plan
	outs  []*nd.Array // CallView's result, reused
	key   []byte
}

// checker is an op that validates its input values before running.
type checker interface {
	Check(in []*nd.Array) error
}

type step struct {
	node  int
	op    Op
	in    []int
	view  bool
	check checker
	// into, when ≥ 0, is the shared variable's node whose storage the
	// step writes its result into (an update made in place, fuse.go).
	into int
}

type plan struct {
	vals    []*nd.Array // one per node; inputs/shared bound at call time
	steps   []step
	inCast  []*nd.Array // conversion buffers for inputs given in another dtype
	staging []*nd.Array // per update, when its value aliases updated storage
	args    []*nd.Array // scratch for op inputs
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
// updates, to run on the device selected for the process (device.Current:
// the CPU unless --device or config.device chose another). Every data
// input the outputs and updates depend on must be listed in inputs.
func Compile(inputs, outputs []*Variable, updates []Update) (*Function, error) {
	b, err := BackendFor(device.Current())
	if err != nil {
		return nil, err
	}
	return CompileOn(b, inputs, outputs, updates)
}

// CompileOn is Compile on backend b.
func CompileOn(b Backend, inputs, outputs []*Variable, updates []Update) (*Function, error) {
	f, err := compileGraph(inputs, outputs, updates)
	if err != nil {
		return nil, err
	}
	f.backend = b
	if f.exec, err = b.Executor(f); err != nil {
		return nil, fmt.Errorf("%s backend: %w", b.Name(), err)
	}
	return f, nil
}

// compileCPU is CompileOn(CPUBackend, ...): the step functions of loops,
// which the CPU executor runs itself (scan.go).
func compileCPU(inputs, outputs []*Variable, updates []Update) (*Function, error) {
	return CompileOn(CPUBackend, inputs, outputs, updates)
}

// compileGraph checks the request and orders its graph.
func compileGraph(inputs, outputs []*Variable, updates []Update) (*Function, error) {
	f := &Function{inputs: inputs, outputs: outputs, updates: updates, plans: map[string]*plan{}}
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

// run is the CPU executor's Run: the function's outputs for checked
// arguments (copies, or its own buffers valid until the next run), its
// updates stored.
func (f *Function) run(args []*nd.Array, copyOutputs bool) ([]*nd.Array, error) {
	p, err := f.plan(args)
	if err != nil {
		return nil, err
	}
	// Bind inputs and shared values.
	f.bind(p, args)
	for _, s := range p.steps {
		out := p.vals[s.node]
		ins := p.args[:len(s.in)]
		for k, j := range s.in {
			ins[k] = p.vals[j]
		}
		if s.check != nil {
			if err := s.check.Check(ins); err != nil {
				return nil, f.nodeError(s.node, err)
			}
		}
		if s.into >= 0 {
			out.Data = p.vals[s.into].Data
		}
		if r, ok := s.op.(errRunner); ok { // loops (core/scan.go)
			if err := r.RunErr(out, ins); err != nil {
				return nil, f.nodeError(s.node, err)
			}
			continue
		}
		s.op.Run(out, ins)
	}
	outs := f.outs[:0]
	if copyOutputs {
		outs = make([]*nd.Array, 0, len(f.outputs))
	}
	for _, o := range f.outputs {
		v := p.vals[f.index[o]]
		if copyOutputs {
			v = v.Copy()
		}
		outs = append(outs, v)
	}
	if !copyOutputs {
		f.outs = outs
	}
	// Updates: stage the values that alias updated storage, then store.
	for k, u := range f.updates {
		if p.staging[k] != nil {
			copyInto(p.staging[k], p.vals[f.index[u.Value]])
		}
	}
	for k, u := range f.updates {
		src := p.vals[f.index[u.Value]]
		if p.staging[k] != nil {
			src = p.staging[k]
		}
		dst := u.Shared.Value()
		if !nd.SameShape(dst.Shape, src.Shape) {
			return outs, fmt.Errorf("update of %s: value has shape %s, the variable %s", u.Shared, nd.ShapeString(src.Shape), nd.ShapeString(dst.Shape))
		}
		if dst.Data != nil && sameData(dst, src) {
			continue
		}
		copyInto(dst, src)
	}
	return outs, nil
}

func copyInto(dst, src *nd.Array) {
	if dst.DType() == src.DType() {
		_ = dst.CopyFrom(src)
		return
	}
	castInto(dst, src)
}

func sameData(a, b *nd.Array) bool {
	if a.Size() == 0 || b.Size() == 0 {
		return false
	}
	switch x := a.Data.(type) {
	case []float32:
		y, ok := b.Data.([]float32)
		return ok && &x[0] == &y[0]
	case []float64:
		y, ok := b.Data.([]float64)
		return ok && &x[0] == &y[0]
	}
	return false
}

// canFeed says whether data of dtype from may feed a variable of dtype to:
// the same kind (integer or float) and no loss (numpy's safe casting).
// CanFeed reports whether data of dtype from may feed an input variable
// of dtype to (the same dtype, or a wider one of the same kind).
func CanFeed(from, to nd.DType) bool { return canFeed(from, to) }

func canFeed(from, to nd.DType) bool {
	if from == to {
		return true
	}
	if from.IsFloat() != to.IsFloat() {
		return false
	}
	if from.IsFloat() {
		return from == nd.Float32 && to == nd.Float64
	}
	rank := map[nd.DType]int{nd.Bool: 0, nd.Uint8: 1, nd.Int32: 2, nd.Int64: 3}
	return rank[from] < rank[to] && !(to == nd.Uint8)
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

// plan returns the cached plan for the arguments' shapes, making it on a
// miss.
func (f *Function) plan(args []*nd.Array) (*plan, error) {
	key := f.key[:0]
	for _, a := range args {
		key = append(key, byte(a.DType()))
		for _, d := range a.Shape {
			key = appendInt(key, d)
		}
		key = append(key, ';')
	}
	for _, v := range f.nodes {
		if v.kind == KindShared {
			for _, d := range v.value.Shape {
				key = appendInt(key, d)
			}
			key = append(key, ';')
		}
	}
	f.key = key
	if p, ok := f.plans[string(key)]; ok {
		return p, nil
	}
	p, err := f.makePlan(args)
	if err != nil {
		return nil, err
	}
	f.plans[string(key)] = p
	return p, nil
}

// appendInt appends all 64 bits of d: shapes that differ only above bit
// 31 must not share a plan (its buffers are sized for one of them).
func appendInt(b []byte, d int) []byte {
	u := uint64(d)
	return append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56), ',')
}

func (f *Function) makePlan(args []*nd.Array) (*plan, error) {
	n := len(f.nodes)
	p := &plan{vals: make([]*nd.Array, n), inCast: make([]*nd.Array, len(args)), staging: make([]*nd.Array, len(f.updates))}
	shapes := make([][]int, n)
	root := make([]int, n) // the node whose storage a view shares
	maxIn := 0
	for i, v := range f.nodes {
		root[i] = i
		switch {
		case f.argOf[i] >= 0:
			a := args[f.argOf[i]]
			if err := a.Consistent(); err != nil {
				return nil, fmt.Errorf("argument %d: %w", f.argOf[i], err)
			}
			shapes[i] = a.Shape
			if a.DType() != v.dtype {
				p.inCast[f.argOf[i]] = nd.New(v.dtype, a.Shape...)
			}
		case v.kind == KindShared || v.kind == KindConstant:
			shapes[i] = v.value.Shape
		default:
			ins := make([]int, len(v.inputs))
			inShapes := make([][]int, len(v.inputs))
			for k, in := range v.inputs {
				ins[k] = f.index[in]
				inShapes[k] = shapes[ins[k]]
			}
			s, err := v.op.Shape(inShapes)
			if err == nil {
				// A shape that overflows, or that no machine could hold,
				// is refused here, before anything is allocated.
				err = nd.CheckAlloc(v.dtype, s, f.maxBytes, f.maxWhat)
			}
			if err != nil {
				return nil, f.nodeError(i, err)
			}
			shapes[i] = s
			st := step{node: i, op: v.op, in: ins, into: -1}
			if vo, ok := v.op.(viewOp); ok && vo.IsView(inShapes, s) {
				st.view = true
				root[i] = root[ins[0]]
				p.vals[i] = &nd.Array{Shape: s}
			} else {
				p.vals[i] = nd.New(v.dtype, s...)
			}
			if c, ok := v.op.(checker); ok {
				st.check = c
			}
			p.steps = append(p.steps, st)
			maxIn = max(maxIn, len(ins))
		}
	}
	p.args = make([]*nd.Array, max(maxIn, 3)) // 3: the fused ops' most inputs
	f.fusePlan(p, shapes, root)
	updated := map[int]bool{}
	for _, u := range f.updates {
		if i, ok := f.index[u.Shared]; ok {
			updated[i] = true
		}
	}
	for k, u := range f.updates {
		j := f.index[u.Value]
		r := root[j]
		if updated[r] && r != f.index[u.Shared] || f.nodes[r].kind == KindInput {
			p.staging[k] = nd.New(u.Shared.dtype, shapes[j]...)
		}
	}
	return p, nil
}

// Program lists the ops the function runs for the given arguments, one
// "node = op(inputs)" line per step in execution order (views marked), for
// tests and performance work. It plans the function for these shapes.
func (f *Function) Program(args []*nd.Array) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exec.Program(args)
}

// cpuProgram is the CPU executor's Program.
func (f *Function) cpuProgram(args []*nd.Array) ([]string, error) {
	p, err := f.plan(args)
	if err != nil {
		return nil, err
	}
	lines := make([]string, 0, len(p.steps))
	for _, s := range p.steps {
		var ins []string
		for _, j := range s.in {
			ins = append(ins, fmt.Sprintf("%%%d", j))
		}
		line := fmt.Sprintf("%%%d = %s(%s) %s", s.node, s.op, strings.Join(ins, ", "), nd.ShapeString(p.vals[s.node].Shape))
		if s.view {
			line += " view"
		}
		if s.into >= 0 {
			line += fmt.Sprintf(" into %%%d", s.into)
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// bind points the plan's values at the call's inputs (cast into the plan's
// buffers where their dtype differs) and at the shared and constant values.
func (f *Function) bind(p *plan, args []*nd.Array) {
	for i, v := range f.nodes {
		switch {
		case f.argOf[i] >= 0:
			a := args[f.argOf[i]]
			if buf := p.inCast[f.argOf[i]]; buf != nil {
				castInto(buf, a)
				a = buf
			}
			p.vals[i] = a
		case v.kind == KindShared || v.kind == KindConstant:
			p.vals[i] = v.Value()
		}
	}
}
