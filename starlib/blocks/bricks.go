package blocks

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.bricks: Blocks' bricks. Their constructors are tables
// (blocks_bricks_*_table.go, classtable.go): Blocks' signatures as
// data, which :help prints.
//
//	Linear(input_dim=None, output_dim=None, name=None, weights_init=None, biases_init=None, use_bias=True, seed=None)
//	    y = x·W + b; parameters W (input_dim, output_dim) and b (output_dim,); application apply(input_)
//	Bias(dim=None, name=None, biases_init=None)            y = x + b
//	MLP(activations, dims=None, name=None, weights_init=None, biases_init=None, use_bias=True, seed=None)
//	    Linear bricks linear_0, linear_1, ... interleaved with the activations (None skips one)
//	Sequence(application_methods, name=None)               applies them in turn (bricks mean their apply)
//	FeedforwardSequence(application_methods, name=None)
//	Identity(), Tanh(), Logistic(), Softplus(), Rectifier(), LeakyRectifier(leak=0.01)   activations
//	Softmax()    applications apply, log_probabilities, categorical_cross_entropy(y, x)
//
// Feedforward, Activation, LinearLike and Random are abstract classes: for
// VariableFilter(bricks=[...]) and as bases of script classes
// (script_bricks.go).
//
// Every brick has name, children, parameters, allocated, initialized, the
// lifecycle methods allocate(), initialize(), push_allocation_config(),
// push_initialization_config(), its applications as methods (brick.apply(x)),
// and its configuration as settable attributes (linear.input_dim,
// mlp.dims, brick.weights_init, brick.biases_init, brick.use_bias). Linear
// has W and b.
func bricksModules() (mods []*starlarkstruct.Module) {
	members := starlark.StringDict{}
	for _, c := range []string{"Feedforward", "Activation", "LinearLike", "Random"} {
		members[c] = &BrickClass{Class: c}
	}
	members["application"] = starlib.NewBuiltin("application", applicationBuiltin) // script_bricks.go
	members["lazy"] = starlib.NewBuiltin("lazy", lazyBuiltin)
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks", Members: members})

	costs := starlark.StringDict{}
	for _, c := range []string{"Cost", "CostMatrix"} {
		costs[c] = &BrickClass{Class: c}
	}
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.cost", Members: costs})
	return
}

const brickConfigKey = "blocks.bricks.config"

// BrickConfig is the thread's brick configuration: floatX and the seed
// generator all bricks of the run share (Blocks' class-level
// RandomState(default_seed=1)).
func BrickConfig(thread *starlark.Thread) *bricks.Config {
	if c, ok := thread.Local(brickConfigKey).(*bricks.Config); ok {
		return c
	}
	c := bricks.NewConfig(starlib.FloatX(thread), 1)
	c.NewID = starlib.IDs(thread).Next
	thread.SetLocal(brickConfigKey, c)
	return c
}

// BrickClass is a brick class: callable to make a brick, usable in
// VariableFilter(bricks=[Linear]), and its applications (Linear.apply)
// select applications in filters.
type BrickClass struct {
	Class string
	table *classTable // its constructor as data (classtable.go); nil for an abstract class
	// mixins are further classes of a script class's combined base
	// (Initializable and Feedforward): script_bricks.go.
	mixins []string
}

var (
	_ starlark.Callable = (*BrickClass)(nil)
	_ starlark.HasAttrs = (*BrickClass)(nil)
)

// Name is the class name.
func (c *BrickClass) Name() string { return c.Class }

func (c *BrickClass) String() string        { return "<class '" + c.Class + "'>" }
func (c *BrickClass) Type() string          { return "BrickClass" }
func (c *BrickClass) Freeze()               {}
func (c *BrickClass) Truth() starlark.Bool  { return true }
func (c *BrickClass) Hash() (uint32, error) { return starlark.String(c.Class).Hash() }

// Attr returns an unbound application (Linear.apply) for filters.
func (c *BrickClass) Attr(name string) (starlark.Value, error) {
	if v := brickClassStatic(c.Class, name); v != nil {
		return v, nil
	}
	return &UnboundApplication{Class: c.Class, Name: name}, nil
}

// AttrNames lists the usual application names.
func (c *BrickClass) AttrNames() []string { return []string{"apply"} }

// CallInternal makes a brick.
func (c *BrickClass) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
	defer starlib.RecoverInternal(c.Class, &err)
	if c.table != nil {
		return c.table.call(thread, args, kwargs)
	}
	if c.Class == "Random" && c.mixins == nil {
		return newRandomBrick(thread, c, args, kwargs)
	}
	return nil, fmt.Errorf("%s is an abstract brick class", c.Class)
}

// UnboundApplication is Class.application, a selector for VariableFilter.
type UnboundApplication struct{ Class, Name string }

func (a *UnboundApplication) String() string       { return a.Class + "." + a.Name }
func (a *UnboundApplication) Type() string         { return "Application" }
func (a *UnboundApplication) Freeze()              {}
func (a *UnboundApplication) Truth() starlark.Bool { return true }
func (a *UnboundApplication) Hash() (uint32, error) {
	return starlark.String(a.String()).Hash()
}

func brickList(what string, v starlark.Value, allowNone bool) ([]bricks.Brick, error) {
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s: got %s, want a list of bricks", what, typeOf(v))
	}
	var out []bricks.Brick
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for i := 0; iter.Next(&x); i++ {
		if x == starlark.None && allowNone {
			out = append(out, nil)
			continue
		}
		b, ok := x.(*Brick)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: got %s, want a brick", what, i, x.Type())
		}
		out = append(out, b.B)
	}
	return out, nil
}

func typeOf(v starlark.Value) string {
	if v == nil {
		return "nothing"
	}
	return v.Type()
}

func appList(class string, v starlark.Value) ([]bricks.AppRef, error) {
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s: application_methods: got %s, want a list of applications or bricks", class, typeOf(v))
	}
	var out []bricks.AppRef
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for i := 0; iter.Next(&x); i++ {
		switch x := x.(type) {
		case *BoundApplication:
			out = append(out, bricks.AppRef{Brick: x.Brick, Name: x.App})
		case *Brick:
			out = append(out, bricks.AppRef{Brick: x.B, Name: "apply"})
		default:
			return nil, fmt.Errorf("%s: application_methods[%d]: got %s, want an application (brick.apply) or a brick", class, i, x.Type())
		}
	}
	return out, nil
}

// setBrickAttr sets a declared attribute from a Starlark value.
func setBrickAttr(br bricks.Brick, name string, v starlark.Value) error {
	b := br.BaseBrick()
	spec, ok := brickSpec(br, name)
	if !ok {
		return starlark.NoSuchAttrError(fmt.Sprintf("%s has no attribute %s", b.AnnotationName(), name))
	}
	if isLazyNone(v) {
		return setBrickAttrOf(br, name, nil)
	}
	if sc, ok := v.(*starlib.Scalar); ok { // a numpy scalar is its number, as in Python
		v = sc.Number()
	}
	bad := func(want string) error {
		return fmt.Errorf("%s.%s must be %s, got %s", b.Name, name, want, v.Type())
	}
	switch spec.Kind {
	case attrInt:
		var i int
		if err := starlark.AsInt(v, &i); err != nil {
			return bad("an int")
		}
		if i < 0 || (i == 0 && !spec.NonNegative) {
			return fmt.Errorf("%s.%s must be positive, got %d", b.Name, name, i)
		}
		return setBrickAttrOf(br, name, i)
	case attrInts:
		var one int
		if starlark.AsInt(v, &one) == nil {
			// A single int is a 1-tuple (BatchNormalization's input_dim).
			return setBrickAttrOf(br, name, []int{one})
		}
		is, err := starlib.AsInts(v)
		if err != nil {
			return bad("a list of ints")
		}
		return setBrickAttrOf(br, name, is)
	case attrFloat:
		f, ok := starlark.AsFloat(v)
		if !ok {
			return bad("a number")
		}
		return setBrickAttrOf(br, name, f)
	case attrBool:
		bv, ok := v.(starlark.Bool)
		if !ok {
			return bad("a bool")
		}
		return setBrickAttrOf(br, name, bool(bv))
	case attrInit:
		s, ok := v.(*Scheme)
		if !ok {
			return bad("an initialization scheme (blocks.initialization)")
		}
		return setBrickAttrOf(br, name, initialization.Scheme(s.S))
	case attrString:
		s, ok := starlark.AsString(v)
		if !ok {
			return bad("a string")
		}
		return setBrickAttrOf(br, name, s)
	case attrDim:
		var n int
		if starlark.AsInt(v, &n) == nil {
			if n <= 0 {
				return fmt.Errorf("%s.%s must be positive, got %d", b.Name, name, n)
			}
			return setBrickAttrOf(br, name, n)
		}
		x, err := convAttr(b, name, attrSize, v)
		if err != nil {
			return err
		}
		return setBrickAttrOf(br, name, x)
	case attrSize, attrBorder:
		x, err := convAttr(b, name, spec.Kind, v)
		if err != nil {
			return err
		}
		return setBrickAttrOf(br, name, x)
	}
	return fmt.Errorf("%s.%s cannot be set", b.Name, name)
}

// Brick is a brick as a Starlark value.
type Brick struct{ B bricks.Brick }

var (
	_ starlark.HasAttrs    = (*Brick)(nil)
	_ starlark.HasSetField = (*Brick)(nil)
)

func (b *Brick) String() string        { return b.repr() }
func (b *Brick) Type() string          { return b.B.BaseBrick().Class() }
func (b *Brick) Freeze()               {}
func (b *Brick) Truth() starlark.Bool  { return true }
func (b *Brick) Hash() (uint32, error) { return identityHash(b.B, b) }

var brickMethods = []string{"allocate", "initialize", "push_allocation_config", "push_initialization_config"}

// AttrNames lists the brick's attributes.
func (b *Brick) AttrNames() []string {
	base := b.B.BaseBrick()
	names := []string{"name", "children", "parameters", "allocated", "initialized", "seed"}
	names = append(names, brickMethods...)
	for _, s := range brickSpecs(b.B) {
		names = append(names, s.Name)
	}
	for _, a := range base.Applications() {
		names = append(names, a.Name)
	}
	switch b.B.(type) {
	case *bricks.Linear:
		names = append(names, "W", "b")
	case *bricks.Bias:
		names = append(names, "b")
	case *bricks.MLP:
		names = append(names, "linear_transformations", "activations")
	}
	for _, h := range brickAttrHooks() {
		if h.names != nil {
			names = append(names, h.names(b.B)...)
		}
	}
	if x := brickExtra(b.B); x != nil {
		names = append(names, starlib.ScriptAttrNames(x.st)...)
		names = append(names, "rng", "add_auxiliary_variable", "auxiliary_variables")
		if !base.Allocated && !base.AllocationConfigPushed {
			names = slices.DeleteFunc(names, func(n string) bool { return n == "parameters" })
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// Attr returns an attribute: a script brick's (script_bricks.go), then
// the brick's own, then the script class's __getattr__.
func (b *Brick) Attr(name string) (starlark.Value, error) {
	x := brickExtra(b.B)
	if x == nil {
		return b.nativeAttr(name)
	}
	v, ok, err := scriptBrickAttr(b, x, name)
	if !ok && err == nil {
		v, err = b.nativeAttr(name)
	}
	// A script subclass's __getattr__: Python's fallback when the lookup
	// (the brick's own attributes included) finds nothing or raises
	// AttributeError.
	_, missing := err.(starlark.NoSuchAttrError)
	if v == nil && (err == nil || missing) {
		if g, gerr := starlib.ScriptGetattr(b, x.st, name); g != nil || gerr != nil {
			return g, gerr
		}
	}
	return v, err
}

// nativeAttr is an attribute of the brick itself.
func (b *Brick) nativeAttr(name string) (starlark.Value, error) {
	base := b.B.BaseBrick()
	switch name {
	case "name":
		return starlark.String(base.Name), nil
	case "children":
		out := make([]starlark.Value, len(base.Children))
		for i, c := range base.Children {
			out[i] = &Brick{c}
		}
		return starlark.NewList(out), nil
	case "parameters":
		if !base.Allocated {
			// Blocks sets parameters in allocate(): before it, there is none.
			return nil, fmt.Errorf("'%s' object has no attribute 'parameters' (allocate() the brick, or apply it, first)", base.Class())
		}
		return variableList(nil, base.Parameters), nil
	case "allocated":
		return starlark.Bool(base.Allocated), nil
	case "initialized":
		return starlark.Bool(base.Initialized), nil
	case "seed":
		return starlark.MakeInt64(base.Seed()), nil
	case "W", "b":
		switch x := b.B.(type) {
		case *bricks.Linear:
			v := x.W
			if name == "b" {
				v = x.B
			}
			if v == nil {
				return nil, fmt.Errorf("%s has no parameter %s yet: allocate it first", base.AnnotationName(), name)
			}
			return &starlib.Variable{V: v}, nil
		case *bricks.Bias:
			if name == "b" && x.B != nil {
				return &starlib.Variable{V: x.B}, nil
			}
		}
	case "linear_transformations", "activations":
		if m, ok := b.B.(*bricks.MLP); ok {
			var out []starlark.Value
			if name == "activations" {
				for _, a := range m.Activations {
					if a == nil {
						out = append(out, starlark.None)
					} else {
						out = append(out, &Brick{a})
					}
				}
			} else {
				for _, l := range m.LinearTransformations {
					out = append(out, &Brick{l})
				}
			}
			return starlark.NewList(out), nil
		}
	case "allocate", "initialize", "push_allocation_config", "push_initialization_config":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(fb.Name(), args, kwargs); err != nil {
				return nil, err
			}
			var err error
			switch name {
			case "allocate":
				err = bricks.Allocate(b.B)
			case "initialize":
				err = bricks.Initialize(b.B)
			case "push_allocation_config":
				err = bricks.PushAllocationConfig(b.B)
			case "push_initialization_config":
				err = bricks.PushInitializationConfig(b.B)
			}
			if err != nil {
				return nil, err
			}
			return starlark.None, nil
		}).BindReceiver(b), nil
	}
	for _, h := range brickAttrHooks() {
		if v, ok, err := h.attr(b, name); ok {
			return v, err
		}
	}
	if spec, ok := brickSpec(b.B, name); ok {
		v := brickAttrOf(b.B, name)
		if v == nil && !brickAttrIsSet(b.B, name) {
			// Never set: what Blocks' __init__ stores for an argument
			// left out (brick_defaults.go).
			if d, ok := unsetBrickAttr(b.B, name); ok {
				return d, nil
			}
		}
		if v == nil && spec.Lazy == forAllocation {
			return NoneAllocation, nil // Blocks' unset lazy allocation argument
		}
		return attrValue(v), nil
	}
	if app := base.Application(name); app != nil {
		return &BoundApplication{Brick: b.B, App: name}, nil
	}
	if v, ok := extraBrickAttr(b, name); ok { // parameters by name, ... (recurrent.go)
		return v, nil
	}
	return nil, nil
}

// brickAttrHook gives the bricks of another file extra attributes (a
// BatchNormalization's scale, a Convolutional's W, get_dim, ...): attr
// answers ok for the names it knows, names (may be nil) lists them.
type brickAttrHook struct {
	attr  func(b *Brick, name string) (starlark.Value, bool, error)
	names func(b bricks.Brick) []string
}

// brickAttrHooks are the other brick files' attributes, asked in this
// order before a brick's declared attributes and applications.
func brickAttrHooks() [4]brickAttrHook {
	return [...]brickAttrHook{
		{attr: moreBrickAttr, names: moreBrickAttrNames},     // bricks_more.go
		{attr: convBrickAttr, names: convAttrNames},          // conv.go
		{attr: bnAttr, names: bnAttrNames},                   // bn.go
		{attr: blocksNamedAttr, names: blocksNamedAttrNames}, // brick_attrs_blocks.go
	}
}

// brickSetHooks are the other brick files' settable attributes: each sets
// the attributes it knows (ok true) before the declared ones.
func brickSetHooks() [2]func(b *Brick, name string, v starlark.Value) (ok bool, err error) {
	return [...]func(b *Brick, name string, v starlark.Value) (bool, error){
		bnSetField,         // bn.go
		setBlocksNamedAttr, // brick_attrs_blocks.go
	}
}

func attrValue(v any) starlark.Value {
	switch v := v.(type) {
	case nil:
		return starlark.None
	case int:
		return starlark.MakeInt(v)
	case []int:
		out := make([]starlark.Value, len(v))
		for i, x := range v {
			out[i] = starlark.MakeInt(x)
		}
		return starlark.NewList(out)
	case float64:
		return starlark.Float(v)
	case bool:
		return starlark.Bool(v)
	case string:
		return starlark.String(v)
	case initialization.Scheme:
		return &Scheme{v}
	case bricks.Size, core.Border:
		return convAttrValue(v)
	}
	return starlark.None
}

// SetField sets an attribute: a script brick's (script_bricks.go), else
// name, seed or a declared attribute.
func (b *Brick) SetField(name string, v starlark.Value) error {
	if x := brickExtra(b.B); x != nil {
		return scriptBrickSetField(b, x, name, v)
	}
	return b.nativeSetField(name, v)
}

// nativeSetField sets name, seed or a declared attribute.
func (b *Brick) nativeSetField(name string, v starlark.Value) error {
	base := b.B.BaseBrick()
	switch name {
	case "name":
		s, ok := starlark.AsString(v)
		if !ok {
			return fmt.Errorf("name must be a string, got %s", v.Type())
		}
		base.Name = s
		return nil
	case "seed":
		var s int64
		if err := starlark.AsInt(v, &s); err != nil {
			return fmt.Errorf("seed: %v", err)
		}
		return base.SetSeed(s)
	}
	if ok, err := setBrickFieldMore(b, name, v); ok {
		return err
	}
	for _, h := range brickSetHooks() {
		if ok, err := h(b, name, v); ok {
			return err
		}
	}
	err := setBrickAttr(b.B, name, v)
	if _, missing := err.(starlark.NoSuchAttrError); missing && slices.Contains(b.AttrNames(), name) {
		// An attribute that reads but is not set (Starlark would add
		// "did you mean .children?" to the missing attribute's error).
		if name == "children" {
			return fmt.Errorf("%s.children cannot be assigned: a brick's children are given when it is built (Brick(children=[...]), Initializable(children=[...])) and read-only after", base.AnnotationName())
		}
		return fmt.Errorf("%s.%s is read-only", base.AnnotationName(), name)
	}
	return err
}

// BoundApplication is brick.application: call it with input variables.
type BoundApplication struct {
	Brick bricks.Brick
	App   string
	// superOf, when set, makes this super(C, self).App where a script
	// subclass replaced the application of the brick type (whose class
	// is superOf): the type's own application (script_bricks.go).
	superOf string
}

var (
	_ starlark.Callable = (*BoundApplication)(nil)
	_ starlark.HasAttrs = (*BoundApplication)(nil)
)

func (a *BoundApplication) String() string {
	return fmt.Sprintf("<bound application %s.%s>", a.Brick.BaseBrick().Name, a.App)
}
func (a *BoundApplication) Type() string          { return "BoundApplication" }
func (a *BoundApplication) Freeze()               {}
func (a *BoundApplication) Truth() starlark.Bool  { return true }
func (a *BoundApplication) Hash() (uint32, error) { return starlark.String(a.String()).Hash() }

// AttrNames lists the application's attributes.
func (a *BoundApplication) AttrNames() []string {
	if _, ok := applicationSpec(a.Brick, a.App); ok {
		return []string{"brick", "contexts", "inputs", "name", "outputs", "sequences", "states"}
	}
	return []string{"brick", "inputs", "name", "outputs"}
}

// Attr returns brick, name, inputs or outputs.
func (a *BoundApplication) Attr(name string) (starlark.Value, error) {
	if d := scriptAppDecl(a.Brick, a.App); d != nil && a.superOf == "" { // script_apps.go
		if v, ok, err := scriptBoundAttr(a, d, name); ok || err != nil {
			return v, err
		}
	}
	app := a.application()
	switch name {
	case "brick":
		return &Brick{a.Brick}, nil
	case "name":
		return starlark.String(a.App), nil
	case "inputs":
		return starlib.StringList(app.Inputs), nil
	case "outputs":
		return starlib.StringList(app.Outputs), nil
	case "sequences", "states", "contexts":
		spec, ok := applicationSpec(a.Brick, a.App)
		if !ok {
			return nil, nil
		}
		return starlib.StringList(map[string][]string{"sequences": spec.Sequences, "states": spec.States, "contexts": spec.Contexts}[name]), nil
	}
	return nil, nil
}

// application is the brick's application: the brick type's own for
// super(C, self).apply.
func (a *BoundApplication) application() *bricks.Application {
	if a.superOf != "" {
		return a.Brick.BaseBrick().SuperApplication(a.App)
	}
	return a.Brick.BaseBrick().Application(a.App)
}

// Name is "brick.application".
func (a *BoundApplication) Name() string { return a.Brick.BaseBrick().Name + "." + a.App }

// CallInternal applies the brick: variables (or numbers) in, a variable or
// a tuple of variables out. Keyword arguments name the inputs.
func (a *BoundApplication) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
	base := a.Brick.BaseBrick()
	fname := base.Name + "." + a.App
	defer starlib.RecoverInternal(fname, &err)
	if callID, rest, ok := popCallID(kwargs); ok {
		v, err := a.CallInternal(thread, args, rest)
		if err != nil {
			return nil, err
		}
		return v, setCallID(v, callID)
	}
	if v, ok, err := callWithExtraDims(thread, a, args, kwargs); ok { // wrappers.go
		return v, err
	}
	if a.superOf != "" { // script_bricks.go
		return callSuperApplication(thread, a, args, kwargs)
	}
	if d := scriptAppDecl(a.Brick, a.App); d != nil { // script_bricks.go, script_apps.go
		if d.rec != nil {
			return callScriptRecurrent(thread, a, d, args, kwargs)
		}
		return callScriptApplication(thread, a, d, args, kwargs)
	}
	if ka, ok := a.Brick.(bricks.KeywordApplier); ok { // recurrent bricks: recurrent.go
		return callKeywordApplication(thread, a, ka, args, kwargs)
	}
	app := base.Application(a.App)
	vals := append([]starlark.Value(nil), args...)
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		idx := -1
		for i, n := range app.Inputs {
			if n == k {
				idx = i
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("%s got an unexpected keyword argument %s (inputs: %s)", fname, k, strings.Join(app.Inputs, ", "))
		}
		for len(vals) <= idx {
			vals = append(vals, nil)
		}
		if vals[idx] != nil {
			return nil, fmt.Errorf("%s got multiple values for %s", fname, k)
		}
		vals[idx] = kv[1]
	}
	ins := make([]*core.Variable, len(vals))
	for i, x := range vals {
		if x == nil {
			return nil, fmt.Errorf("%s: missing input %s", fname, app.Inputs[i])
		}
		iv, err := starlib.AsVariable(thread, x)
		if err != nil {
			name := "input"
			if i < len(app.Inputs) {
				name = app.Inputs[i]
			}
			return nil, fmt.Errorf("%s: %s: %v", fname, name, err)
		}
		ins[i] = iv
	}
	outs, err := bricks.Apply(a.Brick, a.App, ins...)
	if err != nil {
		return nil, err
	}
	if len(outs) == 1 {
		return starlib.NewVariable(thread, outs[0]), nil
	}
	t := make(starlark.Tuple, len(outs))
	for i, o := range outs {
		t[i] = starlib.NewVariable(thread, o)
	}
	return t, nil
}

// repr is Blocks' repr of a brick (repr_attrs(brick, 'name')):
// <module.Class object at 0x...: name=NAME>, the number being id(brick)
// (starlib/ids.go); the module of a script class is __main__. str is the
// same.
func (b *Brick) repr() string {
	if st := b.ScriptState(); st != nil {
		if s, ok := starlib.ScriptRepr(b, st); ok {
			return s
		}
	}
	base := b.B.BaseBrick()
	return fmt.Sprintf("<%s.%s object at %#x: name=%s>", b.module(), base.Class(), base.ID(), base.Name)
}

// ObjectID is id(brick).
func (b *Brick) ObjectID() int64 { return b.B.BaseBrick().ID() }

// module is the module that defines the brick's class, as Python's
// __class__.__module__: __main__ for a script class, else the Blocks
// module of blocksSubmodules or of the class's table.
func (b *Brick) module() string {
	if b.ScriptState() != nil {
		return "__main__"
	}
	class := b.B.BaseBrick().Class()
	for _, m := range blocksSubmodules {
		if slices.Contains(m.names, class) {
			return m.name
		}
	}
	module := ""
	for _, t := range classTables { // the first module in order, where several export the class
		if t.brick && t.Name == class && (module == "" || t.Module < module) {
			module = t.Module
		}
	}
	if module == "" {
		return "blocks.bricks"
	}
	return module
}
