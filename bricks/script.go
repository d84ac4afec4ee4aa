package bricks

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/core"
)

// Bricks whose class is defined by a user (a script's class deriving from
// a brick class). Such a brick is a built-in brick (a Linear, or a
// ScriptBrick for Blocks' abstract bases Brick, Initializable,
// Feedforward, Random, ...) whose lifecycle steps the subclass may
// override: Hooks replace the type's own _allocate, _initialize,
// _push_allocation_config and _push_initialization_config (the
// template methods Allocate, Initialize and the pushes still do the
// rest: children first, the lazy checks, the flags), DefaultHook runs the
// type's own step (super(C, self)._allocate()), AddApplication adds or
// replaces an application, and Extra carries what the subclass's face
// keeps with the brick (its attributes), opaque here.

// Hooks are a subclass's overrides of the lifecycle steps; a nil field
// keeps the brick type's own.
type Hooks struct {
	PushAllocationConfig, Allocate, PushInitializationConfig, Initialize func() error
	// GetDim is the subclass's get_dim (nil: Blocks' Brick.get_dim, no
	// dimension information): what containers ask of a ScriptBrick.
	GetDim func(name string) (int, error)
	// SetInputDim, SetOutputDim and SetUseBias set what a parent pushes
	// (MLP's and Parallel's dimensions, MLP's use_bias) as Python's
	// setattr does on the subclass's instance: through its properties,
	// else its own attribute or the brick type's field (nil: the field).
	SetInputDim, SetOutputDim func(d int) error
	SetUseBias                func(b bool) error
	// MissingAllocation names the subclass's lazy allocation arguments
	// that are not set yet (Blocks' allocation_args still
	// NoneAllocation): Allocate refuses to run then.
	MissingAllocation func() []string
}

// ScriptBrick is a brick of one of Blocks' abstract classes, made as the
// base of a user's subclass: no parameters or applications of its own.
type ScriptBrick struct {
	*Base
	InitConfig
	recurrentBase
	kind ScriptClass
}

// ScriptClass is what the bricks need to know of the Blocks classes a
// ScriptBrick stands for: its class name (the most specific of Blocks'
// abstract classes among the subclass's bases) and whether it is an
// Initializable and an Activation (the front end keeps the rest of the
// hierarchy).
type ScriptClass struct {
	Name                      string
	Initializable, Activation bool
}

// GetDim is the subclass's get_dim (containers such as RecurrentStack
// ask a transition's dimensions).
func (s *ScriptBrick) GetDim(name string) (int, error) {
	if h := s.hooks; h != nil && h.GetDim != nil {
		return h.GetDim(name)
	}
	return 0, fmt.Errorf("%s: No dimension information for %s available", s.AnnotationName(), name)
}

// ApplyKeywords calls a recurrent application with named inputs
// (KeywordApplier: containers such as RecurrentStack call their
// transitions so).
func (s *ScriptBrick) ApplyKeywords(app string, in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	return ApplyRecurrent(s, app, in, o)
}

// AddRecurrent adds a recurrent application (a subclass's @recurrent
// method): ApplyRecurrent iterates its step.
func (s *ScriptBrick) AddRecurrent(name string, ra *RecurrentApp) {
	for i, a := range s.apps {
		if a.Name == name {
			s.apps = append(s.apps[:i], s.apps[i+1:]...)
			break
		}
	}
	s.addRecurrent(s.Base, name, ra)
}

// NewScriptBrick makes a brick of the class; an Initializable one has
// weights_init, biases_init and use_bias.
func NewScriptBrick(cfg *Config, name string, class ScriptClass) *ScriptBrick {
	s := &ScriptBrick{Base: &Base{}, kind: class}
	s.initBase(s, cfg, name, class.Name)
	return s
}

// SetHooks sets the subclass's overrides.
func (b *Base) SetHooks(h *Hooks) { b.hooks = h }

// SetExtra sets what the subclass's face keeps with the brick.
func (b *Base) SetExtra(x any) { b.extra = x }

// Extra is what SetExtra set (nil for a built-in brick).
func (b *Base) Extra() any { return b.extra }

// SetSubclass makes the brick an instance of the subclass name of its
// class (a script's class deriving from it): Class() is then name.
func (b *Base) SetSubclass(name string) { b.subclass = name }

// AddApplication adds a (or replaces the) application of its name; a
// replaced one stays callable through ApplySuper.
func (b *Base) AddApplication(a *Application) {
	for i, x := range b.apps {
		if x.Name == a.Name {
			if b.replaced == nil {
				b.replaced = map[string]*Application{}
			}
			if _, ok := b.replaced[a.Name]; !ok {
				b.replaced[a.Name] = x
			}
			b.apps[i] = a
			return
		}
	}
	b.apps = append(b.apps, a)
}

// SuperApplication is the brick type's application name that a
// subclass replaced (nil if none).
func (b *Base) SuperApplication(name string) *Application { return b.replaced[name] }

// HasSuperApplication reports whether AddApplication replaced the
// brick type's application name.
func (b *Base) HasSuperApplication(name string) bool {
	_, ok := b.replaced[name]
	return ok
}

// ApplySuper runs the brick type's application name that a subclass
// replaced (super(C, self).apply(x) in the subclass's apply), as a call
// of its own whose Super is class.
func ApplySuper(br Brick, name, class string, inputs ...*core.Variable) ([]*core.Variable, error) {
	app, ok := br.BaseBrick().replaced[name]
	if !ok {
		return nil, fmt.Errorf("%s: the base class has no application %s", br.BaseBrick().AnnotationName(), name)
	}
	return applySuper(br, app, class, inputs)
}

// AddParameter appends p to the brick's parameters as Blocks' Parameters
// list does: role PARAMETER (besides any it has) and the brick's
// annotation.
func (b *Base) AddParameter(p *core.Variable) {
	core.AddRole(p, core.Parameter)
	if !slices.Contains(p.Tag.Annotations, b.self.(core.Annotation)) {
		p.Tag.Annotations = append(p.Tag.Annotations, b.self.(core.Annotation))
	}
	b.Parameters = append(b.Parameters, p)
}

// AddAuxiliaryVariable is Blocks' Brick.add_auxiliary_variable.
func (b *Base) AddAuxiliaryVariable(v *core.Variable, name string, roles ...*core.Role) {
	b.addAuxiliaryVariable(v, name, roles...)
}

// Self is the brick b is the base of.
func (b *Base) Self() Brick { return b.self }

// DefaultHook runs the brick type's own step of the lifecycle, ignoring
// the subclass's override: which is "allocate", "initialize",
// "push_allocation_config" or "push_initialization_config".
func DefaultHook(br Brick, which string) error {
	switch which {
	case "allocate":
		if a, ok := br.(allocator); ok {
			return a.AllocateHook()
		}
	case "initialize":
		if i, ok := br.(initializer); ok {
			return i.InitializeHook()
		}
	case "push_allocation_config":
		if p, ok := br.(allocationPusher); ok {
			return p.PushAllocationConfigHook()
		}
	case "push_initialization_config":
		if p, ok := br.(initializationPusher); ok {
			return p.PushInitializationConfigHook()
		}
	default:
		return fmt.Errorf("no lifecycle step %s", which)
	}
	return nil
}

// hook is the step to run: the subclass's override, else the type's own.
func hook(br Brick, which string) func() error {
	if h := br.BaseBrick().hooks; h != nil {
		var f func() error
		switch which {
		case "allocate":
			f = h.Allocate
		case "initialize":
			f = h.Initialize
		case "push_allocation_config":
			f = h.PushAllocationConfig
		case "push_initialization_config":
			f = h.PushInitializationConfig
		}
		if f != nil {
			return f
		}
	}
	return func() error { return DefaultHook(br, which) }
}

// ApplyWith runs one call of br's application name with fn computing the
// outputs, the inputs named by inputNames: a subclass's application whose
// arguments are not all variables (those pass to fn around the tagged
// inputs).
func ApplyWith(br Brick, name string, inputNames []string, inputs []*core.Variable, fn ApplyFunc) ([]*core.Variable, error) {
	app := br.BaseBrick().Application(name)
	if app == nil {
		return nil, fmt.Errorf("%s has no application %s", br.BaseBrick().AnnotationName(), name)
	}
	one := *app
	one.Inputs, one.Variadic, one.Fn = inputNames, false, fn
	return applyApp(br, &one, "", inputs)
}
