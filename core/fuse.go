package core

import (
	"fmt"
	"math"
	"os"

	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// Fusions made when a function is planned (fusePlan), and the ops they
// use. Each fused op computes bit for bit what the ops it replaces
// computed (same float operations in the same order, every intermediate
// rounded to the dtype), so fusion never changes a result:
//
//   - relu(x + b), b a row vector broadcast over the rows of x (a Linear
//     brick's bias followed by a Rectifier): one pass, biasReluOp;
//   - p − s·g with s a scalar (SGD's Scale step and its update): one pass,
//     scaledSubOp, written straight into the parameter when the update
//     allows it (nothing later reads the old value);
//
// and, built by the gradient itself, the ReLU backward: reluGradOp, a
// branch-free mask of the incoming gradient by the ReLU's output.
//
// The fused kernels split large tensors across the workers with a fixed
// partition (parallel.go).

// biasReluOp is relu(x + b) for x of shape (..., n) and b of shape (n,),
// (1, n) or x's.
type biasReluOp struct{}

func (biasReluOp) String() string { return "BiasRelu" }
func (biasReluOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (biasReluOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (biasReluOp) Run(out *nd.Array, in []*nd.Array) {
	n := 1
	if len(out.Shape) > 0 {
		n = out.Shape[len(out.Shape)-1]
	}
	if len(in[1].Shape) > 0 && nd.SameShape(in[1].Shape, out.Shape) {
		n = out.Size() // b as large as x: one "row"
	}
	switch o := out.Data.(type) {
	case []float32:
		runRows(&rowKernel[float32]{kind: rkBiasRelu, out: o, a: in[0].Data.([]float32), b: in[1].Data.([]float32)}, out.Size(), n)
	case []float64:
		runRows(&rowKernel[float64]{kind: rkBiasRelu, out: o, a: in[0].Data.([]float64), b: in[1].Data.([]float64)}, out.Size(), n)
	}
}
func (biasReluOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	g := apply(reluGradOp{}, out, gz)
	return []*Variable{g, sumTo(g, in[1])}
}

// reluGradOp is the ReLU's backward: gz where the ReLU's output y is
// positive, else 0 (Theano's switch(x > 0, gz, 0): y > 0 exactly when
// x > 0, NaN included), without branches.
type reluGradOp struct{}

func (reluGradOp) String() string { return "ReluGrad" }
func (reluGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[1].dtype, in[1].ndim, nil
}
func (reluGradOp) Shape(in [][]int) ([]int, error) {
	if !nd.SameShape(in[0], in[1]) {
		return nil, fmt.Errorf("relu grad: output %s and gradient %s differ", nd.ShapeString(in[0]), nd.ShapeString(in[1]))
	}
	return in[0], nil
}
func (reluGradOp) Run(out *nd.Array, in []*nd.Array) {
	switch o := out.Data.(type) {
	case []float32:
		runRows(&rowKernel[float32]{kind: rkReluGrad, out: o, a: in[0].Data.([]float32), b: in[1].Data.([]float32)}, out.Size(), out.Size())
	case []float64:
		runRows(&rowKernel[float64]{kind: rkReluGrad, out: o, a: in[0].Data.([]float64), b: in[1].Data.([]float64)}, out.Size(), out.Size())
	}
}
func (reluGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return []*Variable{nil, apply(reluGradOp{}, in[0], gz)}
}

// scaledSubOp is p − s·g for a 0-d s (p, g the same shape): Theano's
// sub(p, mul(s, g)) with the product rounded to the dtype first.
type scaledSubOp struct{}

func (scaledSubOp) String() string { return "ScaledSub" }
func (scaledSubOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (scaledSubOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (scaledSubOp) Run(out *nd.Array, in []*nd.Array) {
	switch o := out.Data.(type) {
	case []float32:
		runRows(&rowKernel[float32]{kind: rkScaledSub, out: o, a: in[0].Data.([]float32), s: in[1].F32()[0], b: in[2].Data.([]float32)}, out.Size(), out.Size())
	case []float64:
		runRows(&rowKernel[float64]{kind: rkScaledSub, out: o, a: in[0].Data.([]float64), s: in[1].F64()[0], b: in[2].Data.([]float64)}, out.Size(), out.Size())
	}
}
func (scaledSubOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	return make([]*Variable, 3)
}

// The fused kernels.
type rowKind int

const (
	rkBiasRelu  rowKind = iota // out = relu(a + b[j mod n])
	rkReluGrad                 // out = b where a > 0, else 0
	rkScaledSub                // out = a − s·b
)

// rowKernel is one fused kernel over size elements, rows of n elements
// (parts are whole rows, so a broadcast b lines up).
type rowKernel[T float] struct {
	kind    rowKind
	out     []T
	a, b    []T
	s       T
	size, n int
}

func (k *rowKernel[T]) runPart(i, parts int) {
	rows := k.size / k.n
	lo, hi := partRange(rows, 1, i, parts)
	k.span(lo*k.n, hi*k.n)
}

// span computes out[lo:hi].
func (k *rowKernel[T]) span(lo, hi int) {
	out, a := k.out[lo:hi], k.a[lo:hi]
	if o, ok := any(out).([]float32); ok { // vectorized (internal/vec)
		a, b := any(a).([]float32), any(k.b).([]float32)
		switch k.kind {
		case rkBiasRelu:
			n := k.n
			for r := 0; r < len(o); r += n {
				vec.BiasRelu32(o[r:r+n], a[r:r+n], b[:n])
			}
		case rkReluGrad:
			vec.ReluGrad32(o, a, b[lo:hi])
		case rkScaledSub:
			vec.ScaledSub32(o, a, b[lo:hi], any(k.s).(float32))
		}
		return
	}
	switch k.kind {
	case rkBiasRelu:
		n := k.n
		b := k.b[:n]
		for r := 0; r < len(out); r += n {
			o, x := out[r:r+n], a[r:r+n]
			for j := range o {
				v := x[j] + b[j]
				if !(v > 0) {
					v = 0
				}
				o[j] = v
			}
		}
	case rkReluGrad:
		reluGrad64(any(out).([]float64), any(a).([]float64), any(k.b[lo:hi]).([]float64))
	case rkScaledSub:
		g, s := k.b[lo:hi], k.s
		for j := range out {
			out[j] = a[j] - T(s*g[j]) // the conversion keeps the product rounded (no FMA)
		}
	}
}

// reluGrad64 is out = g where y > 0, else +0, by a bit mask (float32:
// vec.ReluGrad32).
func reluGrad64(out, y, g []float64) {
	y, g = y[:len(out)], g[:len(out)]
	for j := range out {
		var m uint64
		if y[j] > 0 {
			m = ^uint64(0)
		}
		out[j] = math.Float64frombits(math.Float64bits(g[j]) & m)
	}
}

// Preallocated kernels for the running split (guarded by the split lock).
var (
	rowJob32 rowKernel[float32]
	rowJob64 rowKernel[float64]
)

// runRows runs k over size elements in rows of n: split across the
// workers when large, else (or when another split is running) serially.
func runRows[T float](k *rowKernel[T], size, n int) {
	if size == 0 || n == 0 {
		return
	}
	k.size, k.n = size, n
	parts := elemParts(size)
	if size/n < parts {
		parts = 1
	}
	if !lockParts(parts) {
		k.span(0, size)
		return
	}
	defer unlockParts()
	switch kk := any(k).(type) {
	case *rowKernel[float32]:
		rowJob32 = *kk
		runLocked(&rowJob32, parts)
		rowJob32 = rowKernel[float32]{}
	case *rowKernel[float64]:
		rowJob64 = *kk
		runLocked(&rowJob64, parts)
		rowJob64 = rowKernel[float64]{}
	}
}

// fusePlan rewrites a fresh plan's steps: bias + ReLU and p − s·g fused
// into one step each, and an update computed by a fused p − s·g written
// straight into its shared variable when nothing else needs the old value.
// root maps each node to the node whose storage it shares (views), and is
// kept up to date. Environment BLOCKS_NOFUSE=1 turns fusion off (for
// comparisons).
func (f *Function) fusePlan(p *plan, shapes [][]int, root []int) {
	if noFuse {
		return
	}
	n := len(f.nodes)
	users := make([]int, n) // readers of each node: steps, outputs, updates
	stepOf := make([]int, n)
	for i := range stepOf {
		stepOf[i] = -1
	}
	for k, st := range p.steps {
		stepOf[st.node] = k
		for i, j := range st.in {
			if _, ok := st.op.(sumToOp); ok && i == 1 {
				continue // read for its shape only
			}
			users[j]++
		}
	}
	for _, o := range f.outputs {
		users[f.index[o]] += 2 // never fused away
	}
	for _, u := range f.updates {
		users[f.index[u.Value]]++
	}
	isElem := func(k int, kind elemKind) bool {
		if k < 0 || p.steps[k].view {
			return false
		}
		o, ok := p.steps[k].op.(elemOp)
		return ok && o.kind == kind && f.nodes[p.steps[k].node].dtype.IsFloat()
	}
	removed := make([]bool, len(p.steps))
	for k := range p.steps {
		st := &p.steps[k]
		switch {
		case isElem(k, eRelu):
			// relu(copy(...(x + b))): the add becomes BiasRelu, the relu a view.
			j := st.in[0]
			for stepOf[j] >= 0 && p.steps[stepOf[j]].view && users[j] == 1 {
				if _, ok := p.steps[stepOf[j]].op.(copyOp); !ok {
					break
				}
				j = p.steps[stepOf[j]].in[0]
			}
			a := stepOf[j]
			if users[j] != 1 || !isElem(a, eAdd) {
				continue
			}
			add := &p.steps[a]
			x, b := add.in[0], add.in[1]
			out := shapes[add.node]
			if !nd.SameShape(shapes[x], out) {
				x, b = b, x
			}
			if !nd.SameShape(shapes[x], out) || !rowVector(shapes[b], out) || root[b] == root[add.node] {
				continue
			}
			add.op, add.in = biasReluOp{}, []int{x, b}
			st.op, st.view = copyOp{}, true
			p.vals[st.node] = &nd.Array{Shape: shapes[st.node]}
			root[st.node] = root[add.node]
		case isElem(k, eSub):
			// p − s·g: the mul step goes, the sub becomes ScaledSub.
			pv, m := st.in[0], st.in[1]
			ms := stepOf[m]
			if users[m] != 1 || !isElem(ms, eMul) {
				continue
			}
			sc, g := p.steps[ms].in[0], p.steps[ms].in[1]
			if len(shapes[sc]) != 0 {
				sc, g = g, sc
			}
			out := shapes[st.node]
			dt := f.nodes[st.node].dtype
			if len(shapes[sc]) != 0 || f.nodes[sc].dtype != dt || f.nodes[g].dtype != dt || f.nodes[pv].dtype != dt ||
				!nd.SameShape(shapes[pv], out) || !nd.SameShape(shapes[g], out) {
				continue
			}
			st.op, st.in = scaledSubOp{}, []int{pv, sc, g}
			removed[ms] = true
			p.vals[m] = nil
			users[m] = 0
			users[sc]++
			users[g]++
		}
	}
	kept := p.steps[:0]
	for k, st := range p.steps {
		if !removed[k] {
			kept = append(kept, st)
		}
	}
	p.steps = kept
	f.updateInPlace(p, shapes, root)
}

// rowVector says whether a value of shape b broadcasts along the rows of
// out: (n,) or (1, ..., 1, n) for out's last axis n.
func rowVector(b, out []int) bool {
	if len(out) == 0 || len(b) == 0 || len(b) > len(out) || b[len(b)-1] != out[len(out)-1] {
		return false
	}
	for _, d := range b[:len(b)-1] {
		if d != 1 {
			return false
		}
	}
	return true
}

// updateInPlace makes each update whose value a ScaledSub step computes
// from the variable itself write into the variable's storage, when no
// later step, no output and no other update reads the old value.
func (f *Function) updateInPlace(p *plan, shapes [][]int, root []int) {
	pos := make(map[int]int, len(p.steps)) // node -> step position
	for k, st := range p.steps {
		pos[st.node] = k
	}
	targets := map[int]int{}
	for _, u := range f.updates {
		targets[f.index[u.Shared]]++
	}
	for k, u := range f.updates {
		s, j := f.index[u.Shared], f.index[u.Value]
		at, ok := pos[j]
		if !ok || targets[s] != 1 {
			continue
		}
		st := &p.steps[at]
		if _, ok := st.op.(scaledSubOp); !ok || st.in[0] != s || st.into >= 0 ||
			u.Shared.dtype != f.nodes[j].dtype || !nd.SameShape(shapes[s], shapes[j]) {
			continue
		}
		safe := true
		for _, later := range p.steps[at+1:] {
			for _, i := range later.in {
				if root[i] == s {
					safe = false
				}
			}
		}
		for _, o := range f.outputs {
			if root[f.index[o]] == s {
				safe = false
			}
		}
		for k2, u2 := range f.updates {
			if k2 != k && root[f.index[u2.Value]] == s {
				safe = false
			}
		}
		if !safe {
			continue
		}
		st.into = s
		p.vals[j] = &nd.Array{Shape: shapes[j]}
		root[j] = s
	}
}

var noFuse = os.Getenv("BLOCKS_NOFUSE") == "1"
