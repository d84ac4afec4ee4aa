package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
)

// WithBatchNormalization runs fn with every BatchNormalization brick among
// roots and their descendants in training mode (Blocks' batch_normalization
// context manager): applications made inside use minibatch statistics.
func WithBatchNormalization(roots []Brick, fn func() error) error {
	bns := FindBatchNormalizations(roots...)
	for _, b := range bns {
		b.Enter()
	}
	defer func() {
		for i := len(bns) - 1; i >= 0; i-- {
			bns[i].Exit()
		}
	}()
	return fn()
}

// bnCall is one application of a BatchNormalization brick found in a graph.
type bnCall struct {
	call          *core.ApplicationCall
	brick         *BatchNormalization
	input, output *core.Variable
}

// bnCalls lists the BatchNormalization.apply calls whose input and output
// are in g, in the graph's order.
func bnCalls(g *graph.ComputationGraph) []*bnCall {
	var out []*bnCall
	byCall := map[*core.ApplicationCall]*bnCall{}
	for _, v := range g.Variables {
		call := v.Tag.ApplicationCall
		if call == nil || call.Application != "apply" {
			continue
		}
		bn, ok := call.Brick.(*BatchNormalization)
		if !ok {
			continue
		}
		c := byCall[call]
		if c == nil {
			c = &bnCall{call: call, brick: bn}
			byCall[call] = c
			out = append(out, c)
		}
		switch {
		case core.HasRole(v, core.Input):
			c.input = v
		case core.HasRole(v, core.Output):
			c.output = v
		}
	}
	return out
}

// ApplyBatchNormalization is Blocks' apply_batch_normalization: a new graph
// in which every BatchNormalization application made in inference mode is
// made again in training mode on the same input, so that it normalizes by
// minibatch statistics. g is left unchanged (monitor it to see the
// population statistics at work).
func ApplyBatchNormalization(g *graph.ComputationGraph) (*graph.ComputationGraph, error) {
	repl := map[*core.Variable]*core.Variable{}
	for _, c := range bnCalls(g) {
		if training, _ := c.call.Metadata["training_mode"].(bool); training {
			continue
		}
		if c.input == nil || c.output == nil {
			return nil, fmt.Errorf("apply_batch_normalization: the graph holds only part of a call of %s", c.brick.AnnotationName())
		}
		// The application copied its input on the way in; apply again to
		// what was copied.
		unpacked := c.input
		if c.input.Kind() == core.KindOp && len(c.input.Inputs()) == 1 && c.input.Op().String() == "copy" {
			unpacked = c.input.Inputs()[0]
		}
		c.brick.Enter()
		outs, err := Apply(c.brick, "apply", unpacked)
		c.brick.Exit()
		if err != nil {
			return nil, fmt.Errorf("apply_batch_normalization: %v", err)
		}
		repl[c.output] = outs[0]
	}
	ng, err := g.Replace(repl)
	if err != nil {
		return nil, fmt.Errorf("apply_batch_normalization: %v", err)
	}
	return ng, nil
}

// BatchNormalizationUpdates is Blocks' get_batch_normalization_updates:
// for each training-mode BatchNormalization application in g, the pairs
// (population_mean, minibatch mean) and, unless mean_only,
// (population_stdev, minibatch standard deviation), each minibatch value
// without its batch axis. Used raw they overwrite the population statistics
// every step; scripts usually make a moving average of them, as Blocks'
// example does: p <- alpha*m + (1-alpha)*p.
//
// The minibatch values are taken from g itself (the offset and divisor
// variables of each call), so in a graph made by ApplyBatchNormalization a
// layer's statistics are computed with the layers below it in training
// mode too.
func BatchNormalizationUpdates(g *graph.ComputationGraph, allowDuplicates bool) ([]core.Update, error) {
	type stats struct{ offset, divisor *core.Variable }
	found := map[*core.ApplicationCall]*stats{}
	for _, v := range g.Variables {
		for _, a := range v.Tag.Annotations {
			call, ok := a.(*core.ApplicationCall)
			if !ok {
				continue
			}
			s := found[call]
			if s == nil {
				s = &stats{}
				found[call] = s
			}
			if core.HasRole(v, core.BatchNormOffset) {
				s.offset = v
			}
			if core.HasRole(v, core.BatchNormDivisor) {
				s.divisor = v
			}
		}
	}
	var updates []core.Update
	seen := map[*BatchNormalization]bool{}
	first := []core.Index{{I: 0}}
	for _, c := range bnCalls(g) {
		if training, _ := c.call.Metadata["training_mode"].(bool); !training || c.output == nil {
			continue
		}
		if seen[c.brick] && !allowDuplicates {
			return nil, fmt.Errorf("get_batch_normalization_updates: multiple applications of the same BatchNormalization brick; pass allow_duplicates = True to override this check (%s)", c.brick.AnnotationName())
		}
		seen[c.brick] = true
		pick := func(v *core.Variable, key string) (*core.Variable, error) {
			if v == nil {
				m, _ := c.call.Metadata[key].(*core.Variable)
				if m == nil {
					return nil, fmt.Errorf("get_batch_normalization_updates: no %s for %s", key, c.brick.AnnotationName())
				}
				return m, nil
			}
			return core.Subtensor(v, first)
		}
		s := found[c.call]
		if s == nil {
			s = &stats{}
		}
		m, err := pick(s.offset, "offset")
		if err != nil {
			return nil, err
		}
		updates = append(updates, core.Update{Shared: c.brick.PopulationMean, Value: m})
		if !c.brick.MeanOnly {
			d, err := pick(s.divisor, "divisor")
			if err != nil {
				return nil, err
			}
			updates = append(updates, core.Update{Shared: c.brick.PopulationStdev, Value: d})
		}
	}
	if len(updates) == 0 {
		return nil, fmt.Errorf("get_batch_normalization_updates: no training mode BatchNormalization applications found in graph")
	}
	return updates, nil
}
