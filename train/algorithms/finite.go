package algorithms

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/nd"
)

// NotFiniteError is returned by GradientDescent.ProcessBatch when the
// cost of a batch is NaN or infinite (unless the step rule holds
// RemoveNotFinite, which replaces such steps and lets training go on, as
// in Blocks). The batch's update has been made: the parameters may now
// hold non-finite values, and training must stop (resume from the last
// checkpoint with a smaller learning rate, clipping or RemoveNotFinite).
//
// The main loop adds the iteration and epoch of the batch (see
// mainloop.BatchError).
type NotFiniteError struct {
	// Variable is the name of the non-finite variable (the cost).
	Variable string
	// Value is its value (NaN, +Inf or -Inf).
	Value float64
	// Parameter names the first parameter holding a non-finite value
	// after the update ("" when all are finite); Elements is how many of
	// its elements are not finite.
	Parameter string
	Elements  int
}

func (e *NotFiniteError) Error() string {
	msg := fmt.Sprintf("the cost %s is %v", e.Variable, e.Value)
	if e.Parameter != "" {
		msg += fmt.Sprintf("; the first parameter with non-finite values is %s (%d elements)", e.Parameter, e.Elements)
	} else {
		msg += "; all parameters are still finite (a non-finite value in the batch, or an overflow in the cost)"
	}
	return msg + "; training stopped (RemoveNotFinite in the step rule skips such steps instead)"
}

// NonFinite marks the error for the main loop, which names the batch.
func (e *NotFiniteError) NonFinite() bool { return true }

// HasRemoveNotFinite reports whether rule is, or holds (in a
// CompositeRule or Restrict), a RemoveNotFinite.
func HasRemoveNotFinite(rule StepRule) bool {
	switch r := rule.(type) {
	case *RemoveNotFinite:
		return true
	case *CompositeRule:
		for _, c := range r.Components {
			if HasRemoveNotFinite(c) {
				return true
			}
		}
	case *Restrict:
		return HasRemoveNotFinite(r.StepRule)
	}
	return false
}

// checkFinite returns a NotFiniteError when the scalar cost is not
// finite: one value per batch, so the check costs nothing; the
// parameters are scanned only on the error path.
func (g *UpdatesAlgorithm) checkFinite(cost *nd.Array) error {
	if cost == nil || cost.Size() != 1 {
		return nil
	}
	v := cost.Flat(0)
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		return nil
	}
	name := g.finite.Name
	if name == "" {
		name = "(unnamed)"
	}
	e := &NotFiniteError{Variable: name, Value: v}
	for i, p := range g.params {
		n := nonFinite(p.Value())
		if n == 0 {
			continue
		}
		pn := ""
		if g.finiteName != nil {
			pn = g.finiteName(p)
		}
		if pn == "" {
			pn = p.Name
		}
		if pn == "" {
			pn = fmt.Sprintf("parameter_%d", i)
		}
		e.Parameter, e.Elements = pn, n
		break
	}
	return e
}

func nonFinite(a *nd.Array) int {
	if a == nil || !a.DType().IsFloat() {
		return 0
	}
	n := 0
	for i, size := 0, a.Size(); i < size; i++ {
		if v := a.Flat(i); math.IsNaN(v) || math.IsInf(v, 0) {
			n++
		}
	}
	return n
}
