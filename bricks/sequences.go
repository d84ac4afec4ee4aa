package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
)

// AppRef is a brick's application, the element of a Sequence.
type AppRef struct {
	Brick Brick
	Name  string
}

// Sequence applies application methods one after the other; its children
// are their bricks, each once, in order.
type Sequence struct {
	*Base
	Apps []AppRef
}

func newSequenceBase(s *Sequence, cfg *Config, name, class string, apps []AppRef) {
	s.initBase(s, cfg, name, class)
	s.setApps(apps)
	s.addApplication(&Application{Name: "apply", Variadic: true, Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: s.apply})
}

func (s *Sequence) setApps(apps []AppRef) {
	s.Apps = apps
	var children []Brick
	seen := map[Brick]bool{}
	for _, a := range apps {
		if !seen[a.Brick] {
			seen[a.Brick] = true
			children = append(children, a.Brick)
		}
	}
	s.SetChildren(children)
}

// NewSequence makes a Sequence of application methods.
func NewSequence(cfg *Config, name string, apps []AppRef) *Sequence {
	s := &Sequence{Base: &Base{}}
	newSequenceBase(s, cfg, name, "Sequence", apps)
	return s
}

// NewFeedforwardSequence makes a FeedforwardSequence (a Sequence with
// input_dim and output_dim taken from its first and last bricks).
func NewFeedforwardSequence(cfg *Config, name string, apps []AppRef) *Sequence {
	s := &Sequence{Base: &Base{}}
	newSequenceBase(s, cfg, name, "FeedforwardSequence", apps)
	return s
}

func (s *Sequence) apply(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
	cur := in
	for _, a := range s.Apps {
		out, err := Apply(a.Brick, a.Name, cur...)
		if err != nil {
			return nil, err
		}
		cur = out
	}
	return cur, nil
}

// MLP is Blocks' multi-layer perceptron: Feedforward layers (Linear
// bricks named linear_0, linear_1, ..., or copies of a prototype)
// interleaved with the activations (None entries skipped).
type MLP struct {
	Sequence
	// LinearTransformations are Blocks' linear_transformations: the
	// layers, whose input_dim and output_dim the MLP pushes from dims.
	LinearTransformations []Feedforward
	Activations           []Brick
	// Dims are the dimensions of the input, the hidden layers and the
	// output (len(Activations)+1 entries); nil is unset (a parent pushes
	// them).
	Dims []int
	// InitConfig is pushed to the layers: the schemes at initialization,
	// UseBias (when set) at allocation.
	InitConfig
}

// NewMLP makes an MLP of Linear layers; dims (len(activations)+1
// entries) may be nil for a parent to push.
func NewMLP(cfg *Config, name string, activations []Brick, dims []int) (*MLP, error) {
	layers := make([]Feedforward, len(activations))
	for i := range layers {
		layers[i] = NewLinear(cfg, fmt.Sprintf("linear_%d", i))
	}
	return NewMLPOf(cfg, name, activations, dims, layers)
}

// NewMLPOf makes an MLP of the given layers, one per activation (Blocks'
// MLP(activations, dims, prototype=...), whose layers are copies of the
// prototype named {class}_{i}: Copy makes them).
func NewMLPOf(cfg *Config, name string, activations []Brick, dims []int, layers []Feedforward) (*MLP, error) {
	if dims != nil && len(dims) != len(activations)+1 {
		return nil, fmt.Errorf("MLP: %d activations need %d dims, got %d", len(activations), len(activations)+1, len(dims))
	}
	if len(layers) != len(activations) {
		return nil, fmt.Errorf("MLP: %d activations need %d layers, got %d", len(activations), len(activations), len(layers))
	}
	m := &MLP{Sequence: Sequence{Base: &Base{}}, Activations: activations, LinearTransformations: layers}
	var apps []AppRef
	for i, a := range activations {
		apps = append(apps, AppRef{layers[i], "apply"})
		if a != nil {
			apps = append(apps, AppRef{a, "apply"})
		}
	}
	m.initBase(m, cfg, name, "MLP")
	m.setApps(apps)
	m.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: m.apply})
	m.Dims = dims
	return m, nil
}

func (m *MLP) missingAllocation() []string {
	if m.Dims == nil {
		return []string{"dims"}
	}
	return nil
}

// PushAllocationConfigHook gives each layer its input_dim and output_dim
// and, when the MLP's use_bias is set, its use_bias (Blocks'
// MLP._push_allocation_config).
func (m *MLP) PushAllocationConfigHook() error {
	dims := m.Dims
	if dims == nil {
		return fmt.Errorf("%s: allocation argument dims is not set", m.AnnotationName())
	}
	if len(dims) != len(m.LinearTransformations)+1 {
		return fmt.Errorf("%s: %d linear layers need %d dims, got %v", m.AnnotationName(), len(m.LinearTransformations), len(m.LinearTransformations)+1, dims)
	}
	for i, l := range m.LinearTransformations {
		if err := l.SetInputDim(dims[i]); err != nil {
			return err
		}
		if err := l.SetOutputDim(dims[i+1]); err != nil {
			return err
		}
		if m.UseBias != nil {
			if err := pushUseBias(l, *m.UseBias); err != nil {
				return err
			}
		}
	}
	return nil
}
