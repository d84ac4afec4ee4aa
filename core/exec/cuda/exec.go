//go:build cuda

package cuda

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/nd"
)

// devBuf is a device buffer: its pointer and size in bytes.
type devBuf struct {
	ptr   cu.DevicePtr
	bytes int64
}

func (g *gpu) alloc(bytes int64) (devBuf, error) {
	if bytes == 0 {
		return devBuf{}, nil
	}
	p, err := cu.MemAlloc(bytes)
	if err != nil {
		return devBuf{}, fmt.Errorf("cuda: allocating %d bytes: %w", bytes, err)
	}
	return devBuf{p, bytes}, nil
}

// hostBytes is a's data as bytes (the storage the device copies).
func hostBytes(a *nd.Array) (unsafe.Pointer, int64) {
	n := int64(a.Size()) * int64(a.DType().Size())
	if n == 0 {
		return nil, 0
	}
	switch d := a.Data.(type) {
	case []float32:
		return unsafe.Pointer(&d[0]), n
	case []float64:
		return unsafe.Pointer(&d[0]), n
	case []int64:
		return unsafe.Pointer(&d[0]), n
	case []int32:
		return unsafe.Pointer(&d[0]), n
	case []uint8:
		return unsafe.Pointer(&d[0]), n
	case []bool:
		return unsafe.Pointer(&d[0]), n
	}
	return nil, 0
}

func (g *gpu) upload(dst devBuf, a *nd.Array) error {
	p, n := hostBytes(a)
	if n == 0 {
		return nil
	}
	if p == nil || n > dst.bytes {
		return fmt.Errorf("cuda: cannot copy a %s array of shape %v to the device", a.DType(), a.Shape)
	}
	return cu.MemcpyHtoDAsync(dst.ptr, p, n, g.stream)
}

func (g *gpu) download(a *nd.Array, src devBuf) error {
	p, n := hostBytes(a)
	if n == 0 {
		return nil
	}
	if p == nil || n > src.bytes {
		return fmt.Errorf("cuda: cannot copy a %s array of shape %v from the device", a.DType(), a.Shape)
	}
	if err := cu.MemcpyDtoHAsync(p, src.ptr, n, g.stream); err != nil {
		return err
	}
	return g.stream.Synchronize()
}

// devValue is the device copy of a shared variable (gpu.shared keeps
// them, by slot). It is the variable's read guard (attached:
// core.Variable.SetReadGuard) while the variable's host array may be
// older (dirty) or equal to it; a host read (BeforeRead) or SetValue
// (Dropped) detaches it, and the next run uploads the host's value.
type devValue struct {
	g        *gpu
	buf      devBuf
	shape    []int
	dirty    bool
	attached bool
}

// attach makes d slot's read guard: the device holds its current value.
func (d *devValue) attach(slot core.DeviceSlot) {
	d.attached = true
	slot.SetReadGuard(d)
}

// Dropped detaches d: the variable's value is no longer d's (SetValue,
// or another GPU's copy took it).
func (d *devValue) Dropped() { d.attached = false }

// BeforeRead detaches d and copies the device's value into host when it
// is newer.
func (d *devValue) BeforeRead(host *nd.Array) {
	d.attached = false
	if !d.dirty {
		return
	}
	d.dirty = false
	if d.g.running {
		// Read by an op run on the CPU during a run (a loop's step
		// function): this goroutine holds the GPU, on its locked thread.
		_ = d.g.download(host, d.buf)
		return
	}
	d.g.mu.Lock()
	defer d.g.mu.Unlock()
	// The variable's value is what the host reads next: an error here
	// (the device lost) cannot be returned through Value; it leaves the
	// host array as it was and is reported by the next run.
	_ = d.g.do(func() error { return d.g.download(host, d.buf) })
}

// step is one op of a plan.
type step struct {
	node     int
	in       []int
	what     string       // the kernel, or "on the CPU"
	run      func() error // device kernel launch(es)
	fallback bool
	op       core.Op
}

// plan is one input-shape signature's buffers and steps.
type plan struct {
	shapes [][]int
	bufs   []devBuf // per node (views share their input's)
	owned  []bool
	steps  []step
	metas  []devBuf
	host   []*nd.Array // per node: host scratch (fallbacks, outputs, inputs)
	args   []*nd.Array // during a run: the inputs as uploaded
}

// executor runs a function's lowered graph (core.Function.LowerForDevice,
// the view the CPU backend consumes too, with the shared variables'
// slots). Each op's kernel is looked up once, here: opKernels by the kind
// core.Spec gives it, else the declared CPU route (route.go).
type executor struct {
	g       *gpu
	lw      core.DeviceLowered
	specs   []core.OpSpec // per node: the op's description
	kernels []opKernel    // per node: its kernel, nil for the CPU route
	cpuWhy  []string      // per node without a kernel: why it runs on the CPU
	plans   map[string]*plan
	outs    []*nd.Array
}

func newExecutor(g *gpu, f *core.Function) *executor {
	lw := f.LowerForDevice()
	n := len(lw.Nodes)
	e := &executor{g: g, lw: lw, specs: make([]core.OpSpec, n), kernels: make([]opKernel, n), cpuWhy: make([]string, n), plans: map[string]*plan{}}
	for i, v := range lw.Nodes {
		if v.Kind != core.NodeComputed {
			continue
		}
		e.specs[i] = core.Spec(v.Op)
		e.kernels[i], e.cpuWhy[i] = kernelFor(e.specs[i].Kind, v.Op)
	}
	return e
}

// key is the input-shape signature.
func (e *executor) key(args []*nd.Array) string {
	var b strings.Builder
	for _, a := range args {
		fmt.Fprint(&b, a.DType(), a.Shape, ";")
	}
	for i, s := range e.lw.Slots {
		if s != nil {
			fmt.Fprint(&b, e.sharedShape(i), ";")
		}
	}
	return b.String()
}

// sharedShape is shared node i's shape, read without bringing its value
// back from the device.
func (e *executor) sharedShape(i int) []int {
	if d := e.g.shared[e.lw.Slots[i]]; d != nil && d.attached {
		return d.shape
	}
	return e.lw.Nodes[i].Shape()
}

// Program lists the steps for args' shapes: the kernel of each op, or
// "on the CPU" for an op the backend runs on host copies.
func (e *executor) Program(args []*nd.Array) ([]string, error) {
	e.g.mu.Lock()
	defer e.g.mu.Unlock()
	e.g.running = true
	defer func() { e.g.running = false }()
	var lines []string
	err := e.g.do(func() error {
		p, err := e.plan(args)
		if err != nil {
			return err
		}
		for _, s := range p.steps {
			var ins []string
			for _, j := range s.in {
				ins = append(ins, fmt.Sprintf("%%%d", j))
			}
			lines = append(lines, fmt.Sprintf("%%%d = %s(%s) %v [%s]", s.node, s.op, strings.Join(ins, ", "), p.shapes[s.node], s.what))
		}
		return nil
	})
	return lines, err
}

func (e *executor) plan(args []*nd.Array) (*plan, error) {
	k := e.key(args)
	if p, ok := e.plans[k]; ok {
		return p, nil
	}
	p, err := e.makePlan(args)
	if err != nil {
		return nil, err
	}
	e.plans[k] = p
	return p, nil
}

func (e *executor) makePlan(args []*nd.Array) (*plan, error) {
	nodes := e.lw.Nodes
	n := len(nodes)
	p := &plan{bufs: make([]devBuf, n), owned: make([]bool, n), host: make([]*nd.Array, n)}
	// The graph's shape inference, which also refuses values too large
	// for the function's memory limit. A shared variable's host array
	// keeps the shape of its device copy (SetValue, which may change it,
	// detaches the copy).
	shapes, err := e.lw.InferShapes(args)
	if err != nil {
		return nil, err
	}
	p.shapes = shapes
	for i, v := range nodes {
		switch {
		case e.lw.Slots[i] != nil:
			continue // the backend's copy (sharedBuf), bound at run time
		case v.Kind == core.NodeComputed:
			if isView(v.Op, e.specs[i].Kind, e.inShapes(p, i), p.shapes[i]) {
				continue // shares its input's buffer (makeStep)
			}
		}
		b, err := e.g.alloc(int64(nd.Prod(p.shapes[i])) * int64(v.DType.Size()))
		if err != nil {
			return nil, err
		}
		p.bufs[i], p.owned[i] = b, true
		if v.Kind == core.NodeStored {
			if err := e.g.upload(b, v.Value()); err != nil {
				return nil, err
			}
		}
	}
	for i, v := range nodes {
		if v.Kind != core.NodeComputed {
			continue
		}
		st, err := e.makeStep(p, i)
		if err != nil {
			return nil, e.lw.NodeError(i, err)
		}
		p.steps = append(p.steps, st)
	}
	return p, nil
}

// inShapes are node i's inputs' shapes in plan p.
func (e *executor) inShapes(p *plan, i int) [][]int {
	ins := e.lw.Nodes[i].Inputs
	s := make([][]int, len(ins))
	for k, j := range ins {
		s[k] = p.shapes[j]
	}
	return s
}

func (e *executor) sharedBuf(v core.DeviceSlot) (*devValue, error) {
	d := e.g.shared[v]
	host := v.Value() // detaches any device copy: the host is current now
	if d == nil || !slices.Equal(d.shape, host.Shape) {
		bytes := int64(host.Size()) * int64(host.DType().Size())
		b, err := e.g.alloc(bytes)
		if err != nil {
			return nil, err
		}
		if d != nil && d.buf.bytes > 0 {
			_ = cu.MemFree(d.buf.ptr)
		}
		d = &devValue{g: e.g, buf: b, shape: slices.Clone(host.Shape)}
		e.g.shared[v] = d
	}
	if err := e.g.upload(d.buf, host); err != nil {
		return nil, err
	}
	d.dirty = false
	d.attach(v)
	return d, nil
}

// isView reports whether the op (of the kind core.Spec gives it) has as
// output its first input's data under another shape, so that it shares
// the input's device buffer.
func isView(op core.Op, kind string, in [][]int, out []int) bool {
	switch kind {
	case "view", "rows", "view_at":
		return true
	case "dimshuffle", "sum_to":
		vw, ok := op.(core.ViewOp)
		return ok && vw.IsView(in, out)
	}
	return false
}

// Run computes the outputs and stores the updates on the device.
func (e *executor) Run(args []*nd.Array, copyOutputs bool) ([]*nd.Array, error) {
	e.g.mu.Lock()
	defer e.g.mu.Unlock()
	e.g.running = true
	defer func() { e.g.running = false }()
	var outs []*nd.Array
	err := e.g.do(func() error {
		p, err := e.plan(args)
		if err != nil {
			return err
		}
		// Shared variables: the device copy, uploaded when the host's is
		// current (a first run, or a Value since).
		for i, v := range e.lw.Slots {
			if v == nil {
				continue
			}
			d := e.g.shared[v]
			if d == nil || !d.attached {
				if d, err = e.sharedBuf(v); err != nil {
					return err
				}
			}
			p.bufs[i] = d.buf
		}
		if len(p.args) != len(args) {
			p.args = make([]*nd.Array, len(args))
		}
		for i, v := range e.lw.Nodes {
			if v.Kind == core.NodeInput {
				k := v.Arg
				a := args[k]
				if a.DType() != v.DType {
					a = a.Astype(v.DType)
				}
				if err := e.g.upload(p.bufs[i], a); err != nil {
					return err
				}
				p.args[k] = a // the host copy of the batch (hostValue)
			}
		}
		defer clear(p.args) // the caller's arrays are not kept
		for _, s := range p.steps {
			var err error
			if s.fallback {
				err = e.runOnCPU(p, s)
			} else {
				err = s.run()
			}
			if err != nil {
				return e.lw.NodeError(s.node, fmt.Errorf("[%s]: %w", s.what, err))
			}
		}
		// Outputs come down before the updates are stored (Call returns
		// the values from before them).
		outs = outs[:0]
		for _, i := range e.lw.Outputs {
			h := nd.New(e.lw.Nodes[i].DType, p.shapes[i]...)
			if err := e.g.download(h, p.bufs[i]); err != nil {
				return err
			}
			outs = append(outs, h)
		}
		return e.storeUpdates(p)
	})
	if err != nil {
		return nil, err
	}
	if !copyOutputs {
		e.outs = outs
	}
	return outs, nil
}

// storeUpdates copies each update's value into its shared variable's
// device copy, staging values that alias updated storage first.
func (e *executor) storeUpdates(p *plan) error {
	type pending struct {
		d   *devValue
		src devBuf
	}
	var todo []pending
	for k, u := range e.lw.Updates {
		v := e.lw.UpdateSlots[k]
		d := e.g.shared[v]
		if d == nil {
			var err error
			if d, err = e.sharedBuf(v); err != nil {
				return err
			}
		}
		src := p.bufs[u.Value]
		if src.bytes != d.buf.bytes {
			return fmt.Errorf("update of %s: value of %d bytes, the variable %d", v, src.bytes, d.buf.bytes)
		}
		if src.ptr == d.buf.ptr {
			continue
		}
		// A value that is some shared variable's storage is copied aside
		// first, so every update sees the values from before the call.
		for _, o := range e.g.shared {
			if o.buf.ptr == src.ptr && o.buf.bytes > 0 {
				tmp, err := e.g.alloc(src.bytes)
				if err != nil {
					return err
				}
				defer cu.MemFree(tmp.ptr)
				if err := cu.MemcpyDtoDAsync(tmp.ptr, src.ptr, src.bytes, e.g.stream); err != nil {
					return err
				}
				src = tmp
				break
			}
		}
		todo = append(todo, pending{d, src})
	}
	for _, t := range todo {
		if t.src.bytes > 0 {
			if err := cu.MemcpyDtoDAsync(t.d.buf.ptr, t.src.ptr, t.src.bytes, e.g.stream); err != nil {
				return err
			}
		}
	}
	for _, v := range e.lw.UpdateSlots {
		d := e.g.shared[v]
		d.dirty = true
		d.attach(v)
	}
	return e.g.stream.Synchronize()
}

// runOnCPU runs an op the backend has no kernel for: its inputs come
// down, its CPU kernel runs, its output goes up.
func (e *executor) runOnCPU(p *plan, s step) error {
	v := e.lw.Nodes[s.node]
	ins := make([]*nd.Array, len(s.in))
	for k, j := range s.in {
		h := p.host[j]
		if h == nil || !slices.Equal(h.Shape, p.shapes[j]) {
			h = nd.New(e.lw.Nodes[j].DType, p.shapes[j]...)
			p.host[j] = h
		}
		if err := e.g.download(h, p.bufs[j]); err != nil {
			return err
		}
		ins[k] = h
	}
	if c, ok := s.op.(core.Checker); ok {
		if err := c.Check(ins); err != nil {
			return err
		}
	}
	out := nd.New(v.DType, p.shapes[s.node]...)
	if err := cpu.RunOp(s.op, out, ins); err != nil {
		return err
	}
	return e.g.upload(p.bufs[s.node], out)
}
