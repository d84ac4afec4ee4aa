package bricks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/core"
)

// RecurrentStack stacks recurrent transitions: layer 0 reads the given
// sequences, layer k > 0 the states of layer k-1 through a Fork (children
// fork_1, fork_2, ...). Names of layer k > 0 carry the suffix "#k"
// ("states#1"); the mask and the contexts are shared. With
// skip_connections, layer k also adds the given sequences named with its
// suffix. As in Blocks, the transitions are renamed name#level, and the
// forks have a bias unless skip_connections is set.
//
// apply runs the layers one after another, each over the whole sequence
// (Blocks' default); RecurrentOptions.LowMemory runs them in a single
// scan, one step of every layer at a time (Blocks' low_memory=True, which
// needs every transition to be recurrent). A transition may be any
// KeywordApplier whose apply has a recurrent signature: a recurrent brick
// or a Bidirectional.
type RecurrentStack struct {
	*Base
	InitConfig
	recurrentBase
	Transitions []Brick
	Forks       []*Parallel
	statesName  string
	skip        bool
	specs       []RecurrentSpec // each transition's apply
	spec        RecurrentSpec   // the stack's apply
}

// stackSuffix is Blocks' RecurrentStack.suffix.
func stackSuffix(name string, level int) string {
	if name == "mask" || level == 0 {
		return name
	}
	return fmt.Sprintf("%s#%d", name, level)
}

// transitionSpec is the recurrent signature of a transition's apply: its
// own, or, for a Bidirectional, that of its forward child (Blocks'
// apply.delegate).
func transitionSpec(t Brick) (RecurrentSpec, bool) {
	if bi, ok := t.(*Bidirectional); ok {
		t = bi.Forward
	}
	rb, ok := t.(RecurrentBrick)
	if !ok || rb.RecurrentApplication("apply") == nil {
		return RecurrentSpec{}, false
	}
	return rb.RecurrentApplication("apply").Spec, true
}

// NewRecurrentStack makes a RecurrentStack; forkPrototype nil means
// Linear, with a bias unless skip is set.
func NewRecurrentStack(cfg *Config, name string, transitions []Brick, forkPrototype Feedforward, statesName string, skip bool) (*RecurrentStack, error) {
	if len(transitions) == 0 {
		return nil, fmt.Errorf("RecurrentStack: no transitions")
	}
	r := &RecurrentStack{Base: &Base{}, Transitions: transitions, statesName: statesName, skip: skip}
	r.initBase(r, cfg, name, "RecurrentStack")
	var apps []*RecurrentApp
	allRecurrent := true
	for i, t := range transitions {
		spec, ok := transitionSpec(t)
		if _, ka := t.(KeywordApplier); !ok || !ka {
			return nil, fmt.Errorf("RecurrentStack: transition %d (%s) is not a recurrent brick", i, t.BaseBrick().AnnotationName())
		}
		if !slices.Contains(spec.Outputs, statesName) {
			return nil, fmt.Errorf("RecurrentStack: transition %d (%s) has no output %s", i, t.BaseBrick().AnnotationName(), statesName)
		}
		r.specs = append(r.specs, spec)
		rb, ok := t.(RecurrentBrick)
		if ok && rb.RecurrentApplication("apply") != nil {
			apps = append(apps, rb.RecurrentApplication("apply"))
		} else {
			allRecurrent = false
		}
	}
	for level, t := range transitions {
		t.BaseBrick().Name += fmt.Sprintf("#%d", level)
	}
	children := append([]Brick(nil), transitions...)
	for level := 1; level < len(transitions); level++ {
		f, err := NewFork(cfg, fmt.Sprintf("fork_%d", level), r.normalInputs(level), 0, nil, forkPrototype)
		if err != nil {
			return nil, err
		}
		if forkPrototype == nil {
			for _, l := range f.Transforms {
				l.(*Linear).UseBias = new(!skip)
			}
		}
		r.Forks = append(r.Forks, f)
		children = append(children, f)
	}
	r.SetChildren(children)
	// Blocks' order: the bottom layer's sequences (and, with skip
	// connections, every layer's), the mask last; contexts unsuffixed
	// and shared.
	var spec RecurrentSpec
	hasMask := false
	for level, ts := range r.specs {
		if level == 0 || skip {
			for _, s := range ts.Sequences {
				if s == "mask" {
					hasMask = hasMask || level == 0
					continue
				}
				spec.Sequences = append(spec.Sequences, stackSuffix(s, level))
			}
		}
		for _, s := range ts.States {
			spec.States = append(spec.States, stackSuffix(s, level))
		}
		for _, s := range ts.Contexts {
			if !slices.Contains(spec.Contexts, s) {
				spec.Contexts = append(spec.Contexts, s)
			}
		}
		for _, s := range ts.Outputs {
			spec.Outputs = append(spec.Outputs, stackSuffix(s, level))
		}
	}
	if hasMask {
		spec.Sequences = append(spec.Sequences, "mask")
	}
	r.spec = spec
	if allRecurrent {
		r.addRecurrent(r.Base, "apply", &RecurrentApp{Spec: spec,
			Step: func(in map[string]*core.Variable) ([]*core.Variable, error) { return r.step(apps, in) },
			Initial: func(ref *core.Variable, axis int) ([]*core.Variable, error) {
				var out []*core.Variable
				for _, a := range apps {
					s, err := a.Initial(ref, axis)
					if err != nil {
						return nil, err
					}
					out = append(out, s...)
				}
				return out, nil
			}})
	} else {
		inputs := slices.Concat(spec.Sequences, spec.States, spec.Contexts)
		r.addApplication(&Application{Name: "apply", Inputs: inputs, Outputs: spec.Outputs,
			Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
				m := map[string]*core.Variable{}
				for i, n := range inputs {
					m[n] = in[i]
				}
				return r.layerwise(m, RecurrentOptions{})
			}})
	}
	return r, nil
}

// Spec is the recurrent signature of the stack's apply (Blocks'
// apply.sequences, states, contexts and outputs).
func (r *RecurrentStack) Spec() RecurrentSpec { return r.spec }

// StatesName is the prefix of the stack's state names (Blocks'
// states_name).
func (r *RecurrentStack) StatesName() string { return r.statesName }

// SkipConnections reports whether every level sees the stack's input
// (Blocks' skip_connections).
func (r *RecurrentStack) SkipConnections() bool { return r.skip }

// normalInputs are a layer's sequences but the mask.
func (r *RecurrentStack) normalInputs(level int) []string {
	var out []string
	for _, s := range r.specs[level].Sequences {
		if s != "mask" {
			out = append(out, s)
		}
	}
	return out
}

// PushAllocationConfigHook sizes the forks from the transitions' dims.
func (r *RecurrentStack) PushAllocationConfigHook() error {
	for level := 1; level < len(r.Transitions); level++ {
		prev, ok := r.Transitions[level-1].(GetDimmer)
		cur, ok2 := r.Transitions[level].(GetDimmer)
		if !ok || !ok2 {
			return fmt.Errorf("%s: transitions must answer get_dim", r.AnnotationName())
		}
		// The transitions get their own configuration pushed after this
		// hook; their dims are set by the user.
		in, err := prev.GetDim(r.statesName)
		if err != nil {
			return err
		}
		f := r.Forks[level-1]
		f.InputDim = in
		var outs []int
		for _, n := range f.InputNames {
			d, err := cur.GetDim(n)
			if err != nil {
				return err
			}
			outs = append(outs, d)
		}
		f.OutputDims = outs
	}
	return nil
}

// ApplyKeywords implements KeywordApplier: with o.LowMemory the single
// scan over every layer, otherwise one layer after another.
func (r *RecurrentStack) ApplyKeywords(app string, in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	if app != "apply" {
		return nil, fmt.Errorf("%s has no application %s", r.AnnotationName(), app)
	}
	if o.Reverse {
		return nil, fmt.Errorf("%s.apply: reverse=True is not implemented for a RecurrentStack (as in Blocks)", r.AnnotationName())
	}
	if o.LowMemory {
		if r.RecurrentApplication("apply") == nil {
			return nil, fmt.Errorf("%s.apply: low_memory=True needs every transition to be a recurrent brick (a Bidirectional is not)", r.AnnotationName())
		}
		o.LowMemory = false
		return ApplyRecurrent(r, app, in, o)
	}
	if !r.Allocated {
		if err := Allocate(r); err != nil {
			return nil, err
		}
	}
	known := slices.Concat(r.spec.Sequences, r.spec.States, r.spec.Contexts)
	call := &core.ApplicationCall{Brick: r, Application: app, Metadata: map[string]any{}, ID: callIDs.Add(1)}
	tagged := map[string]*core.Variable{}
	for _, n := range sortedKeys(in) {
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("%s.%s got an unexpected input %s (it takes %s)", r.AnnotationName(), app, n, strings.Join(known, ", "))
		}
		tagged[n] = tag(in[n], r.Base, app, n, call, core.Input)
	}
	outs, err := r.layerwise(tagged, o)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", r.AnnotationName(), app, err)
	}
	for i, v := range outs {
		outs[i] = tag(v, r.Base, app, r.spec.Outputs[i], call, core.Output)
	}
	return outs, nil
}

// layerwise is Blocks' RecurrentStack.do_apply: each transition's apply
// in turn (over the whole sequence, or one step with o.NoIterate), layer
// k > 0 reading the fork of layer k-1's states.
func (r *RecurrentStack) layerwise(in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	var out []*core.Variable
	var last *core.Variable
	for level, t := range r.Transitions {
		spec := r.specs[level]
		m := map[string]*core.Variable{}
		normal := r.normalInputs(level)
		if level == 0 || r.skip {
			for _, n := range normal {
				if v, ok := in[stackSuffix(n, level)]; ok {
					m[n] = v
				}
			}
		}
		if v, ok := in["mask"]; ok && slices.Contains(spec.Sequences, "mask") {
			m["mask"] = v
		}
		for _, n := range spec.States {
			if v, ok := in[stackSuffix(n, level)]; ok {
				m[n] = v
			}
		}
		for _, n := range spec.Contexts {
			if v, ok := in[n]; ok {
				m[n] = v
			}
		}
		if level > 0 {
			fo, err := Apply(r.Forks[level-1], "apply", last)
			if err != nil {
				return nil, err
			}
			for i, n := range normal {
				if v, ok := m[n]; ok {
					m[n] = core.Add(v, fo[i])
				} else {
					m[n] = fo[i]
				}
			}
		}
		res, err := t.(KeywordApplier).ApplyKeywords("apply", m, o)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
		last = res[slices.Index(spec.Outputs, r.statesName)]
		if o.ReturnInitialStates {
			one := 1
			if last, err = core.Subtensor(last, []core.Index{{Slice: true, Start: &one}}); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// GetDim is Blocks' RecurrentStack.get_dim: a context's dim, or that of
// the named input of the layer its suffix gives.
func (r *RecurrentStack) GetDim(name string) (int, error) {
	for level, t := range r.Transitions {
		if gd, ok := t.(GetDimmer); ok && slices.Contains(r.specs[level].Contexts, name) {
			return gd.GetDim(name)
		}
	}
	base, level := name, 0
	if i := strings.LastIndex(name, "#"); i >= 0 {
		if l, err := strconv.Atoi(name[i+1:]); err == nil && strings.Trim(name[i+1:], "0123456789") == "" {
			base, level = name[:i], l
		}
	}
	if level >= len(r.Transitions) {
		return 0, fmt.Errorf("%s has no layer %d (for %s)", r.AnnotationName(), level, name)
	}
	gd, ok := r.Transitions[level].(GetDimmer)
	if !ok {
		return 0, fmt.Errorf("%s: transition %d does not answer get_dim", r.AnnotationName(), level)
	}
	return gd.GetDim(base)
}

func (r *RecurrentStack) step(apps []*RecurrentApp, in map[string]*core.Variable) ([]*core.Variable, error) {
	var out []*core.Variable
	var prevStates *core.Variable
	for level, a := range apps {
		m := map[string]*core.Variable{}
		if level > 0 {
			f := r.Forks[level-1]
			fo, err := Apply(f, "apply", prevStates)
			if err != nil {
				return nil, err
			}
			for i, n := range f.InputNames {
				m[n] = fo[i]
				if r.skip {
					if v, ok := in[stackSuffix(n, level)]; ok {
						m[n] = core.Add(m[n], v)
					}
				}
			}
			if v, ok := in["mask"]; ok {
				m["mask"] = v
			}
		} else {
			for _, n := range a.Spec.Sequences {
				if v, ok := in[n]; ok {
					m[n] = v
				}
			}
		}
		for _, n := range a.Spec.States {
			m[n] = in[stackSuffix(n, level)]
		}
		for _, n := range a.Spec.Contexts {
			m[n] = in[n]
		}
		res, err := a.Step(m)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
		j := slices.Index(a.Spec.Outputs, r.statesName)
		if j < 0 {
			return nil, fmt.Errorf("%s: transition %d has no output %s", r.AnnotationName(), level, r.statesName)
		}
		prevStates = res[j]
	}
	return out, nil
}

var _ KeywordApplier = (*RecurrentStack)(nil)
