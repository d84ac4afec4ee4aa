package core

import (
	"fmt"
	"strings"
	"sync"

	"github.com/blocks-go/blocks/nd"
)

// Scan is Theano's scan restricted to what Blocks' recurrent bricks need:
// a step function, given once as a graph over per-step placeholders, is
// iterated over the leading (time) axis of the sequences, whose length is
// known only when the function runs.
//
// The step graph is compiled once per per-step shape signature (batch
// size, dimensions) and the loop over time runs in the executor, so a new
// sequence length costs no re-lowering of the step. Outputs are stacked
// over time in iteration order (with Reverse, the first row is the step
// that read the last input, as Theano's go_backwards). The gradient is
// back-propagation through time: a second loop that runs the step's
// symbolic vector-Jacobian product backwards.
type ScanSpec struct {
	// Sequences are iterated over their first axis; all must have the same
	// length. At least one is required.
	Sequences []*Variable
	// States are the initial values of the recurrent states.
	States []*Variable
	// Contexts are given unchanged to every step.
	Contexts []*Variable
	// Reverse iterates from the last element of the sequences to the first.
	Reverse bool
	// NSteps is the number of steps when there are no sequences (Theano's
	// n_steps, here a constant); ignored otherwise.
	NSteps int
	// Name names the scan in errors and printing.
	Name string
}

// StepFunc builds one step from placeholders for a slice of each sequence,
// the previous states and the contexts. It returns the new states (one per
// state, same dtype and dimensions) and any further per-step outputs. It
// may use any other variable of the graph (parameters, values computed
// outside the loop): Scan passes those in as implicit contexts.
type StepFunc func(seqs, states, contexts []*Variable) (newStates, outputs []*Variable, err error)

// scanInfo is what the scan node, its output views and its gradient share.
// ScanLoop is a Scan's loop: its step function, the inputs it slices and
// carries, and its layouts. Its ops' kernels run it (the CPU backend's).
type ScanLoop struct {
	name                        string
	nSeq, nState, nCtx, nFree   int
	nSteps                      int // when there are no sequences
	nOut                        int // inner outputs: states then extra outputs
	reverse                     bool
	dtype                       nd.DType
	placeholders                []*Variable // seqs, states, contexts, free
	innerOuts                   []*Variable
	step                        *Function
	gradOnce                    sync.Once
	grad                        *Function
	gradErr                     error
	gradWrt                     []int // placeholder index per grad output
	mu                          sync.Mutex
	run                         sync.Mutex // one run of the loop at a time (Lock)
	layouts                     map[string]*ScanLayout
	outNames                    []string
	stateNDim, seqNDim, outNDim []int
}

// ScanLayout is a loop's packed output for some outer input shapes: T
// steps; per inner output (states, then extra outputs) its shape at one
// step and its offset in the packed buffer, of Total elements; InShapes
// the per-step input shapes (slices of the sequences, then the states,
// contexts and free inputs whole).
type ScanLayout struct {
	T          int
	StepShapes [][]int
	Offsets    []int
	Total      int
	InShapes   [][]int
}

// Scan builds the loop. It returns the states after each step and the extra
// outputs of each step, each stacked over time: (T, ...).
func Scan(spec ScanSpec, step StepFunc) (states, outputs []*Variable, err error) {
	name := spec.Name
	if name == "" {
		name = "scan"
	}
	if len(spec.Sequences) == 0 && spec.NSteps <= 0 {
		return nil, nil, fmt.Errorf("%s: give a sequence (the number of steps is its length) or a positive number of steps", name)
	}
	info := &ScanLoop{name: name, nSeq: len(spec.Sequences), nState: len(spec.States), nCtx: len(spec.Contexts),
		reverse: spec.Reverse, layouts: map[string]*ScanLayout{}, nSteps: spec.NSteps}
	var ph []*Variable
	var seqP, stateP, ctxP []*Variable
	for i, s := range spec.Sequences {
		if s.ndim < 1 {
			return nil, nil, fmt.Errorf("%s: sequence %d (%s) is a scalar; sequences are iterated over their first axis", name, i, s)
		}
		p := NewInput(fmt.Sprintf("%s[t]", s), s.dtype, s.ndim-1)
		seqP = append(seqP, p)
	}
	for _, s := range spec.States {
		stateP = append(stateP, NewInput(fmt.Sprintf("%s[t-1]", s), s.dtype, s.ndim))
	}
	for _, c := range spec.Contexts {
		ctxP = append(ctxP, NewInput(c.String(), c.dtype, c.ndim))
	}
	newStates, outs, err := step(seqP, stateP, ctxP)
	if err != nil {
		return nil, nil, err
	}
	if len(newStates) != len(spec.States) {
		return nil, nil, fmt.Errorf("%s: the step returned %d states, want %d", name, len(newStates), len(spec.States))
	}
	for i, s := range newStates {
		if s.ndim != spec.States[i].ndim {
			return nil, nil, fmt.Errorf("%s: state %d (%s) is %d-d but the step made it %d-d", name, i, spec.States[i], spec.States[i].ndim, s.ndim)
		}
		if s.dtype != spec.States[i].dtype {
			newStates[i] = Cast(s, spec.States[i].dtype)
		}
	}
	inner := append(append([]*Variable(nil), newStates...), outs...)
	ph = append(append(append(ph, seqP...), stateP...), ctxP...)

	// Free variables: nodes outside the loop (not depending on a
	// placeholder) used by nodes inside it. Constants stay embedded.
	isPH := map[*Variable]bool{}
	for _, p := range ph {
		isPH[p] = true
	}
	order := Ancestors(inner)
	dep := map[*Variable]bool{}
	for _, v := range order {
		if isPH[v] {
			dep[v] = true
			continue
		}
		for _, in := range v.inputs {
			if dep[in] {
				dep[v] = true
				break
			}
		}
	}
	var freeOuter []*Variable
	freeP := map[*Variable]*Variable{}
	addFree := func(v *Variable) {
		if _, ok := freeP[v]; ok || v.kind == KindConstant {
			return
		}
		p := NewInput(v.String(), v.dtype, v.ndim)
		freeP[v] = p
		freeOuter = append(freeOuter, v)
	}
	for _, v := range order {
		if !dep[v] {
			continue
		}
		for _, in := range v.inputs {
			if !dep[in] {
				addFree(in)
			}
		}
	}
	for _, o := range inner {
		if !dep[o] {
			addFree(o)
		}
	}
	for _, v := range freeOuter {
		ph = append(ph, freeP[v])
	}
	info.nFree = len(freeOuter)
	// Rebuild the inner graph on the placeholders.
	clone := map[*Variable]*Variable{}
	for v, p := range freeP {
		clone[v] = p
	}
	for _, v := range order {
		if _, ok := clone[v]; ok {
			continue
		}
		if !dep[v] || isPH[v] {
			clone[v] = v
			continue
		}
		ins := make([]*Variable, len(v.inputs))
		for k, in := range v.inputs {
			ins[k] = clone[in]
		}
		w, err := Rebuild(v, ins)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", name, err)
		}
		clone[v] = w
	}
	innerOuts := make([]*Variable, len(inner))
	for i, o := range inner {
		innerOuts[i] = clone[o]
	}
	info.placeholders = ph
	info.innerOuts = innerOuts
	info.nOut = len(innerOuts)
	if len(innerOuts) == 0 {
		return nil, nil, fmt.Errorf("%s: the step has no states and no outputs", name)
	}
	info.dtype = innerOuts[0].dtype
	for i, o := range innerOuts {
		if !o.dtype.IsFloat() || o.dtype != info.dtype {
			return nil, nil, fmt.Errorf("%s: every state and output of a step must have one float dtype (%s); output %d (%s) is %s", name, info.dtype, i, o, o.dtype)
		}
		info.outNames = append(info.outNames, inner[i].String())
	}
	info.step, err = compileCPU(ph, innerOuts, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: compiling the step: %v", name, err)
	}
	outerIns := append(append(append(append([]*Variable(nil), spec.Sequences...), spec.States...), spec.Contexts...), freeOuter...)
	packed, err := tryApply(&ScanOp{info}, outerIns...)
	if err != nil {
		return nil, nil, err
	}
	packed.Name = name + ".packed"
	for k := range innerOuts {
		v, err := tryApply(&ScanOutputOp{info, k}, append([]*Variable{packed}, outerIns...)...)
		if err != nil {
			return nil, nil, err
		}
		if k < info.nState {
			states = append(states, v)
		} else {
			outputs = append(outputs, v)
		}
	}
	return states, outputs, nil
}

// layout computes (and caches) the packed layout for the outer input
// shapes.
func (s *ScanLoop) layout(in [][]int) (*ScanLayout, error) {
	var kb strings.Builder
	for _, sh := range in {
		for _, d := range sh {
			fmt.Fprintf(&kb, "%d,", d)
		}
		kb.WriteByte(';')
	}
	key := kb.String()
	s.mu.Lock()
	l, ok := s.layouts[key]
	s.mu.Unlock()
	if ok {
		return l, nil
	}
	T := s.nSteps
	if s.nSeq > 0 {
		T = in[0][0]
	}
	for i := 1; i < s.nSeq; i++ {
		if in[i][0] != T {
			return nil, fmt.Errorf("%s: sequences have different lengths: %d and %d (sequence %d)", s.name, T, in[i][0], i)
		}
	}
	dummy := make([]*nd.Array, len(in))
	l = &ScanLayout{T: T}
	for i, sh := range in {
		if i < s.nSeq {
			sh = sh[1:]
		}
		l.InShapes = append(l.InShapes, sh)
		// Empty data of the right dtype: shape inference reads only shapes.
		dummy[i] = &nd.Array{Shape: sh, Data: emptyData(s.placeholders[i].dtype)}
	}
	shapes, err := s.step.inferShapes(dummy)
	if err != nil {
		return nil, fmt.Errorf("%s: in the step: %w", s.name, err)
	}
	shapeOf := func(v *Variable) []int { return shapes[s.step.index[v]] }
	for k := 0; k < s.nState; k++ {
		st := shapeOf(s.innerOuts[k])
		if !nd.SameShape(st, in[s.nSeq+k]) {
			return nil, fmt.Errorf("%s: state %s has shape %s but the step returns shape %s", s.name, s.placeholders[s.nSeq+k], nd.ShapeString(in[s.nSeq+k]), nd.ShapeString(st))
		}
	}
	off := 0
	for _, o := range s.innerOuts {
		st := append([]int(nil), shapeOf(o)...)
		l.StepShapes = append(l.StepShapes, st)
		l.Offsets = append(l.Offsets, off)
		off += T * nd.Prod(st)
	}
	l.Total = off
	s.mu.Lock()
	s.layouts[key] = l
	s.mu.Unlock()
	return l, nil
}

func emptyData(dt nd.DType) any {
	switch dt {
	case nd.Float32:
		return []float32{}
	case nd.Float64:
		return []float64{}
	case nd.Int64:
		return []int64{}
	case nd.Int32:
		return []int32{}
	case nd.Uint8:
		return []uint8{}
	}
	return []bool{}
}

// ScanOp runs the loop; its output packs every stacked output into one
// flat array (the executor's ops have one output each); scanOutputOp views
// one of them.
type ScanOp struct{ info *ScanLoop }

func (o *ScanOp) String() string { return "Scan{" + o.info.name + "}" }
func (o *ScanOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.info.dtype, 1, nil
}
func (o *ScanOp) Shape(in [][]int) ([]int, error) {
	l, err := o.info.layout(in)
	if err != nil {
		return nil, err
	}
	return []int{l.Total}, nil
}

// Loop is the op's loop.
func (o *ScanOp) Loop() *ScanLoop { return o.info }

func (o *ScanOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := apply(&ScanGradOp{o.info}, append(append([]*Variable(nil), in...), out, gz)...)
	grads := make([]*Variable, len(in))
	for k, x := range in {
		if !x.dtype.IsFloat() {
			continue
		}
		grads[k] = apply(&ScanGradPartOp{o.info, k}, append([]*Variable{g}, in...)...)
	}
	return grads
}

// ScanOutputOp is the view of one stacked output in the packed buffer. Its
// inputs are the packed buffer and the scan's inputs (for the layout).
type ScanOutputOp struct {
	info *ScanLoop
	k    int
}

func (o *ScanOutputOp) String() string {
	return fmt.Sprintf("ScanOutput{%s, %s}", o.info.name, o.info.outNames[o.k])
}
func (o *ScanOutputOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.info.dtype, o.info.innerOuts[o.k].ndim + 1, nil
}
func (o *ScanOutputOp) Shape(in [][]int) ([]int, error) {
	l, err := o.info.layout(in[1:])
	if err != nil {
		return nil, err
	}
	return append([]int{l.T}, l.StepShapes[o.k]...), nil
}
func (o *ScanOutputOp) IsView(in [][]int, out []int) bool { return true }

// Output is the op's loop and the inner output it views.
func (o *ScanOutputOp) Output() (*ScanLoop, int) { return o.info, o.k }

func (o *ScanOutputOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := make([]*Variable, len(in))
	g[0] = apply(&ScanOutputGradOp{o.info, o.k}, append([]*Variable{gz}, in[1:]...)...)
	return g
}

// ScanOutputGradOp places the gradient of one output into a packed-shaped
// array of zeros.
type ScanOutputGradOp struct {
	info *ScanLoop
	k    int
}

func (o *ScanOutputGradOp) String() string { return "ScanOutputGrad{" + o.info.name + "}" }
func (o *ScanOutputGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.info.dtype, 1, nil
}
func (o *ScanOutputGradOp) Shape(in [][]int) ([]int, error) {
	l, err := o.info.layout(in[1:])
	if err != nil {
		return nil, err
	}
	return []int{l.Total}, nil
}

// Output is the op's loop and the inner output whose gradient it places.
func (o *ScanOutputGradOp) Output() (*ScanLoop, int) { return o.info, o.k }

func (o *ScanOutputGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// gradFunction compiles (once) the step's vector-Jacobian product: inputs
// the placeholders and one gradient per inner output, outputs the
// gradients with respect to the float placeholders.
func (s *ScanLoop) gradFunction() (*Function, error) {
	s.gradOnce.Do(func() {
		known := map[*Variable]*Variable{}
		var gph []*Variable
		for k, o := range s.innerOuts {
			g := NewInput(fmt.Sprintf("d%s", s.outNames[k]), o.dtype, o.ndim)
			gph = append(gph, g)
			if prev, ok := known[o]; ok {
				known[o] = Add(prev, g)
			} else {
				known[o] = g
			}
		}
		var wrt []*Variable
		for i, p := range s.placeholders {
			if p.dtype.IsFloat() {
				wrt = append(wrt, p)
				s.gradWrt = append(s.gradWrt, i)
			}
		}
		grads, err := Grad(nil, wrt, GradOptions{KnownGrads: known, AllowDisconnected: true})
		if err != nil {
			s.gradErr = fmt.Errorf("%s: differentiating the step: %w", s.name, err)
			return
		}
		s.grad, s.gradErr = compileCPU(append(append([]*Variable(nil), s.placeholders...), gph...), grads, nil)
	})
	return s.grad, s.gradErr
}

// Layout is the loop's packed layout for outer inputs of these shapes.
func (s *ScanLoop) Layout(in [][]int) (*ScanLayout, error) { return s.layout(in) }

// Lock and Unlock bracket one run of the loop, forward or backward: its
// step functions' output buffers, valid until their next call, are the
// loop's, whichever node and executor runs it.
func (s *ScanLoop) Lock() { s.run.Lock() }

// Unlock ends a run of the loop (Lock).
func (s *ScanLoop) Unlock() { s.run.Unlock() }

// Name names the loop in errors.
func (s *ScanLoop) Name() string { return s.name }

// Counts are the loop's numbers of sequences, states and inner outputs
// (the states, then the extra outputs).
func (s *ScanLoop) Counts() (seqs, states, outs int) { return s.nSeq, s.nState, s.nOut }

// Reverse says whether the loop runs from the sequences' ends.
func (s *ScanLoop) Reverse() bool { return s.reverse }

// DType is the dtype of the loop's states and outputs.
func (s *ScanLoop) DType() nd.DType { return s.dtype }

// Step is the loop's step function: inputs the placeholders (a step's
// slices of the sequences, the states, contexts, free inputs), outputs
// the inner outputs.
func (s *ScanLoop) Step() *Function { return s.step }

// GradStep is the step's vector-Jacobian product (compiled once): inputs
// the placeholders then one gradient per inner output; outputs the
// gradients of the placeholders wrt lists (the float ones, by index).
func (s *ScanLoop) GradStep() (f *Function, wrt []int, err error) {
	f, err = s.gradFunction()
	return f, s.gradWrt, err
}

// ScanGradLayout is where each input's gradient sits in a loop's packed
// gradient, for inputs of these shapes.
func ScanGradLayout(in [][]int) (offsets []int, total int) { return gradLayout(in) }

// gradLayout is where each input's gradient sits in the packed gradient.
func gradLayout(in [][]int) (offsets []int, total int) {
	for _, sh := range in {
		offsets = append(offsets, total)
		total += nd.Prod(sh)
	}
	return offsets, total
}

// ScanGradOp is back-propagation through time. Inputs: the scan's inputs,
// its packed output and the packed output gradient. Output: the gradients
// of all the scan's inputs, packed (integer inputs get zeros).
type ScanGradOp struct{ info *ScanLoop }

func (o *ScanGradOp) String() string { return "ScanGrad{" + o.info.name + "}" }
func (o *ScanGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.info.dtype, 1, nil
}
func (o *ScanGradOp) Shape(in [][]int) ([]int, error) {
	if _, err := o.info.gradFunction(); err != nil {
		return nil, err
	}
	_, total := gradLayout(in[:len(in)-2])
	return []int{total}, nil
}

// Loop is the loop whose gradient the op computes.
func (o *ScanGradOp) Loop() *ScanLoop { return o.info }

func (o *ScanGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// ScanGradPartOp views the gradient of input k in the packed gradient.
// Inputs: the packed gradient and the scan's inputs.
type ScanGradPartOp struct {
	info *ScanLoop
	k    int
}

func (o *ScanGradPartOp) String() string {
	return fmt.Sprintf("ScanGradPart{%s, %d}", o.info.name, o.k)
}
func (o *ScanGradPartOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[1+o.k].dtype, in[1+o.k].ndim, nil
}
func (o *ScanGradPartOp) Shape(in [][]int) ([]int, error) { return in[1+o.k], nil }
func (o *ScanGradPartOp) IsView(in [][]int, out []int) bool {
	return true
}

// Part is the input whose gradient the op views.
func (o *ScanGradPartOp) Part() int { return o.k }

func (o *ScanGradPartOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// RunNoCopy runs f on args (already of the right dtypes and dimensions)
// and returns its output buffers themselves, valid until the next call:
// a loop's step function, run by its executor as any function is (a
// loop's kernel calls it once per step).
func (f *Function) RunNoCopy(args []*nd.Array) ([]*nd.Array, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exec.Run(args, false)
}
