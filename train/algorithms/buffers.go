package algorithms

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/core"
)

// nameBuffers collects the ALGORITHM_BUFFER shared variables the step
// rule's updates write, in update order, and gives each a unique,
// deterministic name: "<parameter name>_<buffer name>" (Blocks' buffer
// name, kept in Tag.Name, after the name of the parameter it was made
// for), e.g. "/mlp/linear_0.W_velocity". Parameters whose names collide
// get "_<position>" appended; an unnamed one is "parameter_<position>".
func nameBuffers(params []*core.Variable, updates []core.Update, paramName func(*core.Variable) string) []*core.Variable {
	if paramName == nil {
		paramName = func(p *core.Variable) string { return p.Name }
	}
	names := map[*core.Variable]string{}
	count := map[string]int{}
	for _, p := range params {
		count[paramName(p)]++
	}
	for i, p := range params {
		n := paramName(p)
		if n == "" {
			n = fmt.Sprintf("parameter_%d", i)
		} else if count[n] > 1 {
			n = fmt.Sprintf("%s_%d", n, i)
		}
		names[p] = n
	}
	var out []*core.Variable
	used := map[string]bool{}
	for _, u := range updates {
		b := u.Shared
		if !core.HasRole(b, core.AlgorithmBuffer) || slices.Contains(out, b) {
			continue
		}
		short := b.Tag.Name
		if short == "" {
			short = b.Name
			b.Tag.Name = short
		}
		name := short
		if p := b.Tag.ForParameter; p != nil && names[p] != "" {
			name = names[p] + "_" + short
		}
		if name == "" {
			name = "buffer"
		}
		for base, k := name, 1; used[name]; k++ {
			name = fmt.Sprintf("%s_%d", base, k)
		}
		used[name] = true
		b.Name = name
		out = append(out, b)
	}
	return out
}

// Buffers are the step rule's ALGORITHM_BUFFER shared variables (the
// algorithm's state: velocities, Adam's moments and time, ...), in the
// order of the step rule's updates. Their names are unique within the
// algorithm and deterministic ("<parameter name>_<buffer>"), so a
// checkpoint can store them keyed by name; Tag.Name keeps Blocks' short
// name ("velocity") and Tag.ForParameter the parameter.
func (g *GradientDescent) Buffers() []*core.Variable { return slices.Clone(g.buffers) }
