package bricks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/core"
)

// The applications of SequenceContentAttention a script calls directly,
// as Blocks has them:
//
//	take_glimpses(attended, preprocessed_attended=None, attended_mask=None, **states)
//	    -> weighted_averages (batch, attended_dim), weights (batch, time)
//	compute_energies(attended, preprocessed_attended=None, **states) -> energies (time, batch)
//	compute_weights(energies, attended_mask) -> weights (the shape of energies)
//	compute_weighted_averages(weights, attended) -> weighted_averages
//	preprocess(attended) -> preprocessed_attended
func (a *SequenceContentAttention) addApplications() {
	states := a.StateNames
	named := func(name string, inputs, outputs []string) {
		a.addApplication(&Application{Name: name, Inputs: inputs, Outputs: outputs,
			Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
				m := map[string]*core.Variable{}
				for i, n := range inputs {
					m[n] = in[i]
				}
				return a.applyNamed(name, m)
			}})
	}
	named("take_glimpses", slices.Concat([]string{"attended", "preprocessed_attended", "attended_mask"}, states), attentionGlimpseNames)
	named("compute_energies", slices.Concat([]string{"attended", "preprocessed_attended"}, states), []string{"energies"})
	named("compute_weights", []string{"energies", "attended_mask"}, []string{"weights"})
	named("compute_weighted_averages", []string{"weights", "attended"}, []string{"weighted_averages"})
	named("preprocess", []string{"attended"}, []string{"preprocessed_attended"})
}

// applyNamed computes an application from its named inputs (an optional
// input may be absent).
func (a *SequenceContentAttention) applyNamed(app string, in map[string]*core.Variable) ([]*core.Variable, error) {
	need := func(names ...string) error {
		for _, n := range names {
			if in[n] == nil {
				return fmt.Errorf("missing input %s", n)
			}
		}
		return nil
	}
	switch app {
	case "take_glimpses", "compute_energies":
		if err := need(append([]string{"attended"}, a.StateNames...)...); err != nil {
			return nil, err
		}
		pre := in["preprocessed_attended"]
		if pre == nil {
			var err error
			if pre, err = a.PreprocessAttended(in["attended"]); err != nil {
				return nil, err
			}
		}
		if app == "compute_energies" {
			e, err := a.energies(pre, in)
			return one(e), err
		}
		return a.TakeGlimpses(in["attended"], pre, in["attended_mask"], in)
	case "compute_weights":
		if err := need("energies"); err != nil {
			return nil, err
		}
		w, err := ComputeWeights(in["energies"], in["attended_mask"])
		return one(w), err
	case "compute_weighted_averages":
		if err := need("weights", "attended"); err != nil {
			return nil, err
		}
		w, err := weightedAverages(in["weights"], in["attended"])
		return one(w), err
	case "preprocess":
		if err := need("attended"); err != nil {
			return nil, err
		}
		p, err := a.PreprocessAttended(in["attended"])
		return one(p), err
	}
	return nil, fmt.Errorf("%s has no application %s", a.AnnotationName(), app)
}

// ApplyKeywords calls an application with named inputs, the optional
// ones (preprocessed_attended, attended_mask) possibly absent; the
// recurrent options do not apply.
func (a *SequenceContentAttention) ApplyKeywords(app string, in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	if o.NoIterate || o.Reverse || o.ReturnInitialStates || o.LowMemory {
		return nil, fmt.Errorf("%s.%s is not recurrent: iterate, reverse and return_initial_states do not apply", a.AnnotationName(), app)
	}
	spec := a.Application(app)
	if spec == nil {
		return nil, fmt.Errorf("%s has no application %s", a.AnnotationName(), app)
	}
	if !a.Allocated {
		if err := Allocate(a); err != nil {
			return nil, err
		}
	}
	call := &core.ApplicationCall{Brick: a, Application: app, Metadata: map[string]any{}, ID: callIDs.Add(1)}
	tagged := map[string]*core.Variable{}
	for _, n := range sortedKeys(in) {
		if !slices.Contains(spec.Inputs, n) {
			return nil, fmt.Errorf("%s.%s got an unexpected input %s (it takes %s)", a.AnnotationName(), app, n, strings.Join(spec.Inputs, ", "))
		}
		tagged[n] = tag(in[n], a.Base, app, n, call, core.Input)
	}
	outs, err := a.applyNamed(app, tagged)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", a.AnnotationName(), app, err)
	}
	for i, v := range outs {
		outs[i] = tag(v, a.Base, app, spec.Outputs[i], call, core.Output)
	}
	return outs, nil
}

// weightedAverages is Blocks' compute_weighted_averages:
// (weights[..., None] * attended).sum(axis=0).
func weightedAverages(weights, attended *core.Variable) (*core.Variable, error) {
	pattern := make([]int, weights.NDim()+1)
	for i := range weights.NDim() {
		pattern[i] = i
	}
	pattern[weights.NDim()] = -1
	w, err := core.Dimshuffle(weights, pattern)
	if err != nil {
		return nil, err
	}
	return core.Sum(core.Mul(w, attended), []int{0}, false, nil)
}

var _ KeywordApplier = (*SequenceContentAttention)(nil)
