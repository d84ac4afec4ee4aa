package blocks

import (
	"fmt"
	"slices"
	"sort"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Applications of script bricks as Blocks' Application (the class-level
// object, an AppDecl here) and BoundApplication (per brick) have them:
//
//	apply.property(name)(fn)   brick.apply.<name> is fn(brick)
//	apply.delegate(fn)         an attribute the application lacks is read from fn(brick), an application
//	Class.apply.x = v          a class-level attribute (inputs are checked against the method's arguments)
//	brick.apply.x = v          the brick's own (wins over properties, the class and the delegate)
//	recurrent(sequences=[...], states=[...], outputs=[...], contexts=[...])(fn)
//
// A bound application's attribute is looked up as Blocks does: the
// brick's own, a property, the class level, then the delegate. Its
// outputs (also through a property or the delegate) name the outputs of
// each call.
//
// A @recurrent method of a BaseRecurrent subclass is one step; calling it
// iterates over the sequences (bricks.ApplyRecurrent) with Blocks'
// keywords iterate, reverse, return_initial_states, n_steps and
// batch_size. Missing states come from the brick's initial_states(batch_size,
// **inputs) (BaseRecurrent's: zeros of get_dim(state) for the states of
// its apply application, as Blocks'; a subclass may override it).

// Attr is a class-level attribute: property, delegate, name, the
// declared inputs and outputs, the other attributes given or set.
func (d *AppDecl) Attr(name string) (starlark.Value, error) {
	switch name {
	case "property":
		return starlib.NewBuiltin("property", func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var pv starlark.Value
			if err := starlark.UnpackPositionalArgs("property", args, kwargs, 1, &pv); err != nil {
				return nil, err
			}
			pname, ok := starlark.AsString(pv)
			if !ok {
				return nil, fmt.Errorf("ValueError: %s.property(name): name must be a string, got %s", d.fn.Name(), pv.Type())
			}
			return starlib.NewBuiltin("property", func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				var f starlark.Callable
				if err := starlark.UnpackPositionalArgs(d.fn.Name()+".property("+pname+")", args, kwargs, 1, &f); err != nil {
					return nil, err
				}
				if d.props == nil {
					d.props = map[string]starlark.Callable{}
				}
				d.props[pname] = f
				return f, nil
			}), nil
		}), nil
	case "delegate":
		return starlib.NewBuiltin("delegate", func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var f starlark.Callable
			if err := starlark.UnpackPositionalArgs(d.fn.Name()+".delegate", args, kwargs, 1, &f); err != nil {
				return nil, err
			}
			d.delegate = f
			return f, nil
		}), nil
	case "name":
		return starlark.String(d.fn.Name()), nil
	}
	if v, ok := d.classAttr(name); ok {
		return v, nil
	}
	if f, ok := d.props[name]; ok {
		return f, nil
	}
	return nil, nil
}

// AttrNames lists the class-level attributes.
func (d *AppDecl) AttrNames() []string {
	names := []string{"delegate", "name", "property"}
	if d.inputs != nil {
		names = append(names, "inputs")
	}
	if d.outputs != nil {
		names = append(names, "outputs")
	}
	for k := range d.attrs {
		names = append(names, k)
	}
	for k := range d.props {
		names = append(names, k)
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// classAttr is a class-level attribute given or set (not a property).
func (d *AppDecl) classAttr(name string) (starlark.Value, bool) {
	switch name {
	case "inputs":
		if d.inputs != nil {
			return starlib.StringList(d.inputs), true
		}
	case "outputs":
		if d.outputs != nil {
			return starlib.StringList(d.outputs), true
		}
	}
	v, ok := d.attrs[name]
	return v, ok
}

// SetField sets a class-level attribute (Class.apply.inputs = [...]); a
// property is read-only, as in Blocks.
func (d *AppDecl) SetField(name string, v starlark.Value) error {
	if _, ok := d.props[name]; ok {
		return fmt.Errorf("AttributeError: can't set attribute %s of application %s (it is a property)", name, d.fn.Name())
	}
	switch name {
	case "property", "delegate", "name":
		return fmt.Errorf("AttributeError: can't set attribute %s of application %s", name, d.fn.Name())
	case "inputs":
		ins, err := strList(d.fn.Name(), "inputs", v)
		if err != nil {
			return err
		}
		var args []string
		for i := 1; i < d.fn.NumParams(); i++ {
			p, _ := d.fn.Param(i)
			args = append(args, p)
		}
		for _, n := range ins {
			if !slices.Contains(args, n) {
				return fmt.Errorf("ValueError: Unexpected inputs: %s is not an argument of %s (%s)", n, d.fn.Name(), d.fn.Position())
			}
		}
		d.inputs = ins
		return nil
	case "outputs":
		outs, err := strList(d.fn.Name(), "outputs", v)
		if err != nil {
			return err
		}
		d.outputs = outs
		return nil
	case "sequences", "states", "contexts":
		if d.rec != nil {
			return fmt.Errorf("AttributeError: the %s of the recurrent application %s are fixed by recurrent(...)", name, d.fn.Name())
		}
	}
	if d.attrs == nil {
		d.attrs = map[string]starlark.Value{}
	}
	d.attrs[name] = v
	return nil
}

// scriptBoundAttr is an attribute of a script brick's application:
// the brick's own, a property, the class level, then the delegate's.
// found is false when none has it (the bound application's defaults
// answer).
func scriptBoundAttr(a *BoundApplication, d *AppDecl, name string) (v starlark.Value, found bool, err error) {
	x := brickExtra(a.Brick)
	if v, ok := x.appAttrs[a.App][name]; ok {
		return v, true, nil
	}
	switch name {
	case "brick", "name":
		return nil, false, nil
	}
	thread := x.st.Class.Thread()
	self := &Brick{B: a.Brick}
	if f, ok := d.props[name]; ok {
		v, err := starlark.Call(thread, f, starlark.Tuple{self}, nil)
		return v, true, err
	}
	if v, ok := d.classAttr(name); ok {
		return v, true, nil
	}
	if d.delegate == nil {
		return nil, false, nil
	}
	t, err := starlark.Call(thread, d.delegate, starlark.Tuple{self}, nil)
	if err != nil {
		return nil, true, err
	}
	h, ok := t.(starlark.HasAttrs)
	if !ok {
		return nil, true, fmt.Errorf("the delegate of %s.%s returned %s, want an application", self.B.BaseBrick().Name, a.App, t.Type())
	}
	v, err = h.Attr(name)
	if v == nil && err == nil {
		err = starlark.NoSuchAttrError(fmt.Sprintf("AttributeError: %s (the delegate of %s.%s) has no attribute %s", t, self.B.BaseBrick().Name, a.App, name))
	}
	return v, true, err
}

// SetField sets an attribute of a script brick's application for this
// brick only (Blocks' BoundApplication attributes).
func (a *BoundApplication) SetField(name string, v starlark.Value) error {
	x := brickExtra(a.Brick)
	if x == nil || scriptAppDecl(a.Brick, a.App) == nil {
		return fmt.Errorf("%s.%s: the attributes of a built-in brick's application are read-only", a.Brick.BaseBrick().Name, a.App)
	}
	switch name {
	case "brick", "name":
		return fmt.Errorf("AttributeError: can't set attribute %s of %s.%s", name, a.Brick.BaseBrick().Name, a.App)
	}
	if x.appAttrs == nil {
		x.appAttrs = map[string]map[string]starlark.Value{}
	}
	if x.appAttrs[a.App] == nil {
		x.appAttrs[a.App] = map[string]starlark.Value{}
	}
	x.appAttrs[a.App][name] = v
	return nil
}

// syncOutputs sets the brick's application's output names from the
// bound application's outputs (the brick's own, a property's, the
// class's or the delegate's), as Blocks names outputs by them.
func syncOutputs(br bricks.Brick, name string, d *AppDecl) error {
	app := br.BaseBrick().Application(name)
	if app == nil {
		return nil
	}
	v, found, err := scriptBoundAttr(&BoundApplication{Brick: br, App: name}, d, "outputs")
	if err != nil {
		if _, missing := err.(starlark.NoSuchAttrError); missing {
			return nil // Blocks names the outputs output_i then
		}
		return err
	}
	if !found {
		app.Outputs = d.outputs
		return nil
	}
	outs, err := strList(br.BaseBrick().Name+"."+name, "outputs", v)
	if err != nil {
		return err
	}
	app.Outputs = outs
	return nil
}

// recurrentBuiltin is Blocks' recurrent(sequences=[...], states=[...],
// outputs=[...], contexts=[...]) decorator of a BaseRecurrent subclass's
// step method.
func recurrentBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("recurrent: write recurrent(sequences=[...], states=[...], outputs=[...], contexts=[...])(fn), got a positional %s", args[0].Type())
	}
	spec := bricks.RecurrentSpec{}
	attrs := map[string]starlark.Value{}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		var dst *[]string
		switch k {
		case "sequences":
			dst = &spec.Sequences
		case "states":
			dst = &spec.States
		case "outputs":
			dst = &spec.Outputs
		case "contexts":
			dst = &spec.Contexts
		}
		if dst != nil {
			ss, err := strList("recurrent", k, kv[1])
			if err != nil {
				return nil, err
			}
			*dst = ss
		}
		attrs[k] = kv[1]
	}
	for _, k := range []string{"sequences", "states", "contexts"} {
		if _, ok := attrs[k]; !ok {
			attrs[k] = starlark.NewList(nil)
		}
	}
	return starlib.NewBuiltin("recurrent", func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var f starlark.Value
		if err := starlark.UnpackPositionalArgs("recurrent(...)", args, kwargs, 1, &f); err != nil {
			return nil, err
		}
		fn, ok := f.(*starlark.Function)
		if !ok {
			return nil, fmt.Errorf("recurrent(...)(fn): fn must be a function (def), got %s", f.Type())
		}
		d, err := newAppDecl(fn, nil, spec.Outputs)
		if err != nil {
			return nil, err
		}
		params, _ := d.params()
		for _, n := range slices.Concat(spec.Sequences, spec.States, spec.Contexts) {
			if !slices.Contains(params, n) && !fn.HasKwargs() {
				return nil, fmt.Errorf("recurrent: %s (%s) has no argument %s", fn.Name(), fn.Position(), n)
			}
		}
		for _, n := range spec.States {
			if !slices.Contains(spec.Outputs, n) {
				return nil, fmt.Errorf("recurrent: %s (%s): the state %s is not among the outputs %v (a state's next value is the output of its name)", fn.Name(), fn.Position(), n, spec.Outputs)
			}
		}
		d.attrs = attrs
		s := spec
		d.rec = &s
		return d, nil
	}), nil
}

// recurrentApp is the brick's recurrent application of the @recurrent
// method: its step calls the method with the inputs by name.
func (d *AppDecl) recurrentApp(thread *starlark.Thread, b *Brick, name string) *bricks.RecurrentApp {
	_, takesCall := d.params()
	return &bricks.RecurrentApp{
		Spec: *d.rec,
		Step: func(in map[string]*core.Variable) ([]*core.Variable, error) {
			var kw []starlark.Tuple
			for _, k := range sortedNames(in) {
				kw = append(kw, starlark.Tuple{starlark.String(k), &starlib.Variable{V: in[k]}})
			}
			if takesCall {
				call := &core.ApplicationCall{Brick: b.B.(core.Annotation), Application: name, Metadata: map[string]any{}}
				kw = append(kw, starlark.Tuple{starlark.String("application_call"), &ApplicationCall{C: call}})
			}
			r, err := starlark.Call(thread, d.fn, starlark.Tuple{b}, kw)
			if err != nil {
				return nil, err
			}
			outs, err := outputVariables(thread, r)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", d.fn.Name(), err)
			}
			if len(outs) != len(d.rec.Outputs) {
				return nil, fmt.Errorf("%s returned %d outputs, want %d (%v)", d.fn.Name(), len(outs), len(d.rec.Outputs), d.rec.Outputs)
			}
			return outs, nil
		},
		Initial: func(ref *core.Variable, axis int) ([]*core.Variable, error) {
			batch, err := core.ShapeI(ref, axis)
			if err != nil {
				return nil, err
			}
			return scriptInitialStates(thread, b, name, d.rec.States, &starlib.Variable{V: batch})
		},
	}
}

func sortedNames(m map[string]*core.Variable) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// outputVariables is a method's outputs: a variable, or a tuple or list of
// them.
func outputVariables(thread *starlark.Thread, r starlark.Value) ([]*core.Variable, error) {
	var vals []starlark.Value
	switch r := r.(type) {
	case starlark.Tuple:
		vals = r
	case *starlark.List:
		for i := 0; i < r.Len(); i++ {
			vals = append(vals, r.Index(i))
		}
	default:
		vals = []starlark.Value{r}
	}
	out := make([]*core.Variable, len(vals))
	for i, v := range vals {
		x, err := starlib.AsVariable(thread, v)
		if err != nil {
			return nil, fmt.Errorf("output %d: %v", i, err)
		}
		out[i] = x
	}
	return out, nil
}

// scriptInitialStates are the initial states of states: the brick's
// initial_states(batch_size) (a list in the order of its apply
// application's states, as Blocks zips them), picked by name.
func scriptInitialStates(thread *starlark.Thread, b *Brick, app string, states []string, batch starlark.Value) ([]*core.Variable, error) {
	f, err := scriptMember(b, "initial_states")
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, fmt.Errorf("%s has no initial_states", b.B.BaseBrick().Name)
	}
	r, err := starlark.Call(thread, f, starlark.Tuple{batch}, nil)
	if err != nil {
		return nil, err
	}
	vals, err := outputVariables(thread, r)
	if err != nil {
		return nil, fmt.Errorf("%s.initial_states: %v", b.B.BaseBrick().Name, err)
	}
	names := applyStates(b)
	out := make([]*core.Variable, len(states))
	for i, s := range states {
		j := slices.Index(names, s)
		if j < 0 || j >= len(vals) {
			return nil, fmt.Errorf("KeyError: no initial state for '%s' of the brick %s", s, b.B.BaseBrick().Name)
		}
		out[i] = vals[j]
	}
	return out, nil
}

// applyStates are the states of the brick's apply application (Blocks'
// initial_states.outputs).
func applyStates(b *Brick) []string {
	if spec, ok := applicationSpec(b.B, "apply"); ok {
		return spec.States
	}
	return nil
}

// defaultInitialStates is BaseRecurrent.initial_states(batch_size, *args,
// **kwargs): zeros (batch_size, get_dim(state)) (or (batch_size,) for a
// dimension 0) for each state of apply.
func defaultInitialStates(b *Brick) starlark.Value {
	return starlib.NewBuiltin("initial_states", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) < 1 {
			return nil, fmt.Errorf("initial_states: missing batch_size")
		}
		var batch *core.Variable
		if n, ok := args[0].(starlark.Int); ok {
			i, _ := n.Int64()
			batch = core.Const(nd.Int64, float64(i))
		} else {
			v, err := starlib.AsVariable(thread, args[0])
			if err != nil {
				return nil, fmt.Errorf("initial_states: batch_size: %v", err)
			}
			batch = v
		}
		getDim, err := scriptMember(b, "get_dim")
		if err != nil || getDim == nil {
			return nil, fmt.Errorf("initial_states: %s has no get_dim", b.B.BaseBrick().Name)
		}
		fx := BrickConfig(thread).FloatX
		var out []starlark.Value
		for _, s := range applyStates(b) {
			dv, err := starlark.Call(thread, getDim, starlark.Tuple{starlark.String(s)}, nil)
			if err != nil {
				return nil, err
			}
			var dim int
			if err := starlark.AsInt(dv, &dim); err != nil {
				return nil, fmt.Errorf("initial_states: get_dim(%q): %v", s, err)
			}
			dims := []*core.Variable{batch}
			if dim != 0 {
				dims = append(dims, core.Const(nd.Int64, float64(dim)))
			}
			z, err := core.AllocShaped(0, fx, dims)
			if err != nil {
				return nil, fmt.Errorf("initial_states: %v", err)
			}
			out = append(out, starlib.NewVariable(thread, z))
		}
		return starlark.NewList(out), nil
	})
}

// callScriptRecurrent is a call of a script brick's @recurrent
// application: inputs by position (the method's arguments in order) or
// name, and Blocks' iterate, reverse, return_initial_states, n_steps and
// batch_size.
func callScriptRecurrent(thread *starlark.Thread, a *BoundApplication, d *AppDecl, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	fname := a.Brick.BaseBrick().Name + "." + a.App
	params, _ := d.params()
	known := slices.Concat(d.rec.Sequences, d.rec.States, d.rec.Contexts)
	in := map[string]*core.Variable{}
	var opts bricks.RecurrentOptions
	set := func(k string, v starlark.Value) error {
		if v == starlark.None {
			return nil
		}
		if !slices.Contains(known, k) {
			return fmt.Errorf("%s got an unexpected keyword argument %s (it takes %v and iterate, reverse, return_initial_states, n_steps, batch_size)", fname, k, known)
		}
		if _, dup := in[k]; dup {
			return fmt.Errorf("%s got multiple values for %s", fname, k)
		}
		x, err := starlib.AsVariable(thread, v)
		if err != nil {
			return fmt.Errorf("%s: %s: %v", fname, k, err)
		}
		in[k] = x
		return nil
	}
	for i, v := range args {
		if i >= len(params) {
			return nil, fmt.Errorf("%s takes at most %d positional inputs (%v), got %d", fname, len(params), params, len(args))
		}
		if err := set(params[i], v); err != nil {
			return nil, err
		}
	}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		switch k {
		case "iterate", "reverse", "return_initial_states":
			b, ok := kv[1].(starlark.Bool)
			if !ok {
				return nil, fmt.Errorf("%s: %s must be a bool, got %s", fname, k, kv[1].Type())
			}
			switch k {
			case "iterate":
				opts.NoIterate = !bool(b)
			case "reverse":
				opts.Reverse = bool(b)
			default:
				opts.ReturnInitialStates = bool(b)
			}
		case "n_steps", "batch_size":
			var n int
			if err := starlark.AsInt(kv[1], &n); err != nil || n <= 0 {
				return nil, fmt.Errorf("%s: %s must be a positive int, got %s", fname, k, kv[1])
			}
			if k == "n_steps" {
				opts.NSteps = n
			} else {
				opts.BatchSize = n
			}
		default:
			if err := set(k, kv[1]); err != nil {
				return nil, err
			}
		}
	}
	outs, err := bricks.ApplyRecurrent(a.Brick, a.App, in, opts)
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

// scriptMember is a script brick's attribute name as its script class
// and Blocks' Brick give it (not the base brick's own).
func scriptMember(b *Brick, name string) (starlark.Value, error) {
	x := brickExtra(b.B)
	if x == nil {
		return nil, nil
	}
	v, _, err := scriptBrickAttr(b, x, name)
	return v, err
}
