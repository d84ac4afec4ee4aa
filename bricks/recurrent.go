package bricks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// RecurrentSpec is Blocks' @recurrent declaration: which inputs of the
// application are iterated over (sequences), carried from step to step
// (states) or given unchanged (contexts), and what it returns. Every state
// is also an output.
type RecurrentSpec struct {
	Sequences, States, Contexts, Outputs []string
}

// RecurrentOptions are the keywords the @recurrent wrapper adds to a call.
type RecurrentOptions struct {
	// NoIterate is iterate=False: one step, on per-step inputs.
	NoIterate bool
	// Reverse iterates from the end; the outputs are in iteration order.
	Reverse bool
	// ReturnInitialStates prepends the initial states to the stacked states.
	ReturnInitialStates bool
	// LowMemory is RecurrentStack's low_memory=True: all layers in one
	// scan rather than one scan per layer (the same values).
	LowMemory bool
	// NSteps and BatchSize are Blocks' n_steps and batch_size: the
	// number of steps and the batch size of a call without sequences.
	NSteps, BatchSize int
}

// StepFunc computes one step from named per-step inputs (a missing
// optional sequence, such as the mask, is absent from the map). It returns
// the outputs in the order of the spec's Outputs.
type StepFunc func(in map[string]*core.Variable) ([]*core.Variable, error)

// InitialStatesFunc returns the initial states (in the order of the spec's
// States) for the batch size of ref's axis.
type InitialStatesFunc func(ref *core.Variable, axis int) ([]*core.Variable, error)

// RecurrentApp is a recurrent application of a brick.
type RecurrentApp struct {
	Spec    RecurrentSpec
	Step    StepFunc
	Initial InitialStatesFunc
	// fused, when set, iterates over whole sequences in one op
	// (recurrent_fused.go); it may decline (nil outputs).
	fused fusedSequenceFunc
}

// recurrentBase is embedded by bricks with recurrent applications.
type recurrentBase struct {
	rapps map[string]*RecurrentApp
}

// RecurrentApplication returns the named recurrent application (nil if
// the application is not recurrent).
func (r *recurrentBase) RecurrentApplication(name string) *RecurrentApp { return r.rapps[name] }

// RecurrentBrick is a brick with recurrent applications.
type RecurrentBrick interface {
	Brick
	RecurrentApplication(name string) *RecurrentApp
}

// addRecurrent registers a recurrent application on b, also as an ordinary
// application taking every input positionally (sequences, states,
// contexts; all required).
func (r *recurrentBase) addRecurrent(b *Base, name string, ra *RecurrentApp) {
	if r.rapps == nil {
		r.rapps = map[string]*RecurrentApp{}
	}
	r.rapps[name] = ra
	inputs := slices.Concat(ra.Spec.Sequences, ra.Spec.States, ra.Spec.Contexts)
	b.addApplication(&Application{Name: name, Inputs: inputs, Outputs: ra.Spec.Outputs,
		Fn: func(call *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			m := map[string]*core.Variable{}
			for i, n := range inputs {
				m[n] = in[i]
			}
			return runRecurrent(b, name, ra, call, m, RecurrentOptions{})
		}})
}

// ApplyRecurrent calls a recurrent application with named inputs (Blocks'
// keyword call brick.apply(inputs=x, mask=m, iterate=..., reverse=...)).
// Missing states start from the brick's initial states; a missing mask
// means all ones. The inputs and outputs are tagged as by Apply.
func ApplyRecurrent(br Brick, name string, inputs map[string]*core.Variable, opts RecurrentOptions) ([]*core.Variable, error) {
	rb, ok := br.(RecurrentBrick)
	b := br.BaseBrick()
	var ra *RecurrentApp
	if ok {
		ra = rb.RecurrentApplication(name)
	}
	if ra == nil {
		return nil, fmt.Errorf("%s has no recurrent application %s", b.AnnotationName(), name)
	}
	if !b.Allocated {
		if err := Allocate(br); err != nil {
			return nil, err
		}
	}
	known := slices.Concat(ra.Spec.Sequences, ra.Spec.States, ra.Spec.Contexts)
	call := &core.ApplicationCall{Brick: br.(core.Annotation), Application: name, Metadata: map[string]any{}, ID: callIDs.Add(1)}
	tagged := map[string]*core.Variable{}
	for _, n := range sortedKeys(inputs) {
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("%s.%s got an unexpected input %s (it takes %s)", b.AnnotationName(), name, n, strings.Join(known, ", "))
		}
		tagged[n] = tag(inputs[n], b, name, n, call, core.Input)
	}
	outs, err := runRecurrent(b, name, ra, call, tagged, opts)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", b.AnnotationName(), name, err)
	}
	for i, o := range outs {
		outs[i] = tag(o, b, name, ra.Spec.Outputs[i], call, core.Output)
	}
	return outs, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// runRecurrent is the @recurrent wrapper: initial states, then one step or
// a scan over the sequences.
func runRecurrent(b *Base, name string, ra *RecurrentApp, call *core.ApplicationCall, in map[string]*core.Variable, opts RecurrentOptions) ([]*core.Variable, error) {
	spec := ra.Spec
	var ref *core.Variable
	var seqNames []string
	for _, n := range spec.Sequences {
		if v, ok := in[n]; ok {
			seqNames = append(seqNames, n)
			if ref == nil && n != "mask" {
				ref = v
			}
		}
	}
	if ref == nil && len(seqNames) > 0 {
		ref = in[seqNames[0]]
	}
	axis := 1
	if opts.NoIterate {
		axis = 0
	}
	if ref == nil && opts.BatchSize > 0 {
		// No sequence: the initial states take the batch size from a
		// stand-in of that length.
		ref, axis = core.NewConstant(nd.New(nd.Float64, opts.BatchSize)), 0
	}
	for _, n := range seqNames {
		want := 2 + axis // (time, batch, features), or (batch, features) for one step
		if n == "mask" {
			want--
		}
		if nd := in[n].NDim(); nd != want {
			shape := "(time, batch, features)"
			switch {
			case n == "mask" && axis == 1:
				shape = "(time, batch)"
			case n == "mask":
				shape = "(batch,)"
			case axis == 0:
				shape = "(batch, features)"
			}
			return nil, fmt.Errorf("%s must be %d-d %s, got the %d-d %s%s", n, want, shape, nd, untagged(in[n]), map[bool]string{true: " (for one step pass iterate=False)", false: ""}[axis == 1 && nd == want-1])
		}
	}
	var missing []string
	for _, n := range spec.States {
		if _, ok := in[n]; !ok {
			missing = append(missing, n)
		}
	}
	var initial []*core.Variable
	if len(missing) > 0 || opts.ReturnInitialStates {
		if ref == nil {
			return nil, fmt.Errorf("states %s are not given and there is no sequence to take the batch size from", strings.Join(missing, ", "))
		}
		if ref.NDim() <= axis {
			return nil, fmt.Errorf("sequence %s is %d-d; want (time, batch, ...) when iterating, (batch, ...) for one step", ref, ref.NDim())
		}
		init, err := ra.Initial(ref, axis)
		if err != nil {
			return nil, err
		}
		for i, n := range spec.States {
			if v, ok := in[n]; ok {
				init[i] = v
			} else {
				in[n] = init[i]
			}
		}
		initial = init
	}
	for _, n := range spec.Contexts {
		if _, ok := in[n]; !ok {
			return nil, fmt.Errorf("context %s is not given", n)
		}
	}
	if opts.NoIterate {
		return ra.Step(in)
	}
	if len(seqNames) == 0 && opts.NSteps <= 0 {
		return nil, fmt.Errorf("no sequence is given (it takes %s); to compute one step pass iterate=False, or give n_steps and batch_size", strings.Join(spec.Sequences, ", "))
	}
	if ra.fused != nil && len(spec.Contexts) == 0 {
		outs, err := ra.fused(in, opts.Reverse)
		if err != nil {
			return nil, err
		}
		if outs != nil {
			return withInitialStates(spec, outs, initial, opts)
		}
	}
	spec2 := core.ScanSpec{Reverse: opts.Reverse, NSteps: opts.NSteps, Name: fmt.Sprintf("%s_%s_scan", b.Name, name)}
	for _, n := range seqNames {
		spec2.Sequences = append(spec2.Sequences, in[n])
	}
	for _, n := range spec.States {
		spec2.States = append(spec2.States, in[n])
	}
	for _, n := range spec.Contexts {
		spec2.Contexts = append(spec2.Contexts, in[n])
	}
	stateOut := make([]int, len(spec.States)) // index in Outputs
	for i, n := range spec.States {
		stateOut[i] = slices.Index(spec.Outputs, n)
		if stateOut[i] < 0 {
			return nil, fmt.Errorf("state %s is not among the outputs %v", n, spec.Outputs)
		}
	}
	var extra []int
	for j, n := range spec.Outputs {
		if !slices.Contains(spec.States, n) {
			extra = append(extra, j)
		}
	}
	states, outs, err := core.Scan(spec2, func(seqs, st, ctx []*core.Variable) ([]*core.Variable, []*core.Variable, error) {
		m := map[string]*core.Variable{}
		for i, n := range seqNames {
			m[n] = seqs[i]
		}
		for i, n := range spec.States {
			m[n] = st[i]
		}
		for i, n := range spec.Contexts {
			m[n] = ctx[i]
		}
		res, err := ra.Step(m)
		if err != nil {
			return nil, nil, err
		}
		if len(res) != len(spec.Outputs) {
			return nil, nil, fmt.Errorf("the step returned %d outputs, want %d (%v)", len(res), len(spec.Outputs), spec.Outputs)
		}
		ns := make([]*core.Variable, len(spec.States))
		for i, j := range stateOut {
			ns[i] = res[j]
		}
		var ex []*core.Variable
		for _, j := range extra {
			ex = append(ex, res[j])
		}
		return ns, ex, nil
	})
	if err != nil {
		return nil, err
	}
	result := make([]*core.Variable, len(spec.Outputs))
	for i, j := range stateOut {
		result[j] = states[i]
	}
	for k, j := range extra {
		result[j] = outs[k]
	}
	return withInitialStates(spec, result, initial, opts)
}

// withInitialStates prepends the initial states to the stacked states
// among the outputs when asked (return_initial_states).
func withInitialStates(spec RecurrentSpec, result, initial []*core.Variable, opts RecurrentOptions) ([]*core.Variable, error) {
	if !opts.ReturnInitialStates {
		return result, nil
	}
	for i, n := range spec.States {
		j := slices.Index(spec.Outputs, n)
		pat := []int{-1}
		for d := 0; d < initial[i].NDim(); d++ {
			pat = append(pat, d)
		}
		first, err := core.Dimshuffle(initial[i], pat)
		if err != nil {
			return nil, err
		}
		if result[j], err = core.Concatenate([]*core.Variable{first, result[j]}, 0); err != nil {
			return nil, err
		}
	}
	return result, nil
}

// untagged is the variable a brick's input copy was made from, through
// the copies of nested application calls (for messages that name what the
// user passed).
func untagged(v *core.Variable) *core.Variable {
	for v.Kind() == core.KindOp && v.Op().String() == "copy" && len(v.Inputs()) == 1 {
		v = v.Inputs()[0]
	}
	return v
}

// applyMask is Blocks' mask[:, None] * new + (1 - mask[:, None]) * old:
// where the mask is 0 the state is kept.
func applyMask(mask, next, prev *core.Variable) (*core.Variable, error) {
	if mask == nil {
		return next, nil
	}
	pat := []int{0}
	for d := 1; d < next.NDim(); d++ {
		pat = append(pat, -1)
	}
	m, err := core.Dimshuffle(mask, pat)
	if err != nil {
		return nil, err
	}
	if m.DType() != next.DType() {
		m = core.Cast(m, next.DType())
	}
	return core.Add(core.Mul(m, next), core.Mul(core.Sub(core.Const(m.DType(), 1), m), prev)), nil
}

// sliceLast is x[..., no*dim:(no+1)*dim].
func sliceLast(x *core.Variable, no, dim int) (*core.Variable, error) {
	return core.SliceLast(x, no*dim, (no+1)*dim)
}

func applyBrick(b Brick, x *core.Variable) (*core.Variable, error) {
	out, err := Apply(b, "apply", x)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// initialRepeat repeats each parameter over the batch size of ref's axis.
func initialRepeat(ps ...*core.Variable) InitialStatesFunc {
	return func(ref *core.Variable, axis int) ([]*core.Variable, error) {
		out := make([]*core.Variable, len(ps))
		for i, p := range ps {
			v, err := core.RepeatLike(p, ref, axis)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
}

func (b *Base) zeroParameter(name string, role *core.Role, shape ...int) *core.Variable {
	p := b.newParameter(name, role, shape...)
	for i := range p.Value().Size() {
		p.Value().SetFlat(i, 0)
	}
	return p
}

// GetDimmer answers Blocks' get_dim(name) for an application input.
type GetDimmer interface {
	GetDim(name string) (int, error)
}

// missingDim names dim when it is not set (0).
func missingDim(d int) []string {
	if d == 0 {
		return []string{"dim"}
	}
	return nil
}

// SimpleRecurrent is h(t) = activation(inputs(t) + h(t-1)·W).
type SimpleRecurrent struct {
	*Base
	InitConfig
	recurrentBase
	// Dim is the dimension of the hidden state (0: unset, a parent
	// pushes it).
	Dim             int
	W, InitialState *core.Variable
	Activation      Brick
}

// NewSimpleRecurrent makes a SimpleRecurrent brick (dim 0: lazy).
func NewSimpleRecurrent(cfg *Config, name string, dim int, activation Brick) *SimpleRecurrent {
	s := &SimpleRecurrent{Base: &Base{}, Activation: activation}
	s.initBase(s, cfg, name, "SimpleRecurrent")
	s.Dim = dim
	s.SetChildren([]Brick{activation})
	s.addRecurrent(s.Base, "apply", &RecurrentApp{
		Spec: RecurrentSpec{Sequences: []string{"inputs", "mask"}, States: []string{"states"}, Outputs: []string{"states"}},
		Step: s.step,
		Initial: func(ref *core.Variable, axis int) ([]*core.Variable, error) {
			return initialRepeat(s.InitialState)(ref, axis)
		},
	})
	return s
}

// GetDim is the dimension of an input (0 for the mask).
func (s *SimpleRecurrent) GetDim(name string) (int, error) {
	switch name {
	case "mask":
		return 0, nil
	case "inputs", "states":
		return s.Dim, nil
	}
	return 0, fmt.Errorf("%s has no input %s", s.AnnotationName(), name)
}

// AllocateHook creates W and initial_state.
func (s *SimpleRecurrent) AllocateHook() error {
	d := s.Dim
	s.W = s.newParameter("W", core.Weight, d, d)
	s.InitialState = s.zeroParameter("initial_state", core.InitialState, d)
	return nil
}

// InitializeHook draws W.
func (s *SimpleRecurrent) InitializeHook() error {
	return s.initWith(s.W, s.WeightsInit, "weights_init")
}

func (s *SimpleRecurrent) step(in map[string]*core.Variable) ([]*core.Variable, error) {
	x, h := in["inputs"], in["states"]
	hw, err := core.Dot(h, s.W)
	if err != nil {
		return nil, err
	}
	next, err := applyBrick(s.Activation, core.Add(x, hw))
	if err != nil {
		return nil, err
	}
	next, err = applyMask(in["mask"], next, h)
	return one(next), err
}

// gatedDefaults fills in the gated recurrent bricks' default
// activations: Tanh, and Logistic for the gates.
func gatedDefaults(cfg *Config, activation, gateActivation Brick) (Brick, Brick) {
	if activation == nil {
		activation = NewTanh(cfg, "")
	}
	if gateActivation == nil {
		gateActivation = NewLogistic(cfg, "")
	}
	return activation, gateActivation
}

// LSTM is Blocks' LSTM: inputs of 4·dim split into input, forget, cell and
// output parts; diagonal peepholes (input and forget gates see c(t-1), the
// output gate c(t)).
type LSTM struct {
	*Base
	InitConfig
	recurrentBase
	// Dim is the dimension of the hidden state (0: unset, a parent
	// pushes it).
	Dim                                                                      int
	WState, WCellToIn, WCellToForget, WCellToOut, InitialState, InitialCells *core.Variable
	Activation, GateActivation                                               Brick
}

// NewLSTM makes an LSTM (nil activations: Tanh and Logistic).
func NewLSTM(cfg *Config, name string, dim int, activation, gateActivation Brick) *LSTM {
	activation, gateActivation = gatedDefaults(cfg, activation, gateActivation)
	l := &LSTM{Base: &Base{}, Activation: activation, GateActivation: gateActivation}
	l.initBase(l, cfg, name, "LSTM")
	l.Dim = dim
	l.SetChildren([]Brick{activation, gateActivation})
	l.addRecurrent(l.Base, "apply", &RecurrentApp{
		Spec: RecurrentSpec{Sequences: []string{"inputs", "mask"}, States: []string{"states", "cells"}, Outputs: []string{"states", "cells"}},
		Step: l.step,
		Initial: func(ref *core.Variable, axis int) ([]*core.Variable, error) {
			return initialRepeat(l.InitialState, l.InitialCells)(ref, axis)
		},
		fused: l.fusedSequence,
	})
	return l
}

// GetDim is the dimension of an input: 4·dim for inputs.
func (l *LSTM) GetDim(name string) (int, error) {
	switch name {
	case "mask":
		return 0, nil
	case "inputs":
		return 4 * l.Dim, nil
	case "states", "cells":
		return l.Dim, nil
	}
	return 0, fmt.Errorf("%s has no input %s", l.AnnotationName(), name)
}

// AllocateHook creates the parameters in Blocks' order.
func (l *LSTM) AllocateHook() error {
	d := l.Dim
	l.WState = l.newParameter("W_state", core.Weight, d, 4*d)
	l.WCellToIn = l.newParameter("W_cell_to_in", core.Weight, d)
	l.WCellToForget = l.newParameter("W_cell_to_forget", core.Weight, d)
	l.WCellToOut = l.newParameter("W_cell_to_out", core.Weight, d)
	l.InitialState = l.zeroParameter("initial_state", core.InitialState, d)
	l.InitialCells = l.zeroParameter("initial_cells", core.InitialState, d)
	return nil
}

// InitializeHook draws the four weights, in order.
func (l *LSTM) InitializeHook() error {
	for _, p := range []*core.Variable{l.WState, l.WCellToIn, l.WCellToForget, l.WCellToOut} {
		if err := l.initWith(p, l.WeightsInit, "weights_init"); err != nil {
			return err
		}
	}
	return nil
}

func (l *LSTM) step(in map[string]*core.Variable) ([]*core.Variable, error) {
	d := l.Dim
	x, h, c := in["inputs"], in["states"], in["cells"]
	hw, err := core.Dot(h, l.WState)
	if err != nil {
		return nil, err
	}
	act := core.Add(hw, x)
	part := make([]*core.Variable, 4)
	for i := range part {
		if part[i], err = sliceLast(act, i, d); err != nil {
			return nil, err
		}
	}
	gate := func(x *core.Variable) (*core.Variable, error) { return applyBrick(l.GateActivation, x) }
	inGate, err := gate(core.Add(part[0], core.Mul(c, l.WCellToIn)))
	if err != nil {
		return nil, err
	}
	forgetGate, err := gate(core.Add(part[1], core.Mul(c, l.WCellToForget)))
	if err != nil {
		return nil, err
	}
	cand, err := applyBrick(l.Activation, part[2])
	if err != nil {
		return nil, err
	}
	nextC := core.Add(core.Mul(forgetGate, c), core.Mul(inGate, cand))
	outGate, err := gate(core.Add(part[3], core.Mul(nextC, l.WCellToOut)))
	if err != nil {
		return nil, err
	}
	ac, err := applyBrick(l.Activation, nextC)
	if err != nil {
		return nil, err
	}
	nextH := core.Mul(outGate, ac)
	if nextH, err = applyMask(in["mask"], nextH, h); err != nil {
		return nil, err
	}
	if nextC, err = applyMask(in["mask"], nextC, c); err != nil {
		return nil, err
	}
	return []*core.Variable{nextH, nextC}, nil
}

// GatedRecurrent is Blocks' GRU: gate_inputs of 2·dim (update, reset);
// h' = act((h·r)·U + inputs), h = h'·u + h·(1-u).
type GatedRecurrent struct {
	*Base
	InitConfig
	recurrentBase
	// Dim is the dimension of the hidden state (0: unset, a parent
	// pushes it).
	Dim                                      int
	StateToState, StateToGates, InitialState *core.Variable
	Activation, GateActivation               Brick
}

// NewGatedRecurrent makes a GatedRecurrent (nil activations: Tanh and
// Logistic).
func NewGatedRecurrent(cfg *Config, name string, dim int, activation, gateActivation Brick) *GatedRecurrent {
	activation, gateActivation = gatedDefaults(cfg, activation, gateActivation)
	g := &GatedRecurrent{Base: &Base{}, Activation: activation, GateActivation: gateActivation}
	g.initBase(g, cfg, name, "GatedRecurrent")
	g.Dim = dim
	g.SetChildren([]Brick{activation, gateActivation})
	g.addRecurrent(g.Base, "apply", &RecurrentApp{
		Spec: RecurrentSpec{Sequences: []string{"mask", "inputs", "gate_inputs"}, States: []string{"states"}, Outputs: []string{"states"}},
		Step: g.step,
		Initial: func(ref *core.Variable, axis int) ([]*core.Variable, error) {
			return initialRepeat(g.InitialState)(ref, axis)
		},
		fused: g.fusedSequence,
	})
	return g
}

// GetDim is the dimension of an input: 2·dim for gate_inputs.
func (g *GatedRecurrent) GetDim(name string) (int, error) {
	switch name {
	case "mask":
		return 0, nil
	case "inputs", "states":
		return g.Dim, nil
	case "gate_inputs":
		return 2 * g.Dim, nil
	}
	return 0, fmt.Errorf("%s has no input %s", g.AnnotationName(), name)
}

// AllocateHook creates state_to_state, state_to_gates and initial_state.
func (g *GatedRecurrent) AllocateHook() error {
	d := g.Dim
	g.StateToState = g.newParameter("state_to_state", core.Weight, d, d)
	g.StateToGates = g.newParameter("state_to_gates", core.Weight, d, 2*d)
	g.InitialState = g.zeroParameter("initial_state", core.InitialState, d)
	return nil
}

// InitializeHook draws state_to_state, then the update and reset blocks
// of state_to_gates separately, as Blocks does.
func (g *GatedRecurrent) InitializeHook() error {
	if err := g.initWith(g.StateToState, g.WeightsInit, "weights_init"); err != nil {
		return err
	}
	s := g.WeightsInit
	d := g.Dim
	upd, err := s.Generate(g.RNG(), []int{d, d})
	if err != nil {
		return err
	}
	rst, err := s.Generate(g.RNG(), []int{d, d})
	if err != nil {
		return err
	}
	v := g.StateToGates.Value()
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			v.SetFlat(i*2*d+j, upd.Flat(i*d+j))
			v.SetFlat(i*2*d+d+j, rst.Flat(i*d+j))
		}
	}
	return nil
}

func (g *GatedRecurrent) step(in map[string]*core.Variable) ([]*core.Variable, error) {
	d := g.Dim
	h := in["states"]
	hg, err := core.Dot(h, g.StateToGates)
	if err != nil {
		return nil, err
	}
	gates, err := applyBrick(g.GateActivation, core.Add(hg, in["gate_inputs"]))
	if err != nil {
		return nil, err
	}
	upd, err := sliceLast(gates, 0, d)
	if err != nil {
		return nil, err
	}
	rst, err := sliceLast(gates, 1, d)
	if err != nil {
		return nil, err
	}
	hr, err := core.Dot(core.Mul(h, rst), g.StateToState)
	if err != nil {
		return nil, err
	}
	next, err := applyBrick(g.Activation, core.Add(hr, in["inputs"]))
	if err != nil {
		return nil, err
	}
	next = core.Add(core.Mul(next, upd), core.Mul(h, core.Sub(core.Const(upd.DType(), 1), upd)))
	next, err = applyMask(in["mask"], next, h)
	return one(next), err
}

// CloneRecurrent copies a recurrent brick's configuration into a new brick
// named name (Blocks' copy.deepcopy of a prototype, before allocation).
// Activation children are shared: they have no parameters.
func CloneRecurrent(proto Brick, name string) (Brick, error) {
	pb := proto.BaseBrick()
	if pb.Allocated {
		return nil, fmt.Errorf("%s: a prototype must not be allocated yet", pb.AnnotationName())
	}
	var out Brick
	switch p := proto.(type) {
	case *SimpleRecurrent:
		out = NewSimpleRecurrent(pb.cfg, name, p.Dim, p.Activation)
	case *LSTM:
		out = NewLSTM(pb.cfg, name, p.Dim, p.Activation, p.GateActivation)
	case *GatedRecurrent:
		out = NewGatedRecurrent(pb.cfg, name, p.Dim, p.Activation, p.GateActivation)
	default:
		return nil, fmt.Errorf("cannot copy %s (supported prototypes: SimpleRecurrent, LSTM, GatedRecurrent)", pb.AnnotationName())
	}
	*out.(Initializable).Initialization() = proto.(Initializable).Initialization().clone()
	return out, nil
}

// Bidirectional runs a copy of its prototype forward and another backward
// and concatenates their outputs on the last axis (children forward,
// backward).
type Bidirectional struct {
	*Base
	InitConfig
	Forward, Backward Brick
	// Prototype is the brick the children were copied from (not a child).
	Prototype Brick
}

// NewBidirectional makes a Bidirectional brick from a recurrent prototype.
func NewBidirectional(cfg *Config, name string, prototype Brick) (*Bidirectional, error) {
	fw, err := CloneRecurrent(prototype, "forward")
	if err != nil {
		return nil, fmt.Errorf("Bidirectional: %w", err)
	}
	bw, err := CloneRecurrent(prototype, "backward")
	if err != nil {
		return nil, fmt.Errorf("Bidirectional: %w", err)
	}
	b := &Bidirectional{Base: &Base{}, Forward: fw, Backward: bw, Prototype: prototype}
	b.initBase(b, cfg, name, "Bidirectional")
	b.SetChildren([]Brick{fw, bw})
	ra := fw.(RecurrentBrick).RecurrentApplication("apply")
	inputs := slices.Concat(ra.Spec.Sequences, ra.Spec.States, ra.Spec.Contexts)
	b.addApplication(&Application{Name: "apply", Inputs: inputs, Outputs: ra.Spec.Outputs,
		Fn: func(call *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			m := map[string]*core.Variable{}
			for i, n := range inputs {
				m[n] = in[i]
			}
			return b.apply(m)
		}})
	return b, nil
}

// GetDim is Blocks' Bidirectional.get_dim: twice the child's for an
// output (forward and backward concatenated), the child's otherwise.
func (b *Bidirectional) GetDim(name string) (int, error) {
	gd, ok := b.Forward.(GetDimmer)
	if !ok {
		return 0, fmt.Errorf("%s: its transition does not answer get_dim", b.AnnotationName())
	}
	d, err := gd.GetDim(name)
	if err != nil {
		return 0, err
	}
	if slices.Contains(b.Application("apply").Outputs, name) {
		d *= 2
	}
	return d, nil
}

// ApplyKeywords calls apply with named inputs (states optional).
func (b *Bidirectional) ApplyKeywords(app string, inputs map[string]*core.Variable, _ RecurrentOptions) ([]*core.Variable, error) {
	if app != "apply" {
		return nil, fmt.Errorf("%s has no application %s", b.AnnotationName(), app)
	}
	if !b.Allocated {
		if err := Allocate(b); err != nil {
			return nil, err
		}
	}
	call := &core.ApplicationCall{Brick: b, Application: app, Metadata: map[string]any{}, ID: callIDs.Add(1)}
	tagged := map[string]*core.Variable{}
	for n, v := range inputs {
		tagged[n] = tag(v, b.Base, app, n, call, core.Input)
	}
	outs, err := b.apply(tagged)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", b.AnnotationName(), app, err)
	}
	names := b.Application(app).Outputs
	for i, o := range outs {
		outs[i] = tag(o, b.Base, app, names[i], call, core.Output)
	}
	return outs, nil
}

func (b *Bidirectional) apply(in map[string]*core.Variable) ([]*core.Variable, error) {
	fw, err := ApplyRecurrent(b.Forward, "apply", copyMap(in), RecurrentOptions{})
	if err != nil {
		return nil, err
	}
	bw, err := ApplyRecurrent(b.Backward, "apply", copyMap(in), RecurrentOptions{Reverse: true})
	if err != nil {
		return nil, err
	}
	out := make([]*core.Variable, len(fw))
	for i := range fw {
		neg := -1
		r, err := core.Subtensor(bw[i], []core.Index{{Slice: true, Step: &neg}})
		if err != nil {
			return nil, err
		}
		if out[i], err = core.Concatenate([]*core.Variable{fw[i], r}, -1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func copyMap(m map[string]*core.Variable) map[string]*core.Variable {
	c := make(map[string]*core.Variable, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// ApplyKeywords implements KeywordApplier.
func (s *SimpleRecurrent) ApplyKeywords(app string, in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	return ApplyRecurrent(s, app, in, o)
}

// ApplyKeywords implements KeywordApplier.
func (l *LSTM) ApplyKeywords(app string, in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	return ApplyRecurrent(l, app, in, o)
}

// ApplyKeywords implements KeywordApplier.
func (g *GatedRecurrent) ApplyKeywords(app string, in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	return ApplyRecurrent(g, app, in, o)
}

// KeywordApplier is a brick whose applications take inputs by name, some
// optional, and the @recurrent options (the Starlark face calls it for
// keyword calls such as lstm.apply(inputs=x, mask=m, reverse=True)).
type KeywordApplier interface {
	Brick
	ApplyKeywords(app string, inputs map[string]*core.Variable, opts RecurrentOptions) ([]*core.Variable, error)
}

var (
	_ KeywordApplier = (*SimpleRecurrent)(nil)
	_ KeywordApplier = (*LSTM)(nil)
	_ KeywordApplier = (*GatedRecurrent)(nil)
	_ KeywordApplier = (*Bidirectional)(nil)
)

// LookupTable maps integer indices to rows of W (Length, Dim).
type LookupTable struct {
	*Base
	InitConfig
	// Length is the number of rows (the vocabulary size), Dim the
	// dimension of the embeddings; 0 is unset.
	Length, Dim int
	W           *core.Variable
}

// NewLookupTable makes a LookupTable (0 means unset).
func NewLookupTable(cfg *Config, name string, length, dim int) *LookupTable {
	l := &LookupTable{Base: &Base{}}
	l.initBase(l, cfg, name, "LookupTable")
	l.Length, l.Dim = length, dim
	l.addApplication(&Application{Name: "apply", Inputs: []string{"indices"}, Outputs: []string{"output"},
		Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			if in[0].DType().IsFloat() {
				return nil, fmt.Errorf("indices must be integers, got %s %s", in[0].DType(), in[0])
			}
			y, err := core.Take(l.W, in[0])
			return one(y), err
		}})
	return l
}

// AllocateHook creates W.
func (l *LookupTable) AllocateHook() error {
	l.W = l.newParameter("W", core.Weight, l.Length, l.Dim)
	return nil
}

// InitializeHook draws W.
func (l *LookupTable) InitializeHook() error {
	return l.initWith(l.W, l.WeightsInit, "weights_init")
}

func (s *SimpleRecurrent) missingAllocation() []string { return missingDim(s.Dim) }

func (l *LSTM) missingAllocation() []string { return missingDim(l.Dim) }

func (g *GatedRecurrent) missingAllocation() []string { return missingDim(g.Dim) }

func (l *LookupTable) missingAllocation() []string {
	var m []string
	if l.Length == 0 {
		m = append(m, "length")
	}
	if l.Dim == 0 {
		m = append(m, "dim")
	}
	return m
}
