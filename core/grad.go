package core

import (
	"fmt"
	"slices"
)

// GradOptions are Theano's grad arguments beyond cost and wrt.
type GradOptions struct {
	// KnownGrads gives the gradient of the cost with respect to some
	// variables; back-propagation starts from them too.
	KnownGrads map[*Variable]*Variable
	// ConsiderConstant lists variables through which no gradient flows.
	ConsiderConstant []*Variable
	// AllowDisconnected returns zeros instead of an error for a wrt
	// variable that is not in the cost's graph at all. (A variable that is
	// in the graph but reaches the cost only through non-differentiable
	// ops, such as comparisons, always gets zeros.)
	AllowDisconnected bool
}

// Grad is symbolic reverse-mode differentiation (Theano's tensor.grad): the
// gradient of the scalar cost with respect to each of wrt, as variables of
// the graph. Only paths from wrt to the cost are differentiated, so no
// gradient with respect to data inputs is ever computed.
func Grad(cost *Variable, wrt []*Variable, opts GradOptions) ([]*Variable, error) {
	if cost != nil && cost.ndim != 0 {
		return nil, fmt.Errorf("grad: the cost must be a scalar, got a %d-d %s", cost.ndim, cost)
	}
	if cost != nil && !cost.dtype.IsFloat() {
		return nil, fmt.Errorf("grad: the cost must be a float, got %s", cost.dtype)
	}
	roots := []*Variable{}
	if cost != nil {
		roots = append(roots, cost)
	}
	for v := range opts.KnownGrads {
		roots = append(roots, v)
	}
	slices.SortFunc(roots, func(a, b *Variable) int { return int(a.id - b.id) })
	order := Ancestors(roots)
	ancestor := make(map[*Variable]bool, len(order))
	for _, v := range order {
		ancestor[v] = true
	}
	constant := map[*Variable]bool{}
	for _, v := range opts.ConsiderConstant {
		constant[v] = true
	}

	// relevant: nodes that depend on some wrt variable.
	relevant := map[*Variable]bool{}
	for _, w := range wrt {
		relevant[w] = true
	}
	for _, v := range order {
		if constant[v] {
			continue
		}
		for _, in := range v.inputs {
			if relevant[in] && !constant[in] {
				relevant[v] = true
				break
			}
		}
	}

	contrib := map[*Variable][]*Variable{}
	if cost != nil {
		contrib[cost] = []*Variable{Const(cost.dtype, 1)}
	}
	known := make([]*Variable, 0, len(opts.KnownGrads))
	for v := range opts.KnownGrads {
		known = append(known, v)
	}
	slices.SortFunc(known, func(a, b *Variable) int { return int(a.id - b.id) })
	for _, v := range known {
		contrib[v] = append(contrib[v], opts.KnownGrads[v])
	}
	total := map[*Variable]*Variable{}
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		g := sumGrads(contrib[v])
		if g == nil {
			continue
		}
		total[v] = g
		if v.kind != KindOp || !relevant[v] {
			continue
		}
		gin := v.op.Grad(v.inputs, v, g)
		for k, in := range v.inputs {
			if gin[k] == nil || !relevant[in] || constant[in] {
				continue
			}
			contrib[in] = append(contrib[in], gin[k])
		}
	}
	out := make([]*Variable, len(wrt))
	for i, w := range wrt {
		g := total[w]
		if g == nil {
			if !ancestor[w] && !opts.AllowDisconnected {
				return nil, fmt.Errorf("grad: the cost does not depend on %s (%s)", w, w.TypeString())
			}
			g = apply(BroadcastLikeOp{}, Const(w.dtype, 0), w)
		}
		if g.dtype != w.dtype {
			g = Cast(g, w.dtype)
		}
		out[i] = g
	}
	return out, nil
}

func sumGrads(gs []*Variable) *Variable {
	if len(gs) == 0 {
		return nil
	}
	g := gs[0]
	for _, h := range gs[1:] {
		g = Add(g, h)
	}
	return g
}

// Ancestors lists every variable the outputs depend on, outputs included,
// in a topological order: a depth-first post-order that visits inputs in
// argument order, so earlier inputs (and their parameters) come first.
func Ancestors(outputs []*Variable) []*Variable {
	var order []*Variable
	seen := map[*Variable]bool{}
	type frame struct {
		v *Variable
		i int
	}
	for _, o := range outputs {
		if seen[o] {
			continue
		}
		stack := []frame{{o, 0}}
		seen[o] = true
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.i < len(top.v.inputs) {
				in := top.v.inputs[top.i]
				top.i++
				if !seen[in] {
					seen[in] = true
					stack = append(stack, frame{in, 0})
				}
				continue
			}
			order = append(order, top.v)
			stack = stack[:len(stack)-1]
		}
	}
	return order
}
