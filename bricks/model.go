package bricks

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/nd"
)

// Model is Blocks' blocks.model.Model: the computation graph of some
// outputs, with its top bricks and its parameters named as Blocks names
// them (the brick's hierarchical path and the parameter's name,
// "/mlp/linear_0.W"; the plain name for a parameter no brick owns).
type Model struct {
	*graph.ComputationGraph
	topBricks []Brick
	names     []string
	params    map[string]*core.Variable
}

// NewModel builds the model of outputs. Its top bricks are Blocks': the
// bricks annotating the graph's variables and its loops' inner variables
// (Blocks' variables + scan_variables) that are no child of one of them,
// each once, in that order. It is an error for two top bricks to share a
// name, or two parameters a hierarchical name.
func NewModel(outputs []*core.Variable) (*Model, error) {
	m := &Model{ComputationGraph: graph.New(outputs), params: map[string]*core.Variable{}}
	var bs []Brick
	children := map[*Base]bool{}
	for _, v := range slices.Concat(m.Variables, m.ScanVariables()) {
		b, ok := graph.BrickOf(v).(Brick)
		if !ok || b == nil {
			continue
		}
		if !slices.Contains(bs, b) {
			bs = append(bs, b)
			for _, c := range b.BaseBrick().Children {
				children[c.BaseBrick()] = true
			}
		}
	}
	count := map[string]int{}
	for _, b := range bs {
		if !children[b.BaseBrick()] {
			m.topBricks = append(m.topBricks, b)
			count[b.BaseBrick().Name]++
		}
	}
	var rep []string
	for n, c := range count {
		if c > 1 {
			rep = append(rep, n)
		}
	}
	if len(rep) > 0 {
		sort.Strings(rep)
		return nil, fmt.Errorf("Model: top bricks with the same name: %s", strings.Join(rep, ", "))
	}
	for _, p := range m.Parameters() {
		name := ParameterPath(p)
		if _, dup := m.params[name]; dup {
			return nil, fmt.Errorf("Model: two parameters are named %s", name)
		}
		m.params[name] = p
		m.names = append(m.names, name)
	}
	return m, nil
}

// TopBricks are the bricks of the graph that are no other brick's child,
// in the graph's order (get_top_bricks; see NewModel).
func (m *Model) TopBricks() []Brick { return slices.Clone(m.topBricks) }

// ParameterNames are the parameters' hierarchical names, in the graph's
// order.
func (m *Model) ParameterNames() []string { return slices.Clone(m.names) }

// Parameter is the parameter of that name (nil if none).
func (m *Model) Parameter(name string) *core.Variable { return m.params[name] }

// ParameterValues returns a copy of every parameter's value by name
// (get_parameter_values).
func (m *Model) ParameterValues() map[string]*nd.Array {
	out := make(map[string]*nd.Array, len(m.names))
	for _, n := range m.names {
		out[n] = m.params[n].Value().Copy()
	}
	return out
}

// ShapeError is a value whose shape is not its parameter's.
type ShapeError struct {
	Name          string
	Expected, Got []int
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("shape mismatch for parameter %s: expected %v, got %v", e.Name, e.Expected, e.Got)
}

// SetParameterValues copies values into the parameters of those names
// (set_parameter_values), converting the dtype. The values are copied into
// the parameters' own arrays, so every compiled function sees them. Names
// the model does not have are returned in unknown and parameters without
// a value in missing (Blocks logs both); a wrong shape is a *ShapeError,
// and then nothing is set.
func (m *Model) SetParameterValues(values map[string]*nd.Array) (unknown, missing []string, err error) {
	for n := range values {
		if _, ok := m.params[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	sort.Strings(unknown)
	for _, n := range m.names {
		if _, ok := values[n]; !ok {
			missing = append(missing, n)
		}
	}
	for _, n := range m.names {
		v, ok := values[n]
		if !ok {
			continue
		}
		if want := m.params[n].Value().Shape; !nd.SameShape(want, v.Shape) {
			return unknown, missing, &ShapeError{Name: n, Expected: slices.Clone(want), Got: slices.Clone(v.Shape)}
		}
	}
	for _, n := range m.names {
		if v, ok := values[n]; ok {
			m.params[n].BeforeWrite()
			dst := m.params[n].Value()
			if v.DType() != dst.DType() {
				v = v.Astype(dst.DType())
			}
			if err := dst.CopyFrom(v); err != nil {
				return unknown, missing, fmt.Errorf("setting %s: %v", n, err)
			}
		}
	}
	return unknown, missing, nil
}
