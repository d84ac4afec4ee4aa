package cpu

import (
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// Fusions made when a graph is planned (fusePlan):
//
//   - relu(x + b), b a row vector broadcast over the rows of x (a Linear
//     brick's bias followed by a Rectifier): one pass, core.Lowered.BiasRelu;
//   - p − s·g with s a scalar (SGD's Scale step and its update): one pass,
//     core.Lowered.ScaledSub, written straight into the parameter when the update
//     allows it (nothing later reads the old value).

// fusePlan rewrites a fresh plan's steps: bias + ReLU and p − s·g fused
// into one step each, and an update computed by a fused p − s·g written
// straight into its shared variable when nothing else needs the old value.
// root maps each node to the node whose storage it shares (views), and is
// kept up to date. The CPU settings' NoFuse turns fusion off (for
// comparisons).
func (e *Executor) fusePlan(p *plan, shapes [][]int, root []int) {
	if kernels.Current().NoFuse {
		return
	}
	nodes := e.g.Nodes
	n := len(nodes)
	users := make([]int, n) // readers of each node: steps, outputs, updates
	stepOf := make([]int, n)
	for i := range stepOf {
		stepOf[i] = -1
	}
	for k, st := range p.steps {
		stepOf[st.node] = k
		for i, j := range st.in {
			if nodes[st.node].ShapeOnly == i {
				continue // read for its shape only
			}
			users[j]++
		}
	}
	for _, o := range e.g.Outputs {
		users[o] += 2 // never fused away
	}
	for _, u := range e.g.Updates {
		users[u.Value]++
	}
	isElem := func(k int, fn string) bool {
		if k < 0 || p.steps[k].view {
			return false
		}
		return p.steps[k].elem == fn && nodes[p.steps[k].node].DType.IsFloat()
	}
	removed := make([]bool, len(p.steps))
	for k := range p.steps {
		st := &p.steps[k]
		switch {
		case isElem(k, "relu") && e.biasRelu != nil:
			// relu(copy(...(x + b))): the add becomes BiasRelu, the relu a view.
			j := st.in[0]
			for stepOf[j] >= 0 && p.steps[stepOf[j]].view && users[j] == 1 {
				if !p.steps[stepOf[j]].identity {
					break
				}
				j = p.steps[stepOf[j]].in[0]
			}
			a := stepOf[j]
			if users[j] != 1 || !isElem(a, "add") {
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
			add.op, add.in, add.elem = e.biasRelu, []int{x, b}, ""
			st.op, st.view, st.elem, st.identity = copyOp{}, true, "", true
			p.vals[st.node] = &nd.Array{Shape: shapes[st.node]}
			root[st.node] = root[add.node]
		case isElem(k, "sub") && e.scaledSub != nil:
			// p − s·g: the mul step goes, the sub becomes ScaledSub.
			pv, m := st.in[0], st.in[1]
			ms := stepOf[m]
			if users[m] != 1 || !isElem(ms, "mul") {
				continue
			}
			sc, g := p.steps[ms].in[0], p.steps[ms].in[1]
			if len(shapes[sc]) != 0 {
				sc, g = g, sc
			}
			out := shapes[st.node]
			dt := nodes[st.node].DType
			if len(shapes[sc]) != 0 || nodes[sc].DType != dt || nodes[g].DType != dt || nodes[pv].DType != dt ||
				!nd.SameShape(shapes[pv], out) || !nd.SameShape(shapes[g], out) {
				continue
			}
			st.op, st.in, st.elem, st.scaledSub = e.scaledSub, []int{pv, sc, g}, "", true
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
	e.updateInPlace(p, shapes, root)
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
func (e *Executor) updateInPlace(p *plan, shapes [][]int, root []int) {
	pos := make(map[int]int, len(p.steps)) // node -> step position
	for k, st := range p.steps {
		pos[st.node] = k
	}
	targets := map[int]int{}
	for _, u := range e.g.Updates {
		targets[u.Shared]++
	}
	for k, u := range e.g.Updates {
		s, j := u.Shared, u.Value
		at, ok := pos[j]
		if !ok || s < 0 || targets[s] != 1 {
			continue
		}
		st := &p.steps[at]
		if !st.scaledSub || st.in[0] != s || st.into >= 0 ||
			e.g.Nodes[s].DType != e.g.Nodes[j].DType || !nd.SameShape(shapes[s], shapes[j]) {
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
		for _, o := range e.g.Outputs {
			if root[o] == s {
				safe = false
			}
		}
		for k2, u2 := range e.g.Updates {
			if k2 != k && root[u2.Value] == s {
				safe = false
			}
		}
		if !safe {
			continue
		}
		st.into, st.beforeWrite = s, u.BeforeWrite
		p.vals[j] = &nd.Array{Shape: shapes[j]}
		root[j] = s
	}
}

// The graph's fused ops (core.Lowered.BiasRelu, core.Lowered.ScaledSub) compute bit for
// bit what the ops they replace computed (same float operations in the
// same order, every intermediate rounded to the dtype), so fusion never
// changes a result.

// copyOp is the identity, run as a view (the ReLU whose work BiasRelu
// took over).
type copyOp struct{}

func (copyOp) String() string                    { return "copy" }
func (copyOp) IsView(in [][]int, out []int) bool { return true }
func (copyOp) Run(out *nd.Array, in []*nd.Array) { out.Data = in[0].Data }
