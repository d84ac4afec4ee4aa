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
type scanInfo struct {
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
	run                         sync.Mutex // one loop at a time (the layouts' views)
	layouts                     map[string]*scanLayout
	outNames                    []string
	stateNDim, seqNDim, outNDim []int
}

type scanLayout struct {
	T          int
	stepShapes [][]int // per inner output
	offsets    []int   // per inner output, in the packed buffer
	total      int
	// inShapes are the per-step input shapes (slices of sequences).
	inShapes [][]int
	// The per-step views of the loops (forward, backward) and the
	// backward loop's state gradients, made on the first call with these
	// shapes and pointed again at each call's buffers (scan_views.go):
	// the loops allocate nothing per step. Guarded by scanInfo.run.
	fwdViews, bwdViews viewCache
	carry, gstate      []*nd.Array
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
	info := &scanInfo{name: name, nSeq: len(spec.Sequences), nState: len(spec.States), nCtx: len(spec.Contexts),
		reverse: spec.Reverse, layouts: map[string]*scanLayout{}, nSteps: spec.NSteps}
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
	packed, err := tryApply(&scanOp{info}, outerIns...)
	if err != nil {
		return nil, nil, err
	}
	packed.Name = name + ".packed"
	for k := range innerOuts {
		v, err := tryApply(&scanOutputOp{info, k}, append([]*Variable{packed}, outerIns...)...)
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
func (s *scanInfo) layout(in [][]int) (*scanLayout, error) {
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
	l = &scanLayout{T: T}
	for i, sh := range in {
		if i < s.nSeq {
			sh = sh[1:]
		}
		l.inShapes = append(l.inShapes, sh)
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
		l.stepShapes = append(l.stepShapes, st)
		l.offsets = append(l.offsets, off)
		off += T * nd.Prod(st)
	}
	l.total = off
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

// view is the array of the given shape at data[off:off+size].
func view(a *nd.Array, off int, shape []int) *nd.Array {
	return &nd.Array{Shape: shape, Data: nd.SliceData(a.Data, off, off+nd.Prod(shape))}
}

// addInto adds src into dst (same size) elementwise.
func addInto(dst, src *nd.Array) {
	switch d := dst.Data.(type) {
	case []float32:
		if s, ok := src.Data.([]float32); ok {
			for i := range d {
				d[i] += s[i]
			}
			return
		}
	case []float64:
		if s, ok := src.Data.([]float64); ok {
			for i := range d {
				d[i] += s[i]
			}
			return
		}
	}
	for i, n := 0, dst.Size(); i < n; i++ {
		dst.SetFlat(i, dst.Flat(i)+src.Flat(i))
	}
}

// scanOp runs the loop; its output packs every stacked output into one
// flat array (the executor's ops have one output each); scanOutputOp views
// one of them.
type scanOp struct{ info *scanInfo }

func (o *scanOp) String() string { return "Scan{" + o.info.name + "}" }
func (o *scanOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.info.dtype, 1, nil
}
func (o *scanOp) Shape(in [][]int) ([]int, error) {
	l, err := o.info.layout(in)
	if err != nil {
		return nil, err
	}
	return []int{l.total}, nil
}

func (o *scanOp) Run(out *nd.Array, in []*nd.Array) {
	if err := o.RunErr(out, in); err != nil {
		panic(err)
	}
}

// RunErr runs the loop, reporting the step's errors.
func (o *scanOp) RunErr(out *nd.Array, in []*nd.Array) error {
	s := o.info
	shapes := make([][]int, len(in))
	for i, a := range in {
		shapes[i] = a.Shape
	}
	l, err := s.layout(shapes)
	if err != nil {
		return err
	}
	s.run.Lock()
	defer s.run.Unlock()
	args := make([]*nd.Array, len(in))
	copy(args, in)
	for step := 0; step < l.T; step++ {
		t := step
		if s.reverse {
			t = l.T - 1 - step
		}
		for i := 0; i < s.nSeq; i++ {
			n := nd.Prod(l.inShapes[i])
			args[i] = l.fwdViews.at(l.T, step, i, len(in), in[i], t*n, l.inShapes[i])
		}
		if step > 0 {
			for k := 0; k < s.nState; k++ {
				n := nd.Prod(l.stepShapes[k])
				args[s.nSeq+k] = l.fwdViews.at(l.T, step, s.nSeq+k, len(in), out, l.offsets[k]+(step-1)*n, l.stepShapes[k])
			}
		}
		res, err := s.step.callNoCopy(args)
		if err != nil {
			return fmt.Errorf("%s, step %d: %w", s.name, step, err)
		}
		for k, r := range res {
			n := nd.Prod(l.stepShapes[k])
			copyAt(out, l.offsets[k]+step*n, r)
		}
	}
	return nil
}

func (o *scanOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := apply(&scanGradOp{o.info}, append(append([]*Variable(nil), in...), out, gz)...)
	grads := make([]*Variable, len(in))
	for k, x := range in {
		if !x.dtype.IsFloat() {
			continue
		}
		grads[k] = apply(&scanGradPartOp{o.info, k}, append([]*Variable{g}, in...)...)
	}
	return grads
}

// scanOutputOp is the view of one stacked output in the packed buffer. Its
// inputs are the packed buffer and the scan's inputs (for the layout).
type scanOutputOp struct {
	info *scanInfo
	k    int
}

func (o *scanOutputOp) String() string {
	return fmt.Sprintf("ScanOutput{%s, %s}", o.info.name, o.info.outNames[o.k])
}
func (o *scanOutputOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.info.dtype, o.info.innerOuts[o.k].ndim + 1, nil
}
func (o *scanOutputOp) Shape(in [][]int) ([]int, error) {
	l, err := o.info.layout(in[1:])
	if err != nil {
		return nil, err
	}
	return append([]int{l.T}, l.stepShapes[o.k]...), nil
}
func (o *scanOutputOp) IsView(in [][]int, out []int) bool { return true }
func (o *scanOutputOp) Run(out *nd.Array, in []*nd.Array) {
	shapes := make([][]int, len(in)-1)
	for i, a := range in[1:] {
		shapes[i] = a.Shape
	}
	l, _ := o.info.layout(shapes)
	out.Data = nd.SliceData(in[0].Data, l.offsets[o.k], l.offsets[o.k]+nd.Prod(out.Shape))
}
func (o *scanOutputOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := make([]*Variable, len(in))
	g[0] = apply(&scanOutputGradOp{o.info, o.k}, append([]*Variable{gz}, in[1:]...)...)
	return g
}

// scanOutputGradOp places the gradient of one output into a packed-shaped
// array of zeros.
type scanOutputGradOp struct {
	info *scanInfo
	k    int
}

func (o *scanOutputGradOp) String() string { return "ScanOutputGrad{" + o.info.name + "}" }
func (o *scanOutputGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.info.dtype, 1, nil
}
func (o *scanOutputGradOp) Shape(in [][]int) ([]int, error) {
	l, err := o.info.layout(in[1:])
	if err != nil {
		return nil, err
	}
	return []int{l.total}, nil
}
func (o *scanOutputGradOp) Run(out *nd.Array, in []*nd.Array) {
	shapes := make([][]int, len(in)-1)
	for i, a := range in[1:] {
		shapes[i] = a.Shape
	}
	l, _ := o.info.layout(shapes)
	zero(out)
	copyInto(view(out, l.offsets[o.k], in[0].Shape), in[0])
}
func (o *scanOutputGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

func zero(a *nd.Array) {
	switch d := a.Data.(type) {
	case []float32:
		clear(d)
	case []float64:
		clear(d)
	default:
		for i, n := 0, a.Size(); i < n; i++ {
			a.SetFlat(i, 0)
		}
	}
}

// gradFunction compiles (once) the step's vector-Jacobian product: inputs
// the placeholders and one gradient per inner output, outputs the
// gradients with respect to the float placeholders.
func (s *scanInfo) gradFunction() (*Function, error) {
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

// gradLayout is where each input's gradient sits in the packed gradient.
func gradLayout(in [][]int) (offsets []int, total int) {
	for _, sh := range in {
		offsets = append(offsets, total)
		total += nd.Prod(sh)
	}
	return offsets, total
}

// scanGradOp is back-propagation through time. Inputs: the scan's inputs,
// its packed output and the packed output gradient. Output: the gradients
// of all the scan's inputs, packed (integer inputs get zeros).
type scanGradOp struct{ info *scanInfo }

func (o *scanGradOp) String() string { return "ScanGrad{" + o.info.name + "}" }
func (o *scanGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return o.info.dtype, 1, nil
}
func (o *scanGradOp) Shape(in [][]int) ([]int, error) {
	if _, err := o.info.gradFunction(); err != nil {
		return nil, err
	}
	_, total := gradLayout(in[:len(in)-2])
	return []int{total}, nil
}
func (o *scanGradOp) Run(out *nd.Array, in []*nd.Array) {
	if err := o.RunErr(out, in); err != nil {
		panic(err)
	}
}

// RunErr runs the backward loop.
func (o *scanGradOp) RunErr(out *nd.Array, in []*nd.Array) error {
	s := o.info
	gf, err := s.gradFunction()
	if err != nil {
		return err
	}
	n := len(in) - 2
	xs, packed, gz := in[:n], in[n], in[n+1]
	shapes := make([][]int, n)
	for i, a := range xs {
		shapes[i] = a.Shape
	}
	l, err := s.layout(shapes)
	if err != nil {
		return err
	}
	goff, _ := gradLayout(shapes)
	s.run.Lock()
	defer s.run.Unlock()
	zero(out)
	// carry: the gradient with respect to the states entering the step
	// being processed, from the step after it.
	if l.carry == nil {
		for k := 0; k < s.nState; k++ {
			l.carry = append(l.carry, nd.New(s.dtype, l.stepShapes[k]...))
			l.gstate = append(l.gstate, nd.New(s.dtype, l.stepShapes[k]...))
		}
	}
	carry, gstate := l.carry, l.gstate
	for _, c := range carry {
		zero(c)
	}
	args := make([]*nd.Array, n+s.nOut)
	copy(args, xs)
	slots := n + s.nOut
	for step := l.T - 1; step >= 0; step-- {
		t := step
		if s.reverse {
			t = l.T - 1 - step
		}
		for i := 0; i < s.nSeq; i++ {
			m := nd.Prod(l.inShapes[i])
			args[i] = l.bwdViews.at(l.T, step, i, slots, xs[i], t*m, l.inShapes[i])
		}
		for k := 0; k < s.nState; k++ {
			if step > 0 {
				m := nd.Prod(l.stepShapes[k])
				args[s.nSeq+k] = l.bwdViews.at(l.T, step, s.nSeq+k, slots, packed, l.offsets[k]+(step-1)*m, l.stepShapes[k])
			} else {
				args[s.nSeq+k] = xs[s.nSeq+k]
			}
		}
		for k := 0; k < s.nOut; k++ {
			m := nd.Prod(l.stepShapes[k])
			if k < s.nState {
				sumAt(gstate[k], gz, l.offsets[k]+step*m, carry[k])
				args[n+k] = gstate[k]
				continue
			}
			args[n+k] = l.bwdViews.at(l.T, step, n+k, slots, gz, l.offsets[k]+step*m, l.stepShapes[k])
		}
		res, err := gf.callNoCopy(args)
		if err != nil {
			return fmt.Errorf("%s gradient, step %d: %w", s.name, step, err)
		}
		for j, r := range res {
			i := s.gradWrt[j]
			switch {
			case i < s.nSeq:
				m := nd.Prod(l.inShapes[i])
				copyAt(out, goff[i]+t*m, r)
			case i < s.nSeq+s.nState:
				copyInto(carry[i-s.nSeq], r)
			default:
				addAt(out, goff[i], r)
			}
		}
	}
	for k := 0; k < s.nState; k++ {
		i := s.nSeq + k
		if xs[i].DType().IsFloat() {
			copyAt(out, goff[i], carry[k])
		}
	}
	return nil
}

func (o *scanGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// scanGradPartOp views the gradient of input k in the packed gradient.
// Inputs: the packed gradient and the scan's inputs.
type scanGradPartOp struct {
	info *scanInfo
	k    int
}

func (o *scanGradPartOp) String() string {
	return fmt.Sprintf("ScanGradPart{%s, %d}", o.info.name, o.k)
}
func (o *scanGradPartOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[1+o.k].dtype, in[1+o.k].ndim, nil
}
func (o *scanGradPartOp) Shape(in [][]int) ([]int, error) { return in[1+o.k], nil }
func (o *scanGradPartOp) IsView(in [][]int, out []int) bool {
	return true
}
func (o *scanGradPartOp) Run(out *nd.Array, in []*nd.Array) {
	shapes := make([][]int, len(in)-1)
	for i, a := range in[1:] {
		shapes[i] = a.Shape
	}
	off, _ := gradLayout(shapes)
	out.Data = nd.SliceData(in[0].Data, off[o.k], off[o.k]+nd.Prod(out.Shape))
}
func (o *scanGradPartOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, len(in))
}

// callNoCopy runs f on args (already of the right dtypes and dimensions)
// and returns its output buffers themselves, valid until the next call:
// a loop's step function, run by its executor as any function is.
func (f *Function) callNoCopy(args []*nd.Array) ([]*nd.Array, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exec.Run(args, false)
}
