package cpu

import (
	"fmt"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"sync"
)

// The loops' kernels (core.Scan): the forward loop runs the step
// function once per step on views of the sequences and of the packed
// output; the backward loop runs the step's vector-Jacobian product from
// the last step. Each node's kernel keeps, per layout, its per-step views
// and the backward loop's state gradients, made on the first call and
// pointed again at each call's buffers: the loops allocate nothing per
// step.

// scanKernel is a loop node's kernel (core.ScanOp, core.ScanGradOp) and
// its scratch per layout.
type scanKernel struct {
	op      core.Op
	mu      sync.Mutex // one run at a time (the views)
	scratch map[*core.ScanLayout]*scanScratch
}

// scanScratch are a layout's per-step views (forward, backward) and the
// backward loop's state gradients.
type scanScratch struct {
	fwdViews, bwdViews viewCache
	carry, gstate      []*nd.Array
}

func newScanKernel(op core.Op) kernel {
	return &scanKernel{op: op, scratch: map[*core.ScanLayout]*scanScratch{}}
}

func (k *scanKernel) String() string { return k.op.String() }

// Run is RunErr, for a caller that cannot take an error (the executor
// calls RunErr).
func (k *scanKernel) Run(out *nd.Array, in []*nd.Array) {
	if err := k.RunErr(out, in); err != nil {
		panic(err)
	}
}

// RunErr runs the loop or its gradient, reporting the step's errors.
func (k *scanKernel) RunErr(out *nd.Array, in []*nd.Array) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch o := k.op.(type) {
	case *core.ScanOp:
		o.Loop().Lock()
		defer o.Loop().Unlock()
		return k.scanForward(o.Loop(), out, in)
	case *core.ScanGradOp:
		o.Loop().Lock()
		defer o.Loop().Unlock()
		return k.scanBackward(o.Loop(), out, in)
	}
	return fmt.Errorf("%s is not a loop", k.op)
}

// scratchOf is layout l's scratch.
func (k *scanKernel) scratchOf(l *core.ScanLayout) *scanScratch {
	sc, ok := k.scratch[l]
	if !ok {
		sc = &scanScratch{}
		k.scratch[l] = sc
	}
	return sc
}

// scanForward runs the loop, reporting the step's errors.
func (k *scanKernel) scanForward(s *core.ScanLoop, out *nd.Array, in []*nd.Array) error {
	nSeq, nState, _ := s.Counts()
	shapes := make([][]int, len(in))
	for i, a := range in {
		shapes[i] = a.Shape
	}
	l, err := s.Layout(shapes)
	if err != nil {
		return err
	}
	sc := k.scratchOf(l)
	args := make([]*nd.Array, len(in))
	copy(args, in)
	for step := 0; step < l.T; step++ {
		t := step
		if s.Reverse() {
			t = l.T - 1 - step
		}
		for i := 0; i < nSeq; i++ {
			n := nd.Prod(l.InShapes[i])
			args[i] = sc.fwdViews.at(l.T, step, i, len(in), in[i], t*n, l.InShapes[i])
		}
		if step > 0 {
			for k := 0; k < nState; k++ {
				n := nd.Prod(l.StepShapes[k])
				args[nSeq+k] = sc.fwdViews.at(l.T, step, nSeq+k, len(in), out, l.Offsets[k]+(step-1)*n, l.StepShapes[k])
			}
		}
		res, err := s.Step().RunNoCopy(args)
		if err != nil {
			return fmt.Errorf("%s, step %d: %w", s.Name(), step, err)
		}
		for k, r := range res {
			n := nd.Prod(l.StepShapes[k])
			copyAt(out, l.Offsets[k]+step*n, r)
		}
	}
	return nil
}

// scanOutput is core.ScanOutputOp's kernel: a view of one stacked output in the packed buffer.
func scanOutput(op core.Op, out *nd.Array, in []*nd.Array) {
	loop, k := op.(*core.ScanOutputOp).Output()
	shapes := make([][]int, len(in)-1)
	for i, a := range in[1:] {
		shapes[i] = a.Shape
	}
	l, _ := loop.Layout(shapes)
	out.Data = nd.SliceData(in[0].Data, l.Offsets[k], l.Offsets[k]+nd.Prod(out.Shape))
}

// scanOutputGrad is core.ScanOutputGradOp's kernel: one output's gradient placed in zeros shaped like the packed buffer.
func scanOutputGrad(op core.Op, out *nd.Array, in []*nd.Array) {
	loop, k := op.(*core.ScanOutputGradOp).Output()
	shapes := make([][]int, len(in)-1)
	for i, a := range in[1:] {
		shapes[i] = a.Shape
	}
	l, _ := loop.Layout(shapes)
	zero(out)
	copyInto(part(out, l.Offsets[k], in[0].Shape), in[0])
}

// scanBackward runs the backward loop.
func (k *scanKernel) scanBackward(s *core.ScanLoop, out *nd.Array, in []*nd.Array) error {
	nSeq, nState, nOut := s.Counts()
	gf, gradWrt, err := s.GradStep()
	if err != nil {
		return err
	}
	n := len(in) - 2
	xs, packed, gz := in[:n], in[n], in[n+1]
	shapes := make([][]int, n)
	for i, a := range xs {
		shapes[i] = a.Shape
	}
	l, err := s.Layout(shapes)
	if err != nil {
		return err
	}
	goff, _ := core.ScanGradLayout(shapes)
	sc := k.scratchOf(l)
	zero(out)
	// carry: the gradient with respect to the states entering the step
	// being processed, from the step after it.
	if sc.carry == nil {
		for k := 0; k < nState; k++ {
			sc.carry = append(sc.carry, nd.New(s.DType(), l.StepShapes[k]...))
			sc.gstate = append(sc.gstate, nd.New(s.DType(), l.StepShapes[k]...))
		}
	}
	carry, gstate := sc.carry, sc.gstate
	for _, c := range carry {
		zero(c)
	}
	args := make([]*nd.Array, n+nOut)
	copy(args, xs)
	slots := n + nOut
	for step := l.T - 1; step >= 0; step-- {
		t := step
		if s.Reverse() {
			t = l.T - 1 - step
		}
		for i := 0; i < nSeq; i++ {
			m := nd.Prod(l.InShapes[i])
			args[i] = sc.bwdViews.at(l.T, step, i, slots, xs[i], t*m, l.InShapes[i])
		}
		for k := 0; k < nState; k++ {
			if step > 0 {
				m := nd.Prod(l.StepShapes[k])
				args[nSeq+k] = sc.bwdViews.at(l.T, step, nSeq+k, slots, packed, l.Offsets[k]+(step-1)*m, l.StepShapes[k])
			} else {
				args[nSeq+k] = xs[nSeq+k]
			}
		}
		for k := 0; k < nOut; k++ {
			m := nd.Prod(l.StepShapes[k])
			if k < nState {
				sumAt(gstate[k], gz, l.Offsets[k]+step*m, carry[k])
				args[n+k] = gstate[k]
				continue
			}
			args[n+k] = sc.bwdViews.at(l.T, step, n+k, slots, gz, l.Offsets[k]+step*m, l.StepShapes[k])
		}
		res, err := gf.RunNoCopy(args)
		if err != nil {
			return fmt.Errorf("%s gradient, step %d: %w", s.Name(), step, err)
		}
		for j, r := range res {
			i := gradWrt[j]
			switch {
			case i < nSeq:
				m := nd.Prod(l.InShapes[i])
				copyAt(out, goff[i]+t*m, r)
			case i < nSeq+nState:
				copyInto(carry[i-nSeq], r)
			default:
				addAt(out, goff[i], r)
			}
		}
	}
	for k := 0; k < nState; k++ {
		i := nSeq + k
		if xs[i].DType().IsFloat() {
			copyAt(out, goff[i], carry[k])
		}
	}
	return nil
}

// scanGradPart is core.ScanGradPartOp's kernel: a view of one input's gradient in the packed gradient.
func scanGradPart(op core.Op, out *nd.Array, in []*nd.Array) {
	k := op.(*core.ScanGradPartOp).Part()
	shapes := make([][]int, len(in)-1)
	for i, a := range in[1:] {
		shapes[i] = a.Shape
	}
	off, _ := core.ScanGradLayout(shapes)
	out.Data = nd.SliceData(in[0].Data, off[k], off[k]+nd.Prod(out.Shape))
}

// viewCache holds one array per (step, slot) of a loop, made on first use
// and pointed again at the call's buffers each time (setView: no
// allocation while the buffers stay the same, as the executor's do).
type viewCache [][]*nd.Array

// at is the view of src at off with the given shape, for slot of step.
func (c *viewCache) at(steps, step, slot, slots int, src *nd.Array, off int, shape []int) *nd.Array {
	if len(*c) != steps {
		*c = make(viewCache, steps)
	}
	row := (*c)[step]
	if len(row) != slots {
		row = make([]*nd.Array, slots)
		(*c)[step] = row
	}
	a := row[slot]
	if a == nil {
		a = &nd.Array{Shape: shape}
		row[slot] = a
	}
	setView(a, src.Data, off, off+nd.Prod(shape))
	return a
}

// copyAt copies src into dst's data from element off.
func copyAt(dst *nd.Array, off int, src *nd.Array) {
	switch d := dst.Data.(type) {
	case []float32:
		if s, ok := src.Data.([]float32); ok {
			copy(d[off:off+len(s)], s)
			return
		}
	case []float64:
		if s, ok := src.Data.([]float64); ok {
			copy(d[off:off+len(s)], s)
			return
		}
	}
	copyInto(part(dst, off, src.Shape), src)
}

// addAt adds src into dst's data from element off.
func addAt(dst *nd.Array, off int, src *nd.Array) {
	switch d := dst.Data.(type) {
	case []float32:
		if s, ok := src.Data.([]float32); ok {
			d = d[off : off+len(s)]
			for i, v := range s {
				d[i] += v
			}
			return
		}
	case []float64:
		if s, ok := src.Data.([]float64); ok {
			d = d[off : off+len(s)]
			for i, v := range s {
				d[i] += v
			}
			return
		}
	}
	addInto(part(dst, off, src.Shape), src)
}

// sumAt sets dst = g[off:off+size] + c (the state gradient of a step: its
// output gradient plus the carry from the step after it), in that order.
func sumAt(dst, g *nd.Array, off int, c *nd.Array) {
	switch d := dst.Data.(type) {
	case []float32:
		gs, ok1 := g.Data.([]float32)
		cs, ok2 := c.Data.([]float32)
		if ok1 && ok2 {
			gs = gs[off : off+len(d)]
			for i := range d {
				d[i] = gs[i] + cs[i]
			}
			return
		}
	case []float64:
		gs, ok1 := g.Data.([]float64)
		cs, ok2 := c.Data.([]float64)
		if ok1 && ok2 {
			gs = gs[off : off+len(d)]
			for i := range d {
				d[i] = gs[i] + cs[i]
			}
			return
		}
	}
	copyInto(dst, part(g, off, dst.Shape))
	addInto(dst, c)
}
