package cpu

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// Executor runs one graph: planned once per input-shape signature, the
// plans cached. Not safe for concurrent use (core.Function serialises its
// calls).
type Executor struct {
	g      core.Lowered
	inputs []int // input nodes
	stored []int // stored nodes
	shared []int // stored nodes whose shape is part of the signature
	plans  map[string]*plan
	outs   []*nd.Array // Run's result without copies, reused
	// biasRelu and scaledSub are the kernels of the graph's fused ops
	// (core.Lowered's BiasRelu and ScaledSub; nil: no such fusion).
	biasRelu, scaledSub kernel
	key                 []byte
}

type step struct {
	node  int
	op    kernel
	in    []int
	view  bool
	check core.Checker
	// into, when ≥ 0, is the shared variable's node whose storage the
	// step writes its result into (an update made in place, fusion.go);
	// beforeWrite is that update's Update.BeforeWrite.
	into        int
	beforeWrite func()
	// elem and identity are the node's Elem and Identity while the step
	// still runs the node's own op; scaledSub marks a step fused into
	// core.Lowered.ScaledSub (fusion.go).
	elem      string
	identity  bool
	scaledSub bool
}

type plan struct {
	vals    []*nd.Array // one per node; inputs/stored bound at call time
	steps   []step
	inCast  []*nd.Array // conversion buffers for inputs given in another dtype
	staging []*nd.Array // per update, when its value aliases updated storage
	args    []*nd.Array // scratch for op inputs
}

// New returns an executor of g.
func New(g core.Lowered) *Executor {
	e := &Executor{g: g, plans: map[string]*plan{}}
	if g.BiasRelu != nil {
		e.biasRelu, _ = kernelOf(g.BiasRelu)
	}
	if g.ScaledSub != nil {
		e.scaledSub, _ = kernelOf(g.ScaledSub)
	}
	for i, n := range g.Nodes {
		switch n.Kind {
		case core.NodeInput:
			e.inputs = append(e.inputs, i)
		case core.NodeStored:
			e.stored = append(e.stored, i)
			if n.Shared {
				e.shared = append(e.shared, i)
			}
		}
	}
	return e
}

// Plans is how many input-shape signatures the executor has planned.
func (e *Executor) Plans() int { return len(e.plans) }

// Run computes the graph's outputs for args (their number, dtypes and
// dimensions already checked) and stores its updates. With copyOutputs
// the outputs are fresh arrays holding the values from before the
// updates; without, the executor's own, valid until the next Run.
func (e *Executor) Run(args []*nd.Array, copyOutputs bool) ([]*nd.Array, error) {
	p, err := e.plan(args)
	if err != nil {
		return nil, err
	}
	e.bind(p, args)
	if err := e.runSteps(p); err != nil {
		return nil, err
	}
	outs := e.outs[:0]
	if copyOutputs {
		outs = make([]*nd.Array, 0, len(e.g.Outputs))
	}
	for _, o := range e.g.Outputs {
		v := p.vals[o]
		if copyOutputs {
			v = v.Copy()
		}
		outs = append(outs, v)
	}
	if !copyOutputs {
		e.outs = outs
	}
	// Updates: stage the values that alias updated storage, then store.
	for k, u := range e.g.Updates {
		if p.staging[k] != nil {
			kernels.CopyInto(p.staging[k], p.vals[u.Value])
		}
	}
	for k, u := range e.g.Updates {
		src := p.vals[u.Value]
		if p.staging[k] != nil {
			src = p.staging[k]
		}
		dst := u.Target()
		if !nd.SameShape(dst.Shape, src.Shape) {
			return outs, fmt.Errorf("update of %s: value has shape %s, the variable %s", u.Name, nd.ShapeString(src.Shape), nd.ShapeString(dst.Shape))
		}
		if dst.Data != nil && sameData(dst, src) {
			continue
		}
		if u.BeforeWrite != nil {
			u.BeforeWrite()
		}
		kernels.CopyInto(dst, src)
	}
	return outs, nil
}

// runSteps runs the plan's steps: the one loop every function, a loop's
// step function included, runs.
func (e *Executor) runSteps(p *plan) (err error) {
	cur := -1
	defer func() {
		if r := recover(); r != nil {
			recoverDType(&e.g, r, cur, &err)
		}
	}()
	for _, s := range p.steps {
		cur = s.node
		out := p.vals[s.node]
		ins := p.args[:len(s.in)]
		for k, j := range s.in {
			ins[k] = p.vals[j]
		}
		if s.check != nil {
			if err := s.check.Check(ins); err != nil {
				return e.g.NodeError(s.node, err)
			}
		}
		if s.into >= 0 {
			if s.beforeWrite != nil {
				s.beforeWrite()
			}
			out.Data = p.vals[s.into].Data
		}
		if r, ok := s.op.(core.ErrRunner); ok { // loops (core/scan.go)
			if err := r.RunErr(out, ins); err != nil {
				return e.g.NodeError(s.node, err)
			}
			continue
		}
		s.op.Run(out, ins)
	}
	return nil
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

// plan returns the cached plan for the arguments' shapes, making it on a
// miss.
func (e *Executor) plan(args []*nd.Array) (*plan, error) {
	key := e.key[:0]
	for _, a := range args {
		key = append(key, byte(a.DType()))
		for _, d := range a.Shape {
			key = appendInt(key, d)
		}
		key = append(key, ';')
	}
	for _, i := range e.shared {
		for _, d := range e.g.Nodes[i].Shape() {
			key = appendInt(key, d)
		}
		key = append(key, ';')
	}
	e.key = key
	if p, ok := e.plans[string(key)]; ok {
		return p, nil
	}
	p, err := e.makePlan(args)
	if err != nil {
		return nil, err
	}
	e.plans[string(key)] = p
	return p, nil
}

// appendInt appends all 64 bits of d: shapes that differ only above bit
// 31 must not share a plan (its buffers are sized for one of them).
func appendInt(b []byte, d int) []byte {
	u := uint64(d)
	return append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56), ',')
}

func (e *Executor) makePlan(args []*nd.Array) (*plan, error) {
	shapes, err := e.g.InferShapes(args)
	if err != nil {
		return nil, err
	}
	nodes := e.g.Nodes
	n := len(nodes)
	p := &plan{vals: make([]*nd.Array, n), inCast: make([]*nd.Array, len(args)), staging: make([]*nd.Array, len(e.g.Updates))}
	root := make([]int, n) // the node whose storage a view shares
	maxIn := 0
	for i, v := range nodes {
		root[i] = i
		switch v.Kind {
		case core.NodeInput:
			if a := args[v.Arg]; a.DType() != v.DType {
				p.inCast[v.Arg] = nd.New(v.DType, a.Shape...)
			}
		case core.NodeComputed:
			inShapes := make([][]int, len(v.Inputs))
			for k, j := range v.Inputs {
				inShapes[k] = shapes[j]
			}
			s := shapes[i]
			k, err := kernelOf(v.Op)
			if err != nil {
				return nil, e.g.NodeError(i, err)
			}
			st := step{node: i, op: k, in: slices.Clone(v.Inputs), into: -1, elem: v.Elem, identity: v.Identity}
			if vo, ok := v.Op.(core.ViewOp); ok && vo.IsView(inShapes, s) {
				st.view = true
				root[i] = root[v.Inputs[0]]
				p.vals[i] = &nd.Array{Shape: s}
			} else {
				p.vals[i] = nd.New(v.DType, s...)
			}
			if c, ok := v.Op.(core.Checker); ok {
				st.check = c
			}
			p.steps = append(p.steps, st)
			maxIn = max(maxIn, len(v.Inputs))
		}
	}
	p.args = make([]*nd.Array, max(maxIn, 3)) // 3: the fused ops' most inputs
	e.fusePlan(p, shapes, root)
	updated := map[int]bool{}
	for _, u := range e.g.Updates {
		if u.Shared >= 0 {
			updated[u.Shared] = true
		}
	}
	for k, u := range e.g.Updates {
		j := u.Value
		r := root[j]
		if updated[r] && r != u.Shared || nodes[r].Kind == core.NodeInput {
			p.staging[k] = nd.New(u.DType, shapes[j]...)
		}
	}
	return p, nil
}

// Program lists the steps Run runs for the arguments' shapes, one
// "node = op(inputs) shape" line each in execution order (views and
// updates written in place marked). It plans the graph for these shapes.
func (e *Executor) Program(args []*nd.Array) ([]string, error) {
	p, err := e.plan(args)
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
// buffers where their dtype differs) and at the stored values.
func (e *Executor) bind(p *plan, args []*nd.Array) {
	for _, i := range e.inputs {
		k := e.g.Nodes[i].Arg
		a := args[k]
		if buf := p.inCast[k]; buf != nil {
			kernels.Cast(buf, a)
			a = buf
		}
		p.vals[i] = a
	}
	for _, i := range e.stored {
		p.vals[i] = e.g.Nodes[i].Value()
	}
}
