package blocks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Bricks defined in scripts: a class built by type(name, bases, ns) with
// a brick class among its bases (starlib/classes.go). The instance is a
// Brick whose Go brick is the base's (a bricks.ScriptBrick for Blocks'
// abstract classes Brick, Initializable, Feedforward, Random, ...; the
// built-in brick for a concrete class such as Linear), made by the
// base's __init__ (super(C, self).__init__(**kwargs)); the script's
// attributes live in the Go brick (Base.Extra), its _allocate,
// _initialize, _push_allocation_config and _push_initialization_config
// override the brick type's steps (bricks.Hooks), and its applications
// (application(fn), application(inputs=..., outputs=...)(fn)) are the
// brick's, called by Go code (MLP(prototype=...), Sequence) as by the
// script, named, tagged and annotated as a built-in brick's.
//
//	application(fn) or application(inputs=None, outputs=None)(fn)
//	lazy(allocation=[...], initialization=[...])(fn)  arguments left out read NoneAllocation / NoneInitialization

// abstractBrickClasses are Blocks' classes a subclass derives from
// without a concrete Go brick: the instance is a bricks.ScriptBrick.
var abstractBrickClasses = map[string]bool{
	"Brick": true, "Initializable": true, "Feedforward": true, "Random": true,
	"Activation": true, "Cost": true, "CostMatrix": true, "LinearLike": true, "BaseRecurrent": true,
}

// scriptExtra is what a script brick keeps in its Go brick.
type scriptExtra struct {
	st      *starlib.ObjectState
	pending bool // the base's __init__ has not run yet
	// thread is the thread that made the brick: its run records the
	// random streams theano_rng makes (an attribute lookup has no thread).
	thread *starlark.Thread
	// appAttrs are attributes set on the brick's own applications
	// (brick.apply.inputs = [...]), by application name.
	appAttrs map[string]map[string]starlark.Value
	// allocArgs are Blocks' allocation_args: the arguments lazy(allocation=...)
	// named in the __init__ calls.
	allocArgs []string
	// paramsSet: the script set self.parameters (it reads before
	// allocation then, as in Blocks).
	paramsSet bool
	// children is the list self.children gives (scriptChildren), and
	// childSnap the brick's children when it was last filled.
	children  *starlark.List
	childSnap []bricks.Brick
	// params is the list self.parameters gives (scriptParams), and
	// paramSnap the brick's parameters when it was last filled.
	params    *starlark.List
	paramSnap []*core.Variable
	// abstract is the class chain of a bricks.ScriptBrick's Blocks
	// classes (abstractChain; nil for a concrete base's brick).
	abstract []string
}

func brickExtra(b bricks.Brick) *scriptExtra {
	if b == nil {
		return nil
	}
	x, _ := b.BaseBrick().Extra().(*scriptExtra)
	return x
}

// ScriptState is the script instance's state; nil for a built-in brick.
func (b *Brick) ScriptState() *starlib.ObjectState {
	if x := brickExtra(b.B); x != nil {
		return x.st
	}
	return nil
}

var _ starlib.NativeBase = (*BrickClass)(nil)
var _ starlib.ScriptObject = (*Brick)(nil)

// brickClasses are the class's Blocks classes (a combined base has
// several).
func (c *BrickClass) brickClasses() []string {
	return append([]string{c.Class}, c.mixins...)
}

// ScriptNew makes the instance: a placeholder brick until the base's
// __init__ makes the real one.
func (c *BrickClass) ScriptNew(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
	ph := bricks.NewScriptBrick(BrickConfig(thread), strings.ToLower(st.Class.Name()), bricks.ScriptClass{Name: "Brick"})
	ph.SetExtra(&scriptExtra{st: st, pending: true, thread: thread})
	return &Brick{B: ph}, nil
}

// ScriptInitDone runs the base's __init__ if the class's did not.
func (c *BrickClass) ScriptInitDone(thread *starlark.Thread, self starlark.Value) error {
	b := self.(*Brick)
	if x := brickExtra(b.B); x != nil && x.pending {
		if err := c.ScriptInit(thread, self, nil, nil); err != nil {
			return err
		}
	}
	if x := brickExtra(b.B); x != nil {
		if err := syncScriptParams(b, x); err != nil {
			return err
		}
		if x.children != nil {
			return syncScriptChildren(b, x)
		}
	}
	return nil
}

// ScriptInit is the brick base's __init__: it makes the Go brick from the
// arguments as the base class's constructor does, then attaches the
// script class to it.
func (c *BrickClass) ScriptInit(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
	b, ok := self.(*Brick)
	x := brickExtra(b.B)
	if !ok || x == nil {
		return fmt.Errorf("%s.__init__: not an instance of a script class", c.Class)
	}
	if !x.pending {
		return nil // a second base's __init__ in a diamond: the brick exists
	}
	st := x.st
	named := false
	for _, kv := range kwargs {
		if string(kv[0].(starlark.String)) == "name" {
			named = kv[1] != starlark.None
		}
	}
	var nb bricks.Brick
	if c.table != nil && !abstractBrickClasses[c.Class] {
		v, err := c.table.call(thread, args, kwargs)
		if err != nil {
			return err
		}
		nb = v.(*Brick).B
	} else {
		var err error
		if nb, named, err = c.newAbstract(thread, st, args, kwargs); err != nil {
			return err
		}
		x.abstract = abstractChain(c.brickClasses())
	}
	base := nb.BaseBrick()
	old := b.B.BaseBrick()
	if len(base.Children) == 0 && len(old.Children) > 0 {
		base.SetChildren(old.Children)
	}
	x.pending = false
	base.SetExtra(x)
	if chain := brickChain(nb); chain[0] != base.TypeClass() {
		base.SetSubclass(chain[0])
	}
	if !named {
		base.Name = strings.ToLower(st.Class.Name())
	}
	b.B = nb
	attachScriptBrick(thread, b, st)
	return nil
}

// scriptClassNames are the script classes of c's MRO, most specific first.
func scriptClassNames(c *starlib.Class) []string {
	var out []string
	nat := ""
	if c.Native() != nil {
		nat = c.Native().Name()
	}
	for _, n := range c.MRONames() {
		if n == nat || abstractBrickClasses[n] {
			continue
		}
		out = append(out, n)
	}
	return out
}

// newAbstract makes the Go brick of Blocks' abstract bases: Brick(name=None,
// children=None), Initializable's weights_init, biases_init, use_bias,
// seed, Random's theano_seed.
func (c *BrickClass) newAbstract(thread *starlark.Thread, st *starlib.ObjectState, args starlark.Tuple, kwargs []starlark.Tuple) (bricks.Brick, bool, error) {
	chain := abstractChain(c.brickClasses())
	init := slices.Contains(chain, "Initializable")
	fname := st.Class.Name() + ".__init__"
	var name, children, seed starlark.Value = starlark.None, starlark.None, starlark.None
	rest := map[string]starlark.Value{}
	switch {
	case len(args) > 2 || (len(args) > 0 && init):
		return nil, false, fmt.Errorf("%s: the base %s takes keyword arguments only (got %d positional)", fname, c.Class, len(args))
	case len(args) >= 1:
		name = args[0]
		if len(args) == 2 {
			children = args[1]
		}
	}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		switch k {
		case "name":
			name = kv[1]
		case "children":
			children = kv[1]
		case "seed":
			seed = kv[1]
		case "theano_seed":
			rest[k] = kv[1]
		case "weights_init", "biases_init", "use_bias":
			if !init {
				return nil, false, fmt.Errorf("%s got an unexpected keyword argument %s (an argument of Initializable, not of %s)", fname, k, c.Class)
			}
			rest[k] = kv[1]
		default:
			return nil, false, fmt.Errorf("%s got an unexpected keyword argument %s", fname, k)
		}
	}
	nameS := ""
	if name != starlark.None {
		s, ok := starlark.AsString(name)
		if !ok {
			return nil, false, fmt.Errorf("%s: name must be a string, got %s", fname, name.Type())
		}
		nameS = s
	}
	nb := bricks.NewScriptBrick(BrickConfig(thread), nameS, bricks.ScriptClass{Name: chain[0], Initializable: init, Activation: slices.Contains(chain, "Activation")})
	if children != starlark.None {
		cs, err := brickList(fname+": children", children, false)
		if err != nil {
			return nil, false, err
		}
		nb.SetChildren(cs)
	}
	if seed != starlark.None {
		var s int64
		if err := starlark.AsInt(seed, &s); err != nil {
			return nil, false, fmt.Errorf("%s: seed: %v", fname, err)
		}
		if err := nb.SetSeed(s); err != nil {
			return nil, false, err
		}
	}
	for _, k := range []string{"weights_init", "biases_init", "use_bias"} {
		if v, ok := rest[k]; ok && v != starlark.None {
			if err := setBrickAttr(nb, k, v); err != nil {
				return nil, false, err
			}
		}
	}
	if v, ok := rest["theano_seed"]; ok && v != starlark.None {
		if err := setTheanoSeed(nb.BaseBrick(), fname, v); err != nil {
			return nil, false, err
		}
	}
	return nb, nameS != "", nil
}

// attachScriptBrick gives the Go brick the script class's overrides and
// applications.
// setPushed sets what a parent pushes into a script brick (Blocks'
// layer.input_dim = d) as Python's setattr does: through the interface,
// since a static call would make an initialization cycle with the brick
// class tables.
func setPushed(b starlark.HasSetField, name string, v starlark.Value) error {
	return b.SetField(name, v)
}

func attachScriptBrick(thread *starlark.Thread, b *Brick, st *starlib.ObjectState) {
	cls := st.Class
	base := b.B.BaseBrick()
	step := func(method string) func() error {
		fn, _ := cls.Lookup(method)
		if fn == nil {
			return nil
		}
		return func() error {
			m, _, err := starlib.ScriptAttr(b, st, method)
			if err != nil {
				return err
			}
			if _, err = starlark.Call(thread, m, nil, nil); err != nil {
				return err
			}
			if x := brickExtra(b.B); x != nil {
				return syncScriptParams(b, x) // self.parameters.append(W) in _allocate
			}
			return nil
		}
	}
	base.SetHooks(&bricks.Hooks{
		SetInputDim:  func(d int) error { return setPushed(b, "input_dim", starlark.MakeInt(d)) },
		SetOutputDim: func(d int) error { return setPushed(b, "output_dim", starlark.MakeInt(d)) },
		SetUseBias:   func(ub bool) error { return setPushed(b, "use_bias", starlark.Bool(ub)) },
		MissingAllocation: func() []string {
			var out []string
			x := brickExtra(b.B)
			if x == nil {
				return nil
			}
			for _, n := range x.allocArgs {
				if v, _, _ := starlib.ScriptAttr(b, st, n); v == NoneAllocation && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
			return out
		},
		GetDim: func(name string) (int, error) {
			if fn, _ := cls.Lookup("get_dim"); fn == nil {
				return 0, fmt.Errorf("%s: No dimension information for %s available", base.AnnotationName(), name)
			}
			m, _, err := starlib.ScriptAttr(b, st, "get_dim")
			if err != nil {
				return 0, err
			}
			v, err := starlark.Call(thread, m, starlark.Tuple{starlark.String(name)}, nil)
			if err != nil {
				return 0, err
			}
			var d int
			if err := starlark.AsInt(v, &d); err != nil {
				return 0, fmt.Errorf("%s.get_dim(%q) returned %s, want an int", cls.Name(), name, v.Type())
			}
			return d, nil
		},
		Allocate:                 step("_allocate"),
		Initialize:               step("_initialize"),
		PushAllocationConfig:     step("_push_allocation_config"),
		PushInitializationConfig: step("_push_initialization_config"),
	})
	seen := map[string]bool{}
	for _, n := range cls.AttrNames() {
		v, _ := cls.Lookup(n)
		d, ok := v.(*AppDecl)
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		if d.rec != nil {
			if sb, ok := b.B.(*bricks.ScriptBrick); ok {
				sb.AddRecurrent(n, d.recurrentApp(thread, b, n))
				continue
			}
		}
		base.AddApplication(d.application(thread, b, n))
	}
}

// AppDecl is application(fn): a method that is one of the brick's
// applications.
type AppDecl struct {
	fn      *starlark.Function
	inputs  []string
	outputs []string
	// attrs are the application's other class-level attributes
	// (application(contexts=[...]), Class.apply.x = v); props its
	// properties (apply.property(name)(fn)), delegate its delegate
	// (apply.delegate(fn)), rec its @recurrent declaration (nil for an
	// ordinary application): script_apps.go.
	attrs    map[string]starlark.Value
	props    map[string]starlark.Callable
	delegate starlark.Callable
	rec      *bricks.RecurrentSpec
}

func (d *AppDecl) String() string        { return "<application " + d.fn.Name() + ">" }
func (d *AppDecl) Type() string          { return "Application" }
func (d *AppDecl) Freeze()               {}
func (d *AppDecl) Truth() starlark.Bool  { return true }
func (d *AppDecl) Hash() (uint32, error) { return starlark.String(d.fn.Name()).Hash() }

// Name is the function's name.
func (d *AppDecl) Name() string { return d.fn.Name() }

// CallInternal calls the function as it is (Class.apply(self, x)).
func (d *AppDecl) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		if b, ok := args[0].(*Brick); ok {
			if x := brickExtra(b.B); x != nil {
				for _, n := range x.st.Class.AttrNames() {
					if v, _ := x.st.Class.Lookup(n); v == starlark.Value(d) {
						return starlark.Call(thread, &BoundApplication{Brick: b.B, App: n}, args[1:], kwargs)
					}
				}
			}
		}
	}
	return starlark.Call(thread, d.fn, args, kwargs)
}

// params are the function's parameter names after self, without
// application_call; call reports whether it takes application_call.
func (d *AppDecl) params() (names []string, call bool) {
	n := d.fn.NumParams()
	for i := 1; i < n; i++ {
		p, _ := d.fn.Param(i)
		if p == "application_call" {
			call = true
			continue
		}
		if d.fn.HasVarargs() && i == d.fn.NumParams()-1-boolInt(d.fn.HasKwargs()) {
			continue
		}
		if d.fn.HasKwargs() && i == n-1 {
			continue
		}
		names = append(names, p)
	}
	return names, call
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// application is the brick's Go application for the method.
func (d *AppDecl) application(thread *starlark.Thread, b *Brick, name string) *bricks.Application {
	params, _ := d.params()
	inputs := d.inputs
	if inputs == nil {
		inputs = params
	}
	app := &bricks.Application{Name: name, Inputs: inputs, Outputs: d.outputs, Variadic: true, BlocksOutputNames: true}
	app.Fn = func(call *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
		if err := syncOutputs(b.B, name, d); err != nil {
			return nil, err
		}
		vals := make([]starlark.Value, len(in))
		for i, v := range in {
			vals[i] = &starlib.Variable{V: v}
		}
		return d.run(thread, b, params, call, vals, nil, nil)
	}
	return app
}

// run calls the method with self, the values (positional, then keyword)
// and application_call.
//
// With keep non-nil, an output that is not a variable is kept there by
// its position, a stand-in in its place (Blocks returns such outputs as
// they are); else it is converted to a constant.
func (d *AppDecl) run(thread *starlark.Thread, b *Brick, params []string, call *core.ApplicationCall, pos []starlark.Value, kw []starlark.Tuple, keep map[int]starlark.Value) ([]*core.Variable, error) {
	args := starlark.Tuple{b}
	args = append(args, pos...)
	kwargs := append([]starlark.Tuple(nil), kw...)
	if _, takes := d.params(); takes {
		kwargs = append(kwargs, starlark.Tuple{starlark.String("application_call"), &ApplicationCall{C: call}})
	}
	r, err := starlark.Call(thread, d.fn, args, kwargs)
	if x := brickExtra(b.B); err == nil && x != nil {
		err = syncScriptParams(b, x)
	}
	if err != nil {
		return nil, err
	}
	var outs []starlark.Value
	switch r := r.(type) {
	case starlark.Tuple:
		outs = r
	case *starlark.List:
		for i := 0; i < r.Len(); i++ {
			outs = append(outs, r.Index(i))
		}
	default:
		outs = []starlark.Value{r}
	}
	vs := make([]*core.Variable, len(outs))
	for i, o := range outs {
		if _, ok := o.(*starlib.Variable); !ok && keep != nil {
			keep[i] = o
			vs[i] = core.Const(nd.Float64, 0)
			continue
		}
		v, err := starlib.AsVariable(thread, o)
		if err != nil {
			return nil, fmt.Errorf("output %d: %v", i, err)
		}
		vs[i] = v
	}
	return vs, nil
}

// callScriptApplication is a call of a script brick's application from a
// script: arguments that are variables are the inputs (copied, named and
// tagged); others pass as they are.
func callScriptApplication(thread *starlark.Thread, a *BoundApplication, d *AppDecl, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	b := &Brick{B: a.Brick}
	params, _ := d.params()
	var names []string
	var ins []*core.Variable
	type slot struct {
		kw    string
		index int // into ins, or -1
		val   starlark.Value
	}
	var slots []slot
	keep := map[int]starlark.Value{}
	if err := syncOutputs(a.Brick, a.App, d); err != nil {
		return nil, err
	}
	for i, v := range args {
		n := fmt.Sprintf("input_%d", i)
		if i < len(params) {
			n = params[i]
		}
		s := slot{index: -1, val: v}
		if x, ok := v.(*starlib.Variable); ok {
			s.index = len(ins)
			names = append(names, n)
			ins = append(ins, x.V)
		}
		slots = append(slots, s)
	}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		s := slot{kw: k, index: -1, val: kv[1]}
		if x, ok := kv[1].(*starlib.Variable); ok {
			s.index = len(ins)
			names = append(names, k)
			ins = append(ins, x.V)
		}
		slots = append(slots, s)
	}
	outs, err := bricks.ApplyWith(a.Brick, a.App, names, ins, func(call *core.ApplicationCall, tagged []*core.Variable) ([]*core.Variable, error) {
		var pos []starlark.Value
		var kw []starlark.Tuple
		for _, s := range slots {
			v := s.val
			if s.index >= 0 {
				v = &starlib.Variable{V: tagged[s.index]}
			}
			if s.kw == "" {
				pos = append(pos, v)
			} else {
				kw = append(kw, starlark.Tuple{starlark.String(s.kw), v})
			}
		}
		return d.run(thread, b, params, call, pos, kw, keep)
	})
	if err != nil {
		return nil, err
	}
	t := make(starlark.Tuple, len(outs))
	for i, o := range outs {
		if v, ok := keep[i]; ok {
			t[i] = v
		} else {
			t[i] = starlib.NewVariable(thread, o)
		}
	}
	if len(t) == 1 {
		return t[0], nil
	}
	return t, nil
}

// scriptAppDecl is the AppDecl of a script brick's application, nil for a
// built-in one.
func scriptAppDecl(br bricks.Brick, app string) *AppDecl {
	x := brickExtra(br)
	if x == nil {
		return nil
	}
	v, _ := x.st.Class.Lookup(app)
	d, _ := v.(*AppDecl)
	return d
}

// applicationBuiltin is Blocks' application decorator.
func applicationBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 1 && len(kwargs) == 0 {
		if f, ok := args[0].(*starlark.Function); ok {
			return newAppDecl(f, nil, nil)
		}
	}
	if len(args) > 0 {
		return nil, fmt.Errorf("application: write application(fn) or application(inputs=[...], outputs=[...])(fn), got a positional %s", args[0].Type())
	}
	var inV, outV starlark.Value = starlark.None, starlark.None
	attrs := map[string]starlark.Value{}
	for _, kv := range kwargs {
		switch k := string(kv[0].(starlark.String)); k {
		case "inputs":
			inV = kv[1]
		case "outputs":
			outV = kv[1]
		default:
			attrs[k] = kv[1] // Blocks sets any keyword as an attribute
		}
	}
	strs := func(what string, v starlark.Value) ([]string, error) {
		if v == starlark.None {
			return nil, nil
		}
		return strList("application", what, v)
	}
	ins, err := strs("inputs", inV)
	if err != nil {
		return nil, err
	}
	outs, err := strs("outputs", outV)
	if err != nil {
		return nil, err
	}
	return starlib.NewBuiltin("application", func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var f starlark.Value
		if err := starlark.UnpackPositionalArgs("application(...)", args, kwargs, 1, &f); err != nil {
			return nil, err
		}
		fn, ok := f.(*starlark.Function)
		if !ok {
			return nil, fmt.Errorf("application(...)(fn): fn must be a function (def), got %s", f.Type())
		}
		d, err := newAppDecl(fn, ins, outs)
		if err == nil && len(attrs) > 0 {
			d.attrs = maps.Clone(attrs)
		}
		return d, err
	}), nil
}

func newAppDecl(f *starlark.Function, ins, outs []string) (*AppDecl, error) {
	if f.NumParams() == 0 {
		return nil, fmt.Errorf("application: %s (%s) takes no self argument", f.Name(), f.Position())
	}
	return &AppDecl{fn: f, inputs: ins, outputs: outs}, nil
}

// lazyBuiltin is Blocks' lazy(allocation=[...], initialization=[...]):
// the arguments it names may be left out of a call, reading
// NoneAllocation (allocation) or NoneInitialization (initialization).
func lazyBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var allocV, initV starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs("lazy", args, kwargs, "allocation?", &allocV, "initialization?", &initV); err != nil {
		return nil, fmt.Errorf("%v (write lazy(allocation=[...])(fn))", err)
	}
	var alloc, inits []string
	var err error
	if allocV != starlark.None {
		if alloc, err = strList("lazy", "allocation", allocV); err != nil {
			return nil, err
		}
	}
	if initV != starlark.None {
		if inits, err = strList("lazy", "initialization", initV); err != nil {
			return nil, err
		}
	}
	return starlib.NewBuiltin("lazy", func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var f starlark.Value
		if err := starlark.UnpackPositionalArgs("lazy(...)", args, kwargs, 1, &f); err != nil {
			return nil, err
		}
		fn, ok := f.(*starlark.Function)
		if !ok {
			return nil, fmt.Errorf("lazy(...)(fn): fn must be a function (def), got %s", f.Type())
		}
		pos := map[string]int{}
		for i := 0; i < fn.NumParams(); i++ {
			p, _ := fn.Param(i)
			pos[p] = i
		}
		for _, n := range append(append([]string(nil), alloc...), inits...) {
			if _, ok := pos[n]; !ok {
				return nil, fmt.Errorf("lazy: %s has no argument %s", fn.Name(), n)
			}
		}
		return &starlib.MethodWrapper{Fn: fn, NameText: fn.Name(), Call: func(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			given := map[string]bool{}
			for _, kv := range kwargs {
				given[string(kv[0].(starlark.String))] = true
			}
			kw := append([]starlark.Tuple(nil), kwargs...)
			fill := func(names []string, v starlark.Value) {
				for _, n := range names {
					if pos[n] >= len(args) && !given[n] {
						kw = append(kw, starlark.Tuple{starlark.String(n), v})
					}
				}
			}
			fill(alloc, NoneAllocation)
			fill(inits, NoneInitialization)
			if len(args) > 0 {
				if b, ok := args[0].(*Brick); ok {
					if x := brickExtra(b.B); x != nil {
						x.allocArgs = append(x.allocArgs, alloc...)
					}
				}
			}
			return starlark.Call(thread, fn, args, kw)
		}}, nil
	}), nil
}

// scriptBrickAttr is a script brick's attribute: the script's (its own,
// its class's), then those Blocks' Brick has for subclasses (parameters
// as a list that appends to the brick's, rng, add_auxiliary_variable,
// auxiliary_variables, allocation_config_pushed), then the base brick's.
func scriptBrickAttr(b *Brick, x *scriptExtra, name string) (starlark.Value, bool, error) {
	v, found, err := starlib.ScriptAttr(b, x.st, name)
	if found || err != nil {
		if _, ok := v.(*AppDecl); ok && !x.pending {
			return &BoundApplication{Brick: b.B, App: name}, true, nil
		}
		return v, true, err
	}
	if x.pending {
		switch name {
		case "children", "name":
		default:
			return nil, true, fmt.Errorf("'%s' object has no attribute '%s' yet (call super(%s, self).__init__(...) first)", x.st.Class.Name(), name, x.st.Class.Name())
		}
	}
	base := b.B.BaseBrick()
	switch name {
	case "children":
		if !x.pending {
			l, err := scriptChildren(b, x)
			return l, true, err
		}
	case "parameters":
		if !base.Allocated && !base.AllocationConfigPushed && !x.paramsSet {
			// Blocks' allocate() sets parameters: before it, there is none.
			return nil, true, starlark.NoSuchAttrError(fmt.Sprintf("'%s' object has no attribute 'parameters' (allocate() the brick, or apply it, first)", x.st.Class.Name()))
		}
		l, err := scriptParams(b, x)
		return l, true, err
	case "rng":
		return &starlib.RandomState{R: base.RNG()}, true, nil
	case "add_auxiliary_variable":
		return addAuxiliaryBuiltin(name, base.AddAuxiliaryVariable), true, nil
	case "auxiliary_variables":
		return variableList(nil, base.AuxiliaryVariables), true, nil
	case "theano_seed", "theano_rng":
		if isInstance(b.B, "Random") {
			return randomBrickAttr(x.thread, base, name)
		}
	case "allocation_config_pushed":
		return starlark.Bool(base.AllocationConfigPushed), true, nil
	case "initialization_config_pushed":
		return starlark.Bool(base.InitializationConfigPushed), true, nil
	case "get_dim":
		if _, ok := b.B.(*bricks.ScriptBrick); ok {
			return noDimBuiltin(base), true, nil
		}
	case "initial_states":
		if _, ok := b.B.(*bricks.ScriptBrick); ok && isInstance(b.B, "BaseRecurrent") {
			return defaultInitialStates(b), true, nil // script_apps.go
		}
	}
	return nil, false, nil
}

// noDimBuiltin is Blocks' Brick.get_dim: no dimension information.
func noDimBuiltin(base *bricks.Base) starlark.Value {
	return starlib.NewBuiltin("get_dim", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var n string
		if err := starlark.UnpackPositionalArgs("get_dim", args, kwargs, 1, &n); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("ValueError: No dimension information for %s available", n)
	})
}

// scriptBrickSetField sets an attribute of a script brick: a property's
// setter, children, parameters, the base brick's declared attributes,
// else the script's own.
func scriptBrickSetField(b *Brick, x *scriptExtra, name string, v starlark.Value) error {
	if starlib.HasClassProperty(x.st, name) {
		_, err := starlib.ScriptSetField(b, x.st, name, v, false)
		return err
	}
	base := b.B.BaseBrick()
	switch name {
	case "children":
		cs, err := brickList(x.st.Class.Name()+".children", v, false)
		if err != nil {
			return err
		}
		base.SetChildren(cs)
		return nil
	case "parameters":
		vs, err := starlib.Elems(v)
		if !err {
			return fmt.Errorf("%s.parameters must be a list of variables, got %s", x.st.Class.Name(), v.Type())
		}
		base.Parameters = nil
		x.paramsSet = true
		for i, e := range vs {
			p, ok := e.(*starlib.Variable)
			if !ok {
				return fmt.Errorf("%s.parameters[%d]: got %s, want a variable", x.st.Class.Name(), i, e.Type())
			}
			base.AddParameter(p.V)
		}
		return syncScriptParams(b, x)
	case "name", "seed":
		return b.nativeSetField(name, v)
	case "theano_seed", "theano_rng":
		if isInstance(b.B, "Random") {
			return setRandomBrickAttr(base, x.st.Class.Name(), name, v)
		}
	}
	if _, own := x.st.Get(name); !own && !x.pending {
		if _, ok := brickSpec(b.B, name); ok {
			return b.nativeSetField(name, v)
		}
		if ok, err := setBrickFieldMore(b, name, v); ok {
			return err
		}
	}
	x.st.Set(name, v)
	return nil
}

// scriptParams is a script brick's self.parameters: one Starlark list per
// brick, as scriptChildren is for children, so that it is a list to every
// operation ([] == self.parameters, +, slicing) and
// self.parameters.append(W) (in _allocate, as Blocks' bricks do) adds to
// the brick's parameters (role PARAMETER, the brick's annotation, as
// Blocks' Parameters list). What the script did to the list is given to
// the brick when the list is read again and when the script's _allocate
// (or another step, an application, __init__) returns.
func scriptParams(b *Brick, x *scriptExtra) (*starlark.List, error) {
	if err := syncScriptParams(b, x); err != nil {
		return nil, err
	}
	return x.params, nil
}

// syncScriptParams gives the brick the variables of its parameters list
// when the script changed the list, then refills the list from the brick.
func syncScriptParams(b *Brick, x *scriptExtra) error {
	base := b.B.BaseBrick()
	if x.params != nil {
		var cur []*core.Variable
		for i := 0; i < x.params.Len(); i++ {
			e, ok := x.params.Index(i).(*starlib.Variable)
			if !ok {
				return fmt.Errorf("%s.parameters[%d]: got %s, want a variable (shared_floatx_nans(...))", x.st.Class.Name(), i, x.params.Index(i).Type())
			}
			cur = append(cur, e.V)
		}
		if !slices.Equal(cur, x.paramSnap) {
			base.Parameters = nil
			for _, p := range cur {
				base.AddParameter(p)
			}
		}
	}
	if slices.Equal(base.Parameters, x.paramSnap) && x.params != nil {
		return nil
	}
	if x.params == nil || x.params.Clear() != nil {
		x.params = starlark.NewList(nil) // frozen with the module that made the brick
	}
	for _, p := range base.Parameters {
		if err := x.params.Append(&starlib.Variable{V: p}); err != nil {
			return fmt.Errorf("%s.parameters: %v", x.st.Class.Name(), err)
		}
	}
	x.paramSnap = slices.Clone(base.Parameters)
	return nil
}

// scriptChildren is a script brick's self.children: one Starlark list
// per brick, so that self.children.extend([...]) and .append in a
// subclass's __init__ add to the brick's children as Blocks' Children list
// does (a fresh copy at each read would take them silently). What the
// script did to the list is given to the brick when the list is read
// again and when the class's __init__ returns (ScriptInitDone); the list
// is then refilled from the brick's children.
func scriptChildren(b *Brick, x *scriptExtra) (*starlark.List, error) {
	if err := syncScriptChildren(b, x); err != nil {
		return nil, err
	}
	return x.children, nil
}

// syncScriptChildren gives the brick the bricks of its children list when
// the script changed the list, then refills the list from the brick.
func syncScriptChildren(b *Brick, x *scriptExtra) error {
	base := b.B.BaseBrick()
	if x.children != nil {
		var cur []bricks.Brick
		for i := 0; i < x.children.Len(); i++ {
			e, ok := x.children.Index(i).(*Brick)
			if !ok {
				return fmt.Errorf("%s.children[%d]: got %s, want a brick", x.st.Class.Name(), i, x.children.Index(i).Type())
			}
			cur = append(cur, e.B)
		}
		if !slices.Equal(cur, x.childSnap) {
			base.SetChildren(cur)
		}
	}
	if x.children == nil {
		x.children = starlark.NewList(nil)
	}
	if err := x.children.Clear(); err != nil {
		return fmt.Errorf("%s.children: %v", x.st.Class.Name(), err)
	}
	for _, c := range base.Children {
		if err := x.children.Append(&Brick{c}); err != nil {
			return fmt.Errorf("%s.children: %v", x.st.Class.Name(), err)
		}
	}
	x.childSnap = slices.Clone(base.Children)
	return nil
}

// scriptSuperAttr is super(C, self).name where the brick base is next: its
// lifecycle steps and attributes.
func (c *BrickClass) ScriptSuperAttr(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
	b, ok := self.(*Brick)
	if !ok {
		return nil, nil
	}
	steps := map[string]string{"_allocate": "allocate", "_initialize": "initialize",
		"_push_allocation_config": "push_allocation_config", "_push_initialization_config": "push_initialization_config"}
	if which, ok := steps[name]; ok {
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0); err != nil {
				return nil, err
			}
			return starlark.None, bricks.DefaultHook(b.B, which)
		}), nil
	}
	if name == "get_dim" {
		if _, ok := b.B.(*bricks.ScriptBrick); ok {
			return noDimBuiltin(b.B.BaseBrick()), nil
		}
	}
	if name == "initial_states" {
		if _, ok := b.B.(*bricks.ScriptBrick); ok && isInstance(b.B, "BaseRecurrent") {
			return defaultInitialStates(b), nil
		}
	}
	if b.B.BaseBrick().HasSuperApplication(name) {
		return &BoundApplication{Brick: b.B, App: name, superOf: c.Class}, nil
	}
	if app := b.B.BaseBrick().Application(name); app != nil && scriptAppDecl(b.B, name) == nil {
		return &BoundApplication{Brick: b.B, App: name}, nil
	}
	if scriptAppDecl(b.B, name) != nil {
		return nil, nil // the base has no such application
	}
	return b.nativeAttr(name)
}

// IsInstanceOf reports whether v is a brick of the class.
func (c *BrickClass) IsInstanceOf(v starlark.Value) bool {
	b, ok := v.(*Brick)
	if !ok {
		return false
	}
	chain := brickChain(b.B)
	for _, k := range c.brickClasses() {
		if !slices.Contains(chain, k) {
			return false
		}
	}
	return true
}

// IsSubclassOf reports whether the class derives from other, as far as
// the class itself tells (Brick is everyone's base).
func (c *BrickClass) IsSubclassOf(other starlark.Value) bool {
	o, ok := other.(*BrickClass)
	if !ok {
		return false
	}
	return o.Class == "Brick" || slices.Contains(c.brickClasses(), o.Class)
}

// Combine is the base of a class deriving from c and other: at most one
// of them concrete.
func (c *BrickClass) Combine(other starlib.NativeBase) (starlib.NativeBase, error) {
	o, ok := other.(*BrickClass)
	if !ok {
		return nil, fmt.Errorf("a brick class and %s cannot both be bases", other.Name())
	}
	concrete := func(x *BrickClass) bool { return x.table != nil && !abstractBrickClasses[x.Class] }
	if concrete(c) && concrete(o) {
		return nil, fmt.Errorf("two concrete brick classes %s and %s cannot both be bases", c.Class, o.Class)
	}
	first, second := c, o
	if concrete(o) {
		first, second = o, c
	}
	out := &BrickClass{Class: first.Class, table: first.table, mixins: slices.Clone(first.mixins)}
	for _, k := range second.brickClasses() {
		if k != out.Class && !slices.Contains(out.mixins, k) {
			out.mixins = append(out.mixins, k)
		}
	}
	return out, nil
}

// schemeInitialize is scheme.initialize(var, rng): Blocks'
// NdarrayInitialization.initialize, which fills a shared variable.
func schemeInitialize(s *Scheme) starlark.Value {
	return starlib.NewBuiltin("initialize", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var v *starlib.Variable
		var r *starlib.RandomState
		if err := starlark.UnpackArgs("initialize", args, kwargs, "var", &v, "rng", &r); err != nil {
			return nil, err
		}
		if !v.V.IsShared() {
			return nil, fmt.Errorf("initialize: var must be a shared variable, got %s", v.V)
		}
		v.V.BeforeWrite()
		return starlark.None, initialization.Initialize(s.S, v.V.Value(), r.R)
	})
}

// copyPrototype makes MLP's n layers as Blocks does: copy.deepcopy of the
// prototype for each, named {class name in lower case}_{i} (the
// prototype's own name is not used). bricks.Copy copies the Go bricks,
// children included; a script brick's copy gets the class, a copy of the
// instance's attributes and overrides and applications of its own. Lists,
// dicts, sets and tuples among the attributes are copied at every depth,
// and a brick among them becomes its copy (self.linear of a prototype
// whose child it is: the copy's own child), so a layer that changes its
// attributes leaves the others' and the prototype's alone; other values
// (numbers, strings, variables, plain objects) are shared.
func copyPrototype(thread *starlark.Thread, owner string, proto bricks.Feedforward, n int) ([]bricks.Feedforward, error) {
	class := strings.ToLower(proto.BaseBrick().Class())
	out := make([]bricks.Feedforward, n)
	for i := range out {
		c := &brickCopier{thread: thread, memo: map[bricks.Brick]bricks.Brick{}, attached: map[bricks.Brick]bool{}}
		cp, err := c.copy(proto)
		if err != nil {
			return nil, fmt.Errorf("%s: copying the prototype: %v", owner, err)
		}
		cp.BaseBrick().Name = fmt.Sprintf("%s_%d", class, i)
		out[i] = cp.(bricks.Feedforward)
	}
	return out, nil
}

// brickCopier is one deep copy: memo maps each brick copied to its copy.
type brickCopier struct {
	thread   *starlark.Thread
	memo     map[bricks.Brick]bricks.Brick
	attached map[bricks.Brick]bool
}

// copy copies br and gives the script bricks of the copy their script
// parts.
func (c *brickCopier) copy(br bricks.Brick) (bricks.Brick, error) {
	cp, err := bricks.Copy(br, c.memo)
	if err != nil {
		return nil, err
	}
	if err := c.attach(br); err != nil {
		return nil, err
	}
	return cp, nil
}

// attach gives the copy of orig, and those of its descendants, the
// script class, a copy of the attributes, and the overrides and
// applications bound to the copy.
func (c *brickCopier) attach(orig bricks.Brick) error {
	if c.attached[orig] {
		return nil
	}
	c.attached[orig] = true
	if x := brickExtra(orig); x != nil {
		cp := c.memo[orig]
		st := starlib.NewObjectState(x.st.Class)
		for _, n := range x.st.Names() {
			v, _ := x.st.Get(n)
			cv, err := c.value(v, 0)
			if err != nil {
				return fmt.Errorf("%s.%s: %v", x.st.Class.Name(), n, err)
			}
			st.Set(n, cv)
		}
		nx := &scriptExtra{st: st, thread: c.thread, allocArgs: slices.Clone(x.allocArgs), abstract: x.abstract}
		if x.appAttrs != nil {
			nx.appAttrs = map[string]map[string]starlark.Value{}
			for k, m := range x.appAttrs {
				nx.appAttrs[k] = maps.Clone(m)
			}
		}
		cp.BaseBrick().SetExtra(nx)
		attachScriptBrick(c.thread, &Brick{B: cp}, st)
	}
	for _, ch := range orig.BaseBrick().Children {
		if err := c.attach(ch); err != nil {
			return err
		}
	}
	return nil
}

// value returns a copy of v in which every list, dict, set and tuple is
// new and every brick is its copy (Python's copy.deepcopy for what a
// brick's attributes hold); other values are v's own. A structure deeper
// than 100 levels (a list holding itself) is an error.
func (c *brickCopier) value(v starlark.Value, depth int) (starlark.Value, error) {
	if depth > 100 {
		return nil, fmt.Errorf("nested more than 100 levels deep (a container that holds itself?)")
	}
	switch x := v.(type) {
	case *Brick:
		cp, err := c.copy(x.B)
		if err != nil {
			return nil, err
		}
		return &Brick{B: cp}, nil
	case *starlark.List:
		out := make([]starlark.Value, x.Len())
		for i := range out {
			e, err := c.value(x.Index(i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return starlark.NewList(out), nil
	case starlark.Tuple:
		out := make(starlark.Tuple, len(x))
		for i, e := range x {
			ce, err := c.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = ce
		}
		return out, nil
	case *starlark.Dict:
		out := starlark.NewDict(x.Len())
		for _, kv := range x.Items() {
			ce, err := c.value(kv[1], depth+1)
			if err != nil {
				return nil, err
			}
			if err := out.SetKey(kv[0], ce); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *starlark.Set:
		out := starlark.NewSet(x.Len())
		iter := x.Iterate()
		defer iter.Done()
		var e starlark.Value
		for iter.Next(&e) {
			if err := out.Insert(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

// callSuperApplication is a call of super(C, self).apply where the
// subclass replaced the brick type's apply: the type's own, as a call of
// its own (a recurrent brick's with its keywords and optional inputs).
func callSuperApplication(thread *starlark.Thread, a *BoundApplication, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if ka, ok := a.Brick.(bricks.KeywordApplier); ok {
		return callKeywordApplication(thread, a, ka, args, kwargs)
	}
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("super(...).%s: give the inputs by position", a.App)
	}
	ins := make([]*core.Variable, len(args))
	for i, x := range args {
		v, err := starlib.AsVariable(thread, x)
		if err != nil {
			return nil, fmt.Errorf("super(...).%s: input %d: %v", a.App, i, err)
		}
		ins[i] = v
	}
	outs, err := bricks.ApplySuper(a.Brick, a.App, a.superOf, ins...)
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
