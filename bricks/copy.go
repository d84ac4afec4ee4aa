package bricks

import (
	"fmt"
	"maps"

	"github.com/blocks-go/blocks/numpyrand"
)

// Feedforward is Blocks' Feedforward interface: a brick with one input
// and one output whose input_dim and output_dim a parent configures.
// MLP's layers are Feedforward bricks: Linear by default, or copies of any
// Feedforward prototype (LinearMaxout, a script class's brick).
type Feedforward interface {
	Brick
	// SetInputDim and SetOutputDim are Blocks' layer.input_dim = d and
	// layer.output_dim = d (through a subclass's properties where it has
	// them).
	SetInputDim(d int) error
	SetOutputDim(d int) error
}

var (
	_ Feedforward = (*Linear)(nil)
	_ Feedforward = (*LinearMaxout)(nil)
	_ Feedforward = (*ScriptBrick)(nil)
)

// SetInputDim sets input_dim.
func (l *Linear) SetInputDim(d int) error {
	if h := l.hooks; h != nil && h.SetInputDim != nil {
		return h.SetInputDim(d)
	}
	l.InputDim = d
	return nil
}

// SetOutputDim sets output_dim.
func (l *Linear) SetOutputDim(d int) error {
	if h := l.hooks; h != nil && h.SetOutputDim != nil {
		return h.SetOutputDim(d)
	}
	l.OutputDim = d
	return nil
}

// SetInputDim sets input_dim.
func (lm *LinearMaxout) SetInputDim(d int) error {
	if h := lm.hooks; h != nil && h.SetInputDim != nil {
		return h.SetInputDim(d)
	}
	lm.InputDim = d
	return nil
}

// SetOutputDim sets output_dim.
func (lm *LinearMaxout) SetOutputDim(d int) error {
	if h := lm.hooks; h != nil && h.SetOutputDim != nil {
		return h.SetOutputDim(d)
	}
	lm.OutputDim = d
	return nil
}

// SetInputDim sets the subclass's input_dim (its Hooks.SetInputDim).
func (s *ScriptBrick) SetInputDim(d int) error {
	if h := s.hooks; h != nil && h.SetInputDim != nil {
		return h.SetInputDim(d)
	}
	return fmt.Errorf("%s has no attribute input_dim", s.AnnotationName())
}

// SetOutputDim sets the subclass's output_dim (its Hooks.SetOutputDim).
func (s *ScriptBrick) SetOutputDim(d int) error {
	if h := s.hooks; h != nil && h.SetOutputDim != nil {
		return h.SetOutputDim(d)
	}
	return fmt.Errorf("%s has no attribute output_dim", s.AnnotationName())
}

// pushUseBias sets a layer's use_bias as a parent (an MLP) pushes it:
// through the subclass's face when the brick has one, else its
// InitConfig, else its declared attribute.
func pushUseBias(br Brick, ub bool) error {
	if h := br.BaseBrick().hooks; h != nil && h.SetUseBias != nil {
		return h.SetUseBias(ub)
	}
	if ic, ok := br.(Initializable); ok {
		ic.Initialization().UseBias = &ub
		return nil
	}
	return fmt.Errorf("%s has no attribute use_bias", br.BaseBrick().AnnotationName())
}

// blankCopier is a brick type that Copy can make afresh: a brick of the
// same type and configuration with nothing set.
type blankCopier interface{ blankCopy() (Brick, error) }

func (l *Linear) blankCopy() (Brick, error)        { return NewLinear(l.cfg, l.Name), nil }
func (b *Bias) blankCopy() (Brick, error)          { return NewBias(b.cfg, b.Name), nil }
func (s *Softmax) blankCopy() (Brick, error)       { return NewSoftmax(s.cfg, s.Name), nil }
func (m *Maxout) blankCopy() (Brick, error)        { return NewMaxout(m.cfg, m.Name), nil }
func (lm *LinearMaxout) blankCopy() (Brick, error) { return NewLinearMaxout(lm.cfg, lm.Name), nil }
func (s *ScriptBrick) blankCopy() (Brick, error) {
	return NewScriptBrick(s.cfg, s.Name, s.kind), nil
}

// blankCopy refuses: a Flattener is not copied (as when it shared the
// activations' type).
func (f *Flattener) blankCopy() (Brick, error) {
	return nil, fmt.Errorf("copying %s: not an activation class", f.AnnotationName())
}

// blankCopy makes an activation of the same class.
func (a *Activation) blankCopy() (Brick, error) {
	x, err := NewActivation(a.cfg, a.class, a.Name, a.Leak)
	if err != nil {
		return nil, fmt.Errorf("copying %s: not an activation class", a.AnnotationName())
	}
	return x, nil
}

// Copy is Blocks' copy.deepcopy of a brick that is not allocated yet (a
// prototype): a brick of the same type with the same name, class,
// attributes, seeds and generator (a copy of its state), lifecycle flags
// and children, each child copied the same way. memo maps the bricks
// already copied to their copies, as deepcopy's memo: a brick met twice
// is copied once, and a caller copying what else refers to the bricks
// (a subclass's attributes) finds the copies there. What a subclass's
// face keeps with the brick (Hooks, Extra, its applications) is not
// copied: the face gives the copy its own. Linear, Bias, the activations,
// Softmax, Maxout, LinearMaxout and the bricks of Blocks' abstract classes
// (ScriptBrick) can be copied; another type is an error.
func Copy(br Brick, memo map[Brick]Brick) (Brick, error) {
	if c, ok := memo[br]; ok {
		return c, nil
	}
	b := br.BaseBrick()
	if b.Allocated || len(b.Parameters) > 0 {
		return nil, fmt.Errorf("copying %s: it is allocated (copying parameters is not supported: copy a brick before its first application, allocate() or initialize())", b.AnnotationName())
	}
	bc, ok := br.(blankCopier)
	if !ok {
		return nil, fmt.Errorf("copying %s: a %s brick cannot be copied (Linear, Bias, activations, Softmax, Maxout, LinearMaxout and script classes of Blocks' abstract bricks can)", b.AnnotationName(), b.Class())
	}
	nb, err := bc.blankCopy()
	if err != nil {
		return nil, err
	}
	memo[br] = nb
	n := nb.BaseBrick()
	copyBase(n, b)
	copyFields(nb, br)
	switch {
	case len(n.Children) == 0:
		if len(b.Children) > 0 {
			children := make([]Brick, len(b.Children))
			for i, c := range b.Children {
				if children[i], err = Copy(c, memo); err != nil {
					return nil, err
				}
			}
			n.SetChildren(children)
		}
	case len(n.Children) == len(b.Children):
		// The type's own children (LinearMaxout's Linear and Maxout),
		// made by its constructor: they take the originals' settings.
		for i, c := range b.Children {
			if _, done := memo[c]; done {
				return nil, fmt.Errorf("copying %s: its child %s is also elsewhere in the copy", b.AnnotationName(), c.BaseBrick().AnnotationName())
			}
			if c.BaseBrick().Allocated || len(c.BaseBrick().Children) > 0 {
				return nil, fmt.Errorf("copying %s: its child %s cannot be copied", b.AnnotationName(), c.BaseBrick().AnnotationName())
			}
			memo[c] = n.Children[i]
			copyBase(n.Children[i].BaseBrick(), c.BaseBrick())
			copyFields(n.Children[i], c)
		}
	default:
		return nil, fmt.Errorf("copying %s: it has %d children, a new one %d", b.AnnotationName(), len(b.Children), len(n.Children))
	}
	return nb, nil
}

// copyFields gives dst, a blank brick of src's type, src's typed
// configuration (slices and pointers copied).
func copyFields(dst, src Brick) {
	if d, ok := dst.(Initializable); ok {
		*d.Initialization() = src.(Initializable).Initialization().clone()
	}
	switch d := dst.(type) {
	case *Linear:
		s := src.(*Linear)
		d.InputDim, d.OutputDim = s.InputDim, s.OutputDim
	case *Bias:
		s := src.(*Bias)
		d.Dim = s.Dim
	case *Activation:
		d.Leak = src.(*Activation).Leak
	case *Maxout:
		d.NumPieces = src.(*Maxout).NumPieces
	case *LinearMaxout:
		s := src.(*LinearMaxout)
		d.InputDim, d.OutputDim, d.NumPieces = s.InputDim, s.OutputDim, s.NumPieces
	}
}

// copyBase gives n b's name, class, seeds,
// generator state and lifecycle flags.
func copyBase(n, b *Base) {
	n.Name = b.Name
	n.class, n.subclass = b.class, b.subclass
	n.noneSet = maps.Clone(b.noneSet)
	n.extraDims = b.extraDims
	if b.seed != nil {
		s := *b.seed
		n.seed = &s
	}
	if b.theanoSeed != nil {
		s := *b.theanoSeed
		n.theanoSeed = &s
	}
	if b.rng != nil {
		n.rng = numpyrand.New(0)
		n.rng.SetState(b.rng.State())
	}
	n.AllocationConfigPushed, n.InitializationConfigPushed = b.AllocationConfigPushed, b.InitializationConfigPushed
}
