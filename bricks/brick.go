package bricks

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// Config is what the bricks of one experiment share: floatX and the seed
// generators (Blocks' class-level RandomState(config.default_seed)s).
type Config struct {
	FloatX nd.DType
	// SeedRNG is Blocks' RNGMixin.seed_rng: the seeds of Initializable
	// bricks (and the theano_seed of a Random brick that is also
	// Initializable, as Python's attribute lookup finds RNGMixin's first).
	SeedRNG *numpyrand.RandomState
	// RandomSeedRNG is Blocks' Random.seed_rng, a generator of its own:
	// the theano_seed of the other Random bricks.
	RandomSeedRNG *numpyrand.RandomState
	// NewID, when set, numbers each brick made (Python's id(), which
	// Blocks' repr shows): the front end's per-run counter.
	NewID func() int64
}

// NewConfig returns a Config whose seed generators start from defaultSeed
// (Blocks' default 1).
func NewConfig(floatX nd.DType, defaultSeed uint32) *Config {
	return &Config{FloatX: floatX, SeedRNG: numpyrand.New(defaultSeed), RandomSeedRNG: numpyrand.New(defaultSeed)}
}

// Brick is anything that embeds *Base.
type Brick interface {
	BaseBrick() *Base
}

// Optional lifecycle hooks a brick type implements (Blocks' underscore
// methods).
type (
	allocationPusher     interface{ PushAllocationConfigHook() error }
	initializationPusher interface{ PushInitializationConfigHook() error }
	allocator            interface{ AllocateHook() error }
	initializer          interface{ InitializeHook() error }
)

// ApplyFunc computes an application's outputs from its (already copied and
// tagged) inputs.
type ApplyFunc func(call *core.ApplicationCall, inputs []*core.Variable) ([]*core.Variable, error)

// Application is one of a brick's applications (Blocks' @application).
type Application struct {
	Name    string
	Inputs  []string
	Outputs []string
	// Variadic applications (Sequence) take any number of inputs.
	Variadic bool
	Fn       ApplyFunc
	// BlocksOutputNames names undeclared outputs output_0, output_1, ...
	// and refuses more outputs than declared, as Blocks' @application
	// (a subclass's application).
	BlocksOutputNames bool
}

// Base is the state every brick has.
type Base struct {
	self Brick
	// class is the Python class the brick type's constructor made (Linear,
	// Tanh, ...); subclass, when set, the more specific class a script's
	// subclass or WithExtraDims made of it. Blocks' class hierarchy above
	// them lives with the front end (starlib/blocks' class tables); here
	// Go interfaces stand for it (initializable.go).
	class, subclass string

	Name       string
	Children   []Brick
	Parents    []Brick
	Parameters []*core.Variable
	// AuxiliaryVariables are the brick's own auxiliary variables (Blocks'
	// brick-level add_auxiliary_variable, e.g. Linear's W_norm), made at
	// allocation; a ComputationGraph that meets the brick lists them.
	AuxiliaryVariables []*core.Variable

	Allocated, Initialized                             bool
	AllocationConfigPushed, InitializationConfigPushed bool

	apps []*Application

	cfg  *Config
	seed *int64
	rng  *numpyrand.RandomState
	// theanoSeed and theanoRNG are a Random brick's theano_seed and the
	// random streams seeded from it (TheanoSeed, TheanoRNG).
	theanoSeed *int64
	theanoRNG  *core.RandomStreams

	id int64 // cfg.NewID's number for the brick; 0 without one

	extraDims bool // the class is wrapped by WithExtraDims (wrappers.go)

	// noneSet are the attributes a front end set to Python's None whose
	// typed field has no None of its own (SetNone).
	noneSet map[string]bool

	hooks    *Hooks                  // a subclass's lifecycle overrides (script.go)
	replaced map[string]*Application // the type's applications a subclass replaced (script.go)
	extra    any                     // what a subclass's face keeps with the brick (script.go)
}

var callIDs atomic.Int64

// initBase sets up b for the brick self of the Python class class. The
// name defaults to the class name in lower case, as in Blocks.
func (b *Base) initBase(self Brick, cfg *Config, name, class string) {
	b.self, b.cfg, b.class = self, cfg, class
	if cfg != nil && cfg.NewID != nil {
		b.id = cfg.NewID()
	}
	if name == "" {
		name = strings.ToLower(class)
	}
	b.Name = name
}

// ID is the brick's number from Config.NewID (Python's id()); 0 when
// its Config has no NewID.
func (b *Base) ID() int64 { return b.id }

// BaseBrick returns b itself (so a type embedding *Base is a Brick).
func (b *Base) BaseBrick() *Base { return b }

// Class is the brick's Python class name, the most specific: a script
// subclass's or a WithExtraDims class's, else TypeClass.
func (b *Base) Class() string {
	if b.subclass != "" {
		return b.subclass
	}
	return b.class
}

// TypeClass is the Python class the brick type's constructor made
// (Linear, Tanh, MaxPooling, ...), whatever subclass was made of it.
func (b *Base) TypeClass() string { return b.class }

// AnnotationName describes the brick for printing.
func (b *Base) AnnotationName() string { return fmt.Sprintf("%s(%s)", b.Class(), b.Name) }

func (b *Base) String() string {
	return fmt.Sprintf("<%s object with name '%s'>", b.Class(), b.Name)
}

// SetNone records whether a front end set the attribute name to Python's
// None (none) or to a value: a typed field that cannot hold None (a
// *bool, an int whose 0 is "unset") then reads as its default, and the
// front end reads None while the field stays unset. The bricks never
// read it.
func (b *Base) SetNone(name string, none bool) {
	if !none {
		delete(b.noneSet, name)
		return
	}
	if b.noneSet == nil {
		b.noneSet = map[string]bool{}
	}
	b.noneSet[name] = true
}

// IsNone reports whether SetNone recorded name as set to None.
func (b *Base) IsNone(name string) bool { return b.noneSet[name] }

// Applications lists the brick's applications.
func (b *Base) Applications() []*Application { return b.apps }

// Application returns the named application.
func (b *Base) Application(name string) *Application {
	for _, a := range b.apps {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func (b *Base) addApplication(a *Application) { b.apps = append(b.apps, a) }

// SetChildren sets the children and records b as their parent.
func (b *Base) SetChildren(children []Brick) {
	b.Children = children
	for _, c := range children {
		cb := c.BaseBrick()
		if !slices.Contains(cb.Parents, b.self) {
			cb.Parents = append(cb.Parents, b.self)
		}
	}
}

// Seed is the brick's seed: set explicitly, or drawn on first use from the
// Config's seed generator as randint(2**31 - 1).
func (b *Base) Seed() int64 {
	if b.seed == nil {
		s := b.cfg.SeedRNG.Randint(0, 1<<31-1)
		b.seed = &s
	}
	return *b.seed
}

// SetSeed fixes the seed (Blocks' seed argument); it can be set once.
func (b *Base) SetSeed(s int64) error {
	if b.seed != nil {
		return fmt.Errorf("%s: seed already set", b.AnnotationName())
	}
	b.seed = &s
	return nil
}

// TheanoSeed is a Random brick's theano_seed: set explicitly, or drawn on
// first use as randint(2**31 - 1) from Blocks' seed_rng as Python finds it
// on the brick's class: RNGMixin's (Config.SeedRNG) for an Initializable
// brick, Random's own (Config.RandomSeedRNG) otherwise.
func (b *Base) TheanoSeed() int64 {
	if b.theanoSeed == nil {
		g := b.cfg.RandomSeedRNG
		if IsInitializable(b.self) || g == nil {
			g = b.cfg.SeedRNG
		}
		s := g.Randint(0, 1<<31-1)
		b.theanoSeed = &s
	}
	return *b.theanoSeed
}

// SetTheanoSeed fixes theano_seed (Random(theano_seed=)); it can be set
// once.
func (b *Base) SetTheanoSeed(s int64) error {
	if b.theanoSeed != nil {
		return fmt.Errorf("%s: AttributeError: seed already set", b.AnnotationName())
	}
	b.theanoSeed = &s
	return nil
}

// TheanoRNG is a Random brick's theano_rng: the random streams set with
// SetTheanoRNG or made by newStreams(TheanoSeed()) on first use, then the
// same for the brick's lifetime.
func (b *Base) TheanoRNG(newStreams func(seed int64) (*core.RandomStreams, error)) (*core.RandomStreams, error) {
	if b.theanoRNG == nil {
		s, err := newStreams(b.TheanoSeed())
		if err != nil {
			return nil, err
		}
		b.theanoRNG = s
	}
	return b.theanoRNG, nil
}

// SetTheanoRNG replaces theano_rng (Blocks' setter).
func (b *Base) SetTheanoRNG(s *core.RandomStreams) { b.theanoRNG = s }

// RNG is the brick's generator: pushed by a parent, or RandomState(seed).
func (b *Base) RNG() *numpyrand.RandomState {
	if b.rng == nil {
		b.rng = numpyrand.New(uint32(b.Seed()))
	}
	return b.rng
}

// PushAllocationConfig pushes allocation configuration down the tree.
func PushAllocationConfig(br Brick) error {
	b := br.BaseBrick()
	if err := hook(br, "push_allocation_config")(); err != nil {
		return err
	}
	b.AllocationConfigPushed = true
	for _, c := range b.Children {
		if err := PushAllocationConfig(c); err != nil {
			b.AllocationConfigPushed = false // as Blocks: a child's failure unsets it
			return err
		}
	}
	return nil
}

// Allocate creates the parameters (NaN-filled), children first.
func Allocate(br Brick) error {
	b := br.BaseBrick()
	if h := b.hooks; h != nil && h.MissingAllocation != nil {
		if m := h.MissingAllocation(); len(m) > 0 {
			return fmt.Errorf("%s: allocation config not set: %s (pass it to the constructor, set it, or let a parent brick push it)", b.AnnotationName(), strings.Join(m, ", "))
		}
	}
	if !b.AllocationConfigPushed {
		if err := PushAllocationConfig(br); err != nil {
			return err
		}
	}
	for _, c := range b.Children {
		if err := Allocate(c); err != nil {
			return err
		}
	}
	if lc, ok := br.(allocationChecker); ok {
		if m := lc.missingAllocation(); len(m) > 0 {
			return fmt.Errorf("%s: allocation config not set: %s (pass it to the constructor, set it, or let a parent brick push it)", b.AnnotationName(), m[0])
		}
	}
	b.Parameters = nil
	if err := hook(br, "allocate")(); err != nil {
		return err
	}
	b.Allocated = true
	return nil
}

// PushInitializationConfig pushes initialization configuration down the
// tree: Blocks' Initializable pushes its generator, weights_init and
// biases_init to its initializable children.
func PushInitializationConfig(br Brick) error {
	b := br.BaseBrick()
	if IsInitializable(br) {
		w, bi := initSchemes(br)
		for _, c := range b.Children {
			if !IsInitializable(c) {
				continue
			}
			c.BaseBrick().rng = b.RNG()
			if ic, ok := c.(Initializable); ok && w != nil {
				ic.Initialization().WeightsInit = w
			}
		}
		if bi != nil {
			for _, c := range b.Children {
				if ic, ok := c.(Initializable); ok && IsInitializable(c) {
					ic.Initialization().BiasesInit = bi
				}
			}
		}
	}
	if err := hook(br, "push_initialization_config")(); err != nil {
		return err
	}
	b.InitializationConfigPushed = true
	for _, c := range b.Children {
		if err := PushInitializationConfig(c); err != nil {
			b.InitializationConfigPushed = false
			return err
		}
	}
	return nil
}

// Initialize allocates if needed, pushes the initialization configuration
// if needed, initializes the children, then the brick's own parameters.
func Initialize(br Brick) error {
	b := br.BaseBrick()
	if !b.Allocated {
		if err := Allocate(br); err != nil {
			return err
		}
	}
	if !b.InitializationConfigPushed {
		if err := PushInitializationConfig(br); err != nil {
			return err
		}
	}
	for _, c := range b.Children {
		if err := Initialize(c); err != nil {
			return err
		}
	}
	if err := hook(br, "initialize")(); err != nil {
		return err
	}
	b.Initialized = true
	return nil
}

// initSchemes are br's weights and biases schemes (nil when unset).
func initSchemes(br Brick) (weights, biases initialization.Scheme) {
	if ic, ok := br.(Initializable); ok {
		c := ic.Initialization()
		return c.WeightsInit, c.BiasesInit
	}
	return nil, nil // Pooling: an Initializable class without parameters
}

// initWith initializes one parameter with scheme s, the brick's argument
// arg (named in the error when it is not set).
func (b *Base) initWith(p *core.Variable, s initialization.Scheme, arg string) error {
	if s == nil {
		return fmt.Errorf("%s: initialization argument %s is not set (set %s.%s, or on a parent brick)", b.AnnotationName(), arg, b.Name, arg)
	}
	p.BeforeWrite()
	if err := initialization.Initialize(s, p.Value(), b.RNG()); err != nil {
		return fmt.Errorf("%s: %v", b.AnnotationName(), err)
	}
	return nil
}

// newParameter allocates a NaN-filled floatX shared variable named name
// with a role, annotated with the brick.
func (b *Base) newParameter(name string, role *core.Role, shape ...int) *core.Variable {
	a := nd.New(b.cfg.FloatX, shape...)
	for i := range a.Size() {
		a.SetFlat(i, nanValue)
	}
	p := core.NewShared(a, name)
	p.Tag.Name = name
	core.AddRole(p, role)
	p.Tag.Annotations = append(p.Tag.Annotations, b.self.(core.Annotation))
	b.Parameters = append(b.Parameters, p)
	return p
}

var nanValue = func() float64 { var z float64; return z / z }()

// Apply runs the named application of br on inputs, as Blocks'
// @application: allocates the brick if needed, copies the inputs and
// outputs, names them {brick}_{application}_{name} and tags them with the
// roles INPUT and OUTPUT, the brick and the application call.
func Apply(br Brick, name string, inputs ...*core.Variable) ([]*core.Variable, error) {
	b := br.BaseBrick()
	app := b.Application(name)
	if app == nil {
		return nil, fmt.Errorf("%s has no application %s", b.AnnotationName(), name)
	}
	return applyApp(br, app, "", inputs)
}

// applySuper runs app, an application of br's parent class super, as a
// call of its own (Blocks' super().apply(...) inside an application):
// its inputs and outputs are tagged with br and the call, whose Super is
// set.
func applySuper(br Brick, app *Application, super string, inputs []*core.Variable) ([]*core.Variable, error) {
	return applyApp(br, app, super, inputs)
}

func applyApp(br Brick, app *Application, super string, inputs []*core.Variable) ([]*core.Variable, error) {
	b := br.BaseBrick()
	name := app.Name
	if !app.Variadic && len(inputs) != len(app.Inputs) {
		return nil, fmt.Errorf("%s.%s takes %d inputs (%s), got %d", b.AnnotationName(), name, len(app.Inputs), strings.Join(app.Inputs, ", "), len(inputs))
	}
	if !b.Allocated {
		if err := Allocate(br); err != nil {
			return nil, err
		}
	}
	call := &core.ApplicationCall{Brick: br.(core.Annotation), Application: name, Metadata: map[string]any{}, ID: callIDs.Add(1), Super: super}
	tagged := make([]*core.Variable, len(inputs))
	for i, in := range inputs {
		inName := "input_"
		if i < len(app.Inputs) {
			inName = app.Inputs[i]
		}
		tagged[i] = tag(in, b, name, inName, call, core.Input)
	}
	outs, err := app.Fn(call, tagged)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", b.AnnotationName(), name, err)
	}
	if app.Outputs != nil && len(outs) > len(app.Outputs) && app.BlocksOutputNames {
		return nil, fmt.Errorf("%s.%s: unexpected outputs: %d returned, %d declared (%s)", b.AnnotationName(), name, len(outs), len(app.Outputs), strings.Join(app.Outputs, ", "))
	}
	for i, o := range outs {
		outName := "output"
		if i < len(app.Outputs) {
			outName = app.Outputs[i]
		} else if app.BlocksOutputNames {
			outName = fmt.Sprintf("output_%d", i)
		}
		outs[i] = tag(o, b, name, outName, call, core.Output)
	}
	return outs, nil
}

func tag(v *core.Variable, b *Base, app, name string, call *core.ApplicationCall, role *core.Role) *core.Variable {
	c := v.Copy()
	c.Trace = v.Trace
	c.Name = fmt.Sprintf("%s_%s_%s", b.Name, app, name)
	c.Tag.Name = name
	c.Tag.Brick = b.self.(core.Annotation)
	c.Tag.Application = app
	c.Tag.ApplicationCall = call
	c.Tag.Annotations = []core.Annotation{b.self.(core.Annotation), call}
	core.AddRole(c, role)
	return c
}

// AllParameters lists the parameters of br and its descendants, each once,
// in depth-first order (the brick's own first).
func AllParameters(br Brick) []*core.Variable {
	var out []*core.Variable
	seen := map[*core.Variable]bool{}
	var walk func(Brick)
	walk = func(x Brick) {
		for _, p := range x.BaseBrick().Parameters {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		for _, c := range x.BaseBrick().Children {
			walk(c)
		}
	}
	walk(br)
	return out
}

// Path is the brick's hierarchical name, "/mlp/linear_0". With several
// parents it follows the parent with the smallest name, as Blocks does.
func Path(br Brick) string {
	var names []string
	for x := br; x != nil; {
		names = append(names, x.BaseBrick().Name)
		ps := slices.Clone(x.BaseBrick().Parents)
		if len(ps) == 0 {
			break
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].BaseBrick().Name < ps[j].BaseBrick().Name })
		x = ps[0]
	}
	slices.Reverse(names)
	return "/" + strings.Join(names, "/")
}

// ParameterPath is a parameter's hierarchical name, "/mlp/linear_0.W", or
// its plain name when no brick owns it.
func ParameterPath(p *core.Variable) string {
	for _, a := range p.Tag.Annotations {
		if br, ok := a.(Brick); ok {
			return Path(br) + "." + p.Name
		}
	}
	return p.Name
}
