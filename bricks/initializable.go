package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/bricks/initialization"
)

// Blocks' brick hierarchy as Go interfaces: a brick type implements the
// interfaces of the Blocks classes it stands for. Brick (every brick),
// Initializable (a brick with parameters to initialize), Feedforward (one
// input, one output, dimensions a parent configures) and Recurrent (a
// transition iterated over sequences) are the ones containers and the
// lifecycle depend on.

// Initializable is Blocks' Initializable: a brick whose parameters are
// drawn from initialization schemes, which a parent pushes to it.
type Initializable interface {
	Brick
	// Initialization is the brick's configuration, to read and set.
	Initialization() *InitConfig
}

// InitConfig is an Initializable brick's configuration (Blocks'
// weights_init, biases_init and use_bias). A parent Initializable brick
// pushes its schemes (those set) to its Initializable children when the
// initialization configuration is pushed.
type InitConfig struct {
	WeightsInit initialization.Scheme // nil: unset (a parent may push one)
	BiasesInit  initialization.Scheme
	// UseBias is nil when unset: the brick has biases unless a parent
	// (an MLP) pushes false.
	UseBias *bool
}

// Initialization returns c (a type embedding InitConfig is Initializable).
func (c *InitConfig) Initialization() *InitConfig { return c }

// HasBias reports whether the brick has biases: UseBias, true when unset.
func (c *InitConfig) HasBias() bool { return c.UseBias == nil || *c.UseBias }

// clone copies c (UseBias pointing to a copy).
func (c InitConfig) clone() InitConfig {
	if c.UseBias != nil {
		u := *c.UseBias
		c.UseBias = &u
	}
	return c
}

// allocationChecker is a brick type with lazy allocation arguments: it
// names those not set yet (Blocks' NoneAllocation), in its constructor's
// order; Allocate refuses to run then.
type allocationChecker interface{ missingAllocation() []string }

// The brick types of Blocks' Initializable classes (Pooling, which has no
// parameters, aside); ScriptBrick and Container are Initializable when
// their class is.
var (
	_ Initializable = (*Linear)(nil)
	_ Initializable = (*Bias)(nil)
	_ Initializable = (*MLP)(nil)
	_ Initializable = (*BatchNormalizedMLP)(nil)
	_ Initializable = (*LinearMaxout)(nil)
	_ Initializable = (*Convolutional)(nil)
	_ Initializable = (*ConvolutionalSequence)(nil)
	_ Initializable = (*Parallel)(nil)
	_ Initializable = (*SimpleRecurrent)(nil)
	_ Initializable = (*LSTM)(nil)
	_ Initializable = (*GatedRecurrent)(nil)
	_ Initializable = (*Bidirectional)(nil)
	_ Initializable = (*RecurrentStack)(nil)
	_ Initializable = (*LookupTable)(nil)
	_ Initializable = (*SequenceContentAttention)(nil)
	_ Initializable = (*AttentionRecurrent)(nil)
	_ Initializable = (*SoftmaxEmitter)(nil)
	_ Initializable = (*LookupFeedback)(nil)
	_ Initializable = (*Readout)(nil)
	_ Initializable = (*SequenceGenerator)(nil)
	_ Initializable = (*ScriptBrick)(nil)
	_ Initializable = (*Container)(nil)
)

// classInitializable is a brick type that is Initializable or not by its
// class, not by its Go type: ScriptBrick and Container (made for
// Initializable or not) and Pooling (an Initializable class without
// parameters: it implements no Initializable).
type classInitializable interface{ initializable() bool }

func (s *ScriptBrick) initializable() bool { return s.kind.Initializable }
func (c *Container) initializable() bool   { return c.init }
func (p *Pooling) initializable() bool     { return true }

// IsInitializable reports whether br is an instance of Blocks'
// Initializable: its type implements Initializable, or its class is
// Initializable (classInitializable).
func IsInitializable(br Brick) bool {
	if c, ok := br.(classInitializable); ok {
		return c.initializable()
	}
	_, ok := br.(Initializable)
	return ok
}

// isActivation reports whether br is an instance of Blocks' Activation:
// an Activation, or a ScriptBrick made for a subclass of it.
func isActivation(br Brick) bool {
	switch b := br.(type) {
	case *Activation:
		return true
	case *ScriptBrick:
		return b.kind.Activation
	}
	return false
}

// SetInitSchemes sets the weights and biases schemes of an Initializable
// brick (a nil scheme leaves the brick's as it is), as Blocks' scripts set
// weights_init and biases_init on the top brick for it to push down: a
// shorthand for br.(Initializable).Initialization() where br is any
// brick.
func SetInitSchemes(br Brick, weights, biases initialization.Scheme) error {
	ic, ok := br.(Initializable)
	if !ok || !IsInitializable(br) {
		return fmt.Errorf("%s is not Initializable", br.BaseBrick().AnnotationName())
	}
	c := ic.Initialization()
	if weights != nil {
		c.WeightsInit = weights
	}
	if biases != nil {
		c.BiasesInit = biases
	}
	return nil
}
