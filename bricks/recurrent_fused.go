package bricks

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu"
)

// Fused sequences: an LSTM or GatedRecurrent with its default activations
// (Tanh, Logistic) iterated over a sequence runs as one fused core op
// (core.LSTMSequence, core.GRUSequence) instead of a Scan of its step
// graph: the same outputs (the same bits forward), a fraction of the
// time. The step graph remains for one step at a time (iterate=False,
// sequence generators) and for other activations. BLOCKS_NOFUSE=1 (core's
// switch for comparisons) keeps the Scan.

// fusedSequenceFunc runs a recurrent application over whole sequences in
// one op; it returns nil outputs when it does not apply.
type fusedSequenceFunc func(in map[string]*core.Variable, reverse bool) ([]*core.Variable, error)

// defaultActivations says whether act and gate are Tanh and Logistic.
func defaultActivations(act, gate Brick) bool {
	return cpu.FusionEnabled() && act != nil && gate != nil &&
		act.BaseBrick().Class() == "Tanh" && gate.BaseBrick().Class() == "Logistic"
}

// fusedMask is the mask in the sequences' dtype, or nil.
func fusedMask(in map[string]*core.Variable, like *core.Variable) *core.Variable {
	m, ok := in["mask"]
	if !ok || m == nil {
		return nil
	}
	if m.DType() != like.DType() {
		m = core.Cast(m, like.DType())
	}
	return m
}

func (l *LSTM) fusedSequence(in map[string]*core.Variable, reverse bool) ([]*core.Variable, error) {
	x := in["inputs"]
	if !defaultActivations(l.Activation, l.GateActivation) || x == nil || x.NDim() != 3 {
		return nil, nil
	}
	h0, c0 := in["states"], in["cells"]
	if h0.NDim() != 2 || c0.NDim() != 2 || h0.DType() != x.DType() || c0.DType() != x.DType() || l.WState.DType() != x.DType() {
		return nil, nil
	}
	h, c, err := core.LSTMSequence(x, h0, c0, l.WState, l.WCellToIn, l.WCellToForget, l.WCellToOut, fusedMask(in, x), reverse)
	if err != nil {
		return nil, err
	}
	return []*core.Variable{h, c}, nil
}

func (g *GatedRecurrent) fusedSequence(in map[string]*core.Variable, reverse bool) ([]*core.Variable, error) {
	x, xg := in["inputs"], in["gate_inputs"]
	if !defaultActivations(g.Activation, g.GateActivation) || x == nil || xg == nil || x.NDim() != 3 || xg.NDim() != 3 {
		return nil, nil
	}
	h0 := in["states"]
	if h0.NDim() != 2 || h0.DType() != x.DType() || xg.DType() != x.DType() || g.StateToState.DType() != x.DType() {
		return nil, nil
	}
	h, err := core.GRUSequence(x, xg, h0, g.StateToState, g.StateToGates, fusedMask(in, x), reverse)
	if err != nil {
		return nil, err
	}
	return []*core.Variable{h}, nil
}
