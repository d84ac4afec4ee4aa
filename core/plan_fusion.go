package core

import (
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/nd"
)

// The plan's fusions (the ops they make: fusion_ops.go).

// fusePlan rewrites a fresh plan's steps: bias + ReLU and p − s·g fused
// into one step each, and an update computed by a fused p − s·g written
// straight into its shared variable when nothing else needs the old value.
// root maps each node to the node whose storage it shares (views), and is
// kept up to date. The CPU settings' NoFuse turns fusion off (for
// comparisons).
func (f *Function) fusePlan(p *plan, shapes [][]int, root []int) {
	if kernels.Current().NoFuse {
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
