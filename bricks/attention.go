package bricks

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/core"
)

// SequenceContentAttention is Blocks' content-based attention over a
// sequence: energies e = w·tanh(W_s·s + W_a·a + b) for every position of the
// attended sequence a (time, batch, attended_dim), weights the masked
// softmax of e over time, and the glimpse the weighted average of a.
// Children: state_trans (a Parallel over the state names), preprocess (a
// Linear on the attended) and energy_comp (a Linear without bias after a
// tanh: Blocks' ShallowEnergyComputer).
type SequenceContentAttention struct {
	*Base
	InitConfig
	// StateDims are the dimensions of the states, AttendedDim that of the
	// attended sequence, MatchDim that of the match vectors (nil and 0:
	// unset; AttentionRecurrent pushes the first two).
	StateDims             []int
	AttendedDim, MatchDim int
	StateNames            []string
	StateTransformers     *Parallel
	Preprocess            *Linear
	EnergyComputer        *Linear
}

// GlimpseNames are the outputs of take_glimpses.
var attentionGlimpseNames = []string{"weighted_averages", "weights"}

// NewSequenceContentAttention makes the attention brick; dims of 0 are
// pushed by a parent (AttentionRecurrent sets state_dims and attended_dim).
func NewSequenceContentAttention(cfg *Config, name string, stateNames []string, stateDims []int, attendedDim, matchDim int) (*SequenceContentAttention, error) {
	a := &SequenceContentAttention{Base: &Base{}, StateNames: stateNames}
	a.initBase(a, cfg, name, "SequenceContentAttention")
	st, err := NewParallel(cfg, "state_trans", stateNames, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	for _, l := range st.Transforms {
		l.(*Linear).UseBias = new(false)
	}
	a.StateTransformers = st
	a.Preprocess = NewLinear(cfg, "preprocess")
	a.EnergyComputer = NewLinear(cfg, "energy_comp")
	a.EnergyComputer.UseBias = new(false)
	a.SetChildren([]Brick{st, a.Preprocess, a.EnergyComputer})
	a.StateDims, a.AttendedDim, a.MatchDim = stateDims, attendedDim, matchDim
	a.addApplications()
	return a, nil
}

// PushAllocationConfigHook sizes the children.
func (a *SequenceContentAttention) PushAllocationConfigHook() error {
	sd, ad, md := a.StateDims, a.AttendedDim, a.MatchDim
	if sd == nil || ad == 0 || md == 0 {
		return fmt.Errorf("%s: allocation arguments state_dims, attended_dim and match_dim must be set (got %v, %d, %d)", a.AnnotationName(), sd, ad, md)
	}
	outs := make([]int, len(sd))
	for i := range outs {
		outs[i] = md
	}
	a.StateTransformers.InputDims, a.StateTransformers.OutputDims = sd, outs
	a.Preprocess.InputDim, a.Preprocess.OutputDim = ad, md
	a.EnergyComputer.InputDim, a.EnergyComputer.OutputDim = md, 1
	return nil
}

func (a *SequenceContentAttention) missingAllocation() []string {
	var m []string
	if a.StateDims == nil {
		m = append(m, "state_dims")
	}
	if a.AttendedDim == 0 {
		m = append(m, "attended_dim")
	}
	if a.MatchDim == 0 {
		m = append(m, "match_dim")
	}
	return m
}

// GetDim is the dimension of a glimpse (weights: 0, one per position).
func (a *SequenceContentAttention) GetDim(name string) (int, error) {
	switch name {
	case "weighted_averages", "attended":
		return a.AttendedDim, nil
	case "weights", "attended_mask":
		return 0, nil
	}
	return 0, fmt.Errorf("%s has no output %s", a.AnnotationName(), name)
}

// PreprocessAttended is attention.preprocess(attended), a call of the
// attention's application preprocess as in Blocks.
func (a *SequenceContentAttention) PreprocessAttended(attended *core.Variable) (*core.Variable, error) {
	return first(callAs(a, "preprocess", []string{"attended"}, []*core.Variable{attended}, nil, func(in []*core.Variable) ([]*core.Variable, error) {
		return Apply(a.Preprocess, "apply", in[0])
	}))
}

// TakeGlimpses computes the weighted average (batch, attended_dim) and the
// weights (batch, time) from the states; mask may be nil. It is a call of
// the attention's application take_glimpses, as in Blocks.
func (a *SequenceContentAttention) TakeGlimpses(attended, preprocessed, mask *core.Variable, states map[string]*core.Variable) ([]*core.Variable, error) {
	names := []string{"attended", "preprocessed_attended"}
	ins := []*core.Variable{attended, preprocessed}
	if mask != nil {
		names, ins = append(names, "attended_mask"), append(ins, mask)
	}
	for _, n := range a.StateNames {
		if s, ok := states[n]; ok {
			names, ins = append(names, n), append(ins, s)
		}
	}
	return callAs(a, "take_glimpses", names, ins, attentionGlimpseNames, func(in []*core.Variable) ([]*core.Variable, error) {
		st := map[string]*core.Variable{}
		for i, n := range names {
			st[n] = in[i]
		}
		return a.takeGlimpses(st["attended"], st["preprocessed_attended"], st["attended_mask"], st)
	})
}

func (a *SequenceContentAttention) takeGlimpses(attended, preprocessed, mask *core.Variable, states map[string]*core.Variable) ([]*core.Variable, error) {
	energies, err := a.energies(preprocessed, states)
	if err != nil {
		return nil, err
	}
	weights, err := ComputeWeights(energies, mask)
	if err != nil {
		return nil, err
	}
	avg, err := weightedAverages(weights, attended)
	if err != nil {
		return nil, err
	}
	return []*core.Variable{avg, core.Transpose(weights)}, nil
}

// energies is Blocks' compute_energies: (time, batch) energies of the
// preprocessed attended sequence against the states.
func (a *SequenceContentAttention) energies(preprocessed *core.Variable, states map[string]*core.Variable) (*core.Variable, error) {
	ins := make([]*core.Variable, len(a.StateNames))
	for i, n := range a.StateNames {
		s, ok := states[n]
		if !ok {
			return nil, fmt.Errorf("%s: state %s is not given", a.AnnotationName(), n)
		}
		ins[i] = s
	}
	ts, err := Apply(a.StateTransformers, "apply", ins...)
	if err != nil {
		return nil, err
	}
	match := ts[0]
	for _, t := range ts[1:] {
		match = core.Add(match, t)
	}
	match = core.Add(preprocessed, match) // (T, B, match) + (B, match)
	e, err := applyBrick(a.EnergyComputer, core.Tanh(match))
	if err != nil {
		return nil, err
	}
	energies, err := core.Subtensor(e, []core.Index{{Slice: true}, {Slice: true}, {I: 0}}) // (T, B)
	if err != nil {
		return nil, err
	}
	return energies, nil
}

// ComputeWeights is Blocks' GenericSequenceAttention.compute_weights: the
// softmax over the first axis of energies (time, ...), stabilized by
// subtracting the maximum, times the mask (nil: no mask); where the mask
// is zero over the whole sequence (Blocks' tensor.all(1 - mask, axis=0))
// the normalization is one more, so the weights stay finite (zeros).
func ComputeWeights(energies, mask *core.Variable) (*core.Variable, error) {
	mx, err := core.Max(energies, []int{0}, true)
	if err != nil {
		return nil, err
	}
	un := core.Exp(core.Sub(energies, mx))
	var m *core.Variable
	if mask != nil {
		m = mask
		if m.DType() != un.DType() {
			m = core.Cast(m, un.DType())
		}
		un = core.Mul(un, m)
	}
	tot, err := core.Sum(un, []int{0}, true, nil)
	if err != nil {
		return nil, err
	}
	if m != nil {
		one := core.Const(m.DType(), 1)
		zero := core.Const(m.DType(), 0)
		nonzero := core.Cast(core.NEQ(core.Sub(one, m), zero), m.DType())
		all, err := core.Min(nonzero, []int{0}, true)
		if err != nil {
			return nil, err
		}
		tot = core.Add(tot, all)
	}
	return core.Div(un, tot), nil
}

// InitialGlimpses are zeros: (batch, attended_dim) and (batch, time).
func (a *SequenceContentAttention) InitialGlimpses(attended *core.Variable) ([]*core.Variable, error) {
	first, err := core.Subtensor(attended, []core.Index{{I: 0}})
	if err != nil {
		return nil, err
	}
	zero := core.Const(attended.DType(), 0)
	avg := core.Mul(first, zero)
	w, err := core.Subtensor(attended, []core.Index{{Slice: true}, {Slice: true}, {I: 0}})
	if err != nil {
		return nil, err
	}
	return []*core.Variable{avg, core.Mul(core.Transpose(w), zero)}, nil
}

// AttentionRecurrent combines a recurrent transition with an attention
// mechanism: at each step the attention looks at the attended sequence
// from the current states, and a Distribute adds the weighted average to
// the transition's inputs. Its states are the transition's plus the
// glimpses; its contexts the transition's plus attended and attended_mask.
type AttentionRecurrent struct {
	*Base
	InitConfig
	recurrentBase
	Transition RecurrentBrick
	Attention  *SequenceContentAttention
	Distribute *Parallel
	inner      *RecurrentApp
	seqNames   []string // the transition's sequences without the mask
}

// NewAttentionRecurrent wraps transition with attention.
func NewAttentionRecurrent(cfg *Config, name string, transition Brick, attention *SequenceContentAttention) (*AttentionRecurrent, error) {
	tr, ok := transition.(RecurrentBrick)
	if !ok || tr.RecurrentApplication("apply") == nil {
		return nil, fmt.Errorf("AttentionRecurrent: the transition %s is not a recurrent brick", transition.BaseBrick().AnnotationName())
	}
	ta := tr.RecurrentApplication("apply")
	r := &AttentionRecurrent{Base: &Base{}, Transition: tr, Attention: attention, inner: ta}
	for _, s := range ta.Spec.Sequences {
		if s != "mask" {
			r.seqNames = append(r.seqNames, s)
		}
	}
	d, err := NewDistribute(cfg, "distribute", r.seqNames, "weighted_averages", nil, 0, nil)
	if err != nil {
		return nil, err
	}
	r.Distribute = d
	r.initBase(r, cfg, name, "AttentionRecurrent")
	r.SetChildren([]Brick{transition, attention, d})
	spec := RecurrentSpec{
		Sequences: ta.Spec.Sequences,
		States:    slices.Concat(ta.Spec.States, attentionGlimpseNames),
		Contexts:  slices.Concat(ta.Spec.Contexts, []string{"attended", "preprocessed_attended", "attended_mask"}),
		Outputs:   slices.Concat(ta.Spec.States, attentionGlimpseNames),
	}
	// do_apply's states are always given (apply fills them from the
	// attended sequence), so its Initial only has to have the right length.
	r.addRecurrent(r.Base, "do_apply", &RecurrentApp{Spec: spec, Step: r.step,
		Initial: func(*core.Variable, int) ([]*core.Variable, error) {
			return make([]*core.Variable, len(spec.States)), nil
		}})
	// apply: the public application; preprocesses the attended sequence.
	r.addApplication(&Application{Name: "apply", Inputs: slices.Concat(spec.Sequences, spec.States, ta.Spec.Contexts, []string{"attended", "attended_mask"}), Outputs: spec.Outputs,
		Fn: func(*core.ApplicationCall, []*core.Variable) ([]*core.Variable, error) {
			return nil, fmt.Errorf("call AttentionRecurrent.apply with keywords")
		}})
	return r, nil
}

// PushAllocationConfigHook sizes the attention and the distribute brick
// from the transition's dims.
func (r *AttentionRecurrent) PushAllocationConfigHook() error {
	gd, ok := r.Transition.(GetDimmer)
	if !ok {
		return fmt.Errorf("%s: the transition must answer get_dim", r.AnnotationName())
	}
	var sd []int
	for _, n := range r.Attention.StateNames {
		d, err := gd.GetDim(n)
		if err != nil {
			return err
		}
		sd = append(sd, d)
	}
	r.Attention.StateDims = sd
	r.Distribute.SourceDim = r.Attention.AttendedDim
	var td []int
	for _, n := range r.seqNames {
		d, err := gd.GetDim(n)
		if err != nil {
			return err
		}
		td = append(td, d)
	}
	r.Distribute.TargetDims = td
	return nil
}

// GetDim answers for glimpses, the attended sequence and the transition.
func (r *AttentionRecurrent) GetDim(name string) (int, error) {
	if slices.Contains(attentionGlimpseNames, name) || name == "attended" || name == "attended_mask" {
		return r.Attention.GetDim(name)
	}
	return r.Transition.(GetDimmer).GetDim(name)
}

// TakeGlimpses is the attention's look from the states (contexts: attended,
// preprocessed_attended, attended_mask).
// As in Blocks it is a call of the application take_glimpses.
func (r *AttentionRecurrent) TakeGlimpses(in map[string]*core.Variable) ([]*core.Variable, error) {
	return r.callNamed("take_glimpses", in, attentionGlimpseNames, func(in map[string]*core.Variable) ([]*core.Variable, error) {
		return r.Attention.TakeGlimpses(in["attended"], in["preprocessed_attended"], in["attended_mask"], in)
	})
}

// callNamed runs fn as a call of r's application app (callAs) on the
// named inputs in.
func (r *AttentionRecurrent) callNamed(app string, in map[string]*core.Variable, outNames []string, fn func(map[string]*core.Variable) ([]*core.Variable, error)) ([]*core.Variable, error) {
	names := sortedKeys(in)
	ins := make([]*core.Variable, len(names))
	for i, n := range names {
		ins[i] = in[n]
	}
	return callAs(r, app, names, ins, outNames, func(vs []*core.Variable) ([]*core.Variable, error) {
		m := make(map[string]*core.Variable, len(names))
		for i, n := range names {
			m[n] = vs[i]
		}
		return fn(m)
	})
}

// ComputeStates is one step of the transition with the glimpse
// distributed over its inputs (a call of the application compute_states,
// as in Blocks).
func (r *AttentionRecurrent) ComputeStates(in map[string]*core.Variable) ([]*core.Variable, error) {
	return r.callNamed("compute_states", in, r.inner.Spec.States, r.computeStates)
}

func (r *AttentionRecurrent) computeStates(in map[string]*core.Variable) ([]*core.Variable, error) {
	args := []*core.Variable{in["weighted_averages"]}
	for _, n := range r.seqNames {
		v, ok := in[n]
		if !ok {
			return nil, fmt.Errorf("%s: input %s is not given", r.AnnotationName(), n)
		}
		args = append(args, v)
	}
	dist, err := Apply(r.Distribute, "apply", args...)
	if err != nil {
		return nil, err
	}
	m := map[string]*core.Variable{}
	for i, n := range r.seqNames {
		m[n] = dist[i]
	}
	if v, ok := in["mask"]; ok {
		m["mask"] = v
	}
	for _, n := range slices.Concat(r.inner.Spec.States, r.inner.Spec.Contexts) {
		m[n] = in[n]
	}
	// Blocks: the transition's apply with iterate=False.
	res, err := ApplyRecurrent(r.Transition, "apply", m, RecurrentOptions{NoIterate: true})
	if err != nil {
		return nil, err
	}
	out := make([]*core.Variable, len(r.inner.Spec.States))
	for i, n := range r.inner.Spec.States {
		out[i] = res[slices.Index(r.inner.Spec.Outputs, n)]
	}
	return out, nil
}

func (r *AttentionRecurrent) step(in map[string]*core.Variable) ([]*core.Variable, error) {
	g, err := r.TakeGlimpses(in)
	if err != nil {
		return nil, err
	}
	m := copyMap(in)
	for i, n := range attentionGlimpseNames {
		m[n] = g[i]
	}
	s, err := r.ComputeStates(m)
	if err != nil {
		return nil, err
	}
	return append(s, g...), nil
}

// InitialStates are the transition's initial states and zero glimpses.
func (r *AttentionRecurrent) InitialStates(ref *core.Variable, axis int, attended *core.Variable) ([]*core.Variable, error) {
	s, err := r.inner.Initial(ref, axis)
	if err != nil {
		return nil, err
	}
	g, err := r.Attention.InitialGlimpses(attended)
	if err != nil {
		return nil, err
	}
	return append(s, g...), nil
}

// ApplyKeywords implements apply: preprocess the attended sequence once,
// then iterate do_apply (or run one step with iterate=False).
func (r *AttentionRecurrent) ApplyKeywords(app string, in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	if app != "apply" && app != "do_apply" {
		return nil, fmt.Errorf("%s has no application %s", r.AnnotationName(), app)
	}
	if !r.Allocated {
		if err := Allocate(r); err != nil {
			return nil, err
		}
	}
	in = copyMap(in)
	att, ok := in["attended"]
	if !ok {
		return nil, fmt.Errorf("%s.%s: attended is not given", r.AnnotationName(), app)
	}
	if _, ok := in["preprocessed_attended"]; !ok {
		p, err := r.Attention.PreprocessAttended(att)
		if err != nil {
			return nil, err
		}
		in["preprocessed_attended"] = p
	}
	if _, ok := in["attended_mask"]; !ok {
		w, err := core.Subtensor(att, []core.Index{{Slice: true}, {Slice: true}, {I: 0}})
		if err != nil {
			return nil, err
		}
		in["attended_mask"] = core.Add(core.Mul(w, core.Const(w.DType(), 0)), core.Const(w.DType(), 1))
	}
	// Initial states need the attended sequence: fill them here.
	var missing bool
	spec := r.rapps["do_apply"].Spec
	for _, n := range spec.States {
		if _, ok := in[n]; !ok {
			missing = true
		}
	}
	if missing || o.ReturnInitialStates {
		var ref *core.Variable
		for _, n := range spec.Sequences {
			if v, ok := in[n]; ok && n != "mask" {
				ref = v
				break
			}
		}
		if ref == nil {
			return nil, fmt.Errorf("%s: no sequence to take the batch size from", r.AnnotationName())
		}
		axis := 1
		if o.NoIterate {
			axis = 0
		}
		init, err := r.InitialStates(ref, axis, att)
		if err != nil {
			return nil, err
		}
		for i, n := range spec.States {
			if _, ok := in[n]; !ok {
				in[n] = init[i]
			}
		}
	}
	return ApplyRecurrent(r, "do_apply", in, o)
}

var _ KeywordApplier = (*AttentionRecurrent)(nil)
