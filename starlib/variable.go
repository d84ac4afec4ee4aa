package starlib

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// Variable is the Starlark value of a symbolic variable (type name
// "TensorVariable"): Theano's TensorVariable, TensorSharedVariable and
// TensorConstant.
//
//	x + y, x - y, x * y, x / y, -x   elementwise, with variables, numbers
//	                                 (int: an int constant, float: floatX;
//	                                 both take the other operand's dtype),
//	                                 arrays and lists on either side
//	x[i], x[i, j], x[":", 0], x["1:3", "::2"], x[slice(1, 3), 0], x["...", -1]
//	                                 basic indexing (see below)
//	x.name (settable), x.dtype, x.ndim, x.type, x.T, x.tag.roles
//	x.sum(axis=None, keepdims=False, dtype=None), mean(...), prod(...)
//	x.max(axis=None, keepdims=False), min(...)
//	x.argmax(axis=None, keepdims=False), argmin(...)
//	x.flatten(ndim=1), x.reshape(shape), x.dimshuffle(*pattern)
//	x.dot(y), x.astype(dtype), x.square(), x.sqrt(), x.exp(), x.log(),
//	x.copy(), x.eval(inputs_dict=None)
//	x.get_value(), x.set_value(value)   shared variables only
//
// Comparisons: Starlark's < <= > >= must give a bool, so the elementwise
// comparisons are functions: tensor.lt, le, gt, ge, eq, neq. x == y is
// identity (the same graph node), so variables can be dict keys, as in
// x.eval({x: batch}).
//
// Indexing: Starlark allows x[i], x[i, j] and the one-axis slice x[a:b],
// but not a slice inside a multi-axis index (x[:, 0] is a syntax error),
// and it resolves x[a:b] against a length, which a symbolic variable does
// not have. Write a slice as a string or with slice(): x[":", 0] for
// x[:, 0], x["1:"] or x[slice(1, None)] for x[1:].
//
// Freezing (Starlark freezes a module's globals once it has run) forbids
// renaming or re-tagging the variable from Starlark; it never stops the
// trainer, or set_value, from changing a shared variable's value, which is
// host state like a file's contents.
type Variable struct {
	V      *core.Variable
	frozen bool
}

var (
	_ starlark.Value       = (*Variable)(nil)
	_ starlark.HasAttrs    = (*Variable)(nil)
	_ starlark.HasSetField = (*Variable)(nil)
	_ starlark.HasBinary   = (*Variable)(nil)
	_ starlark.HasUnary    = (*Variable)(nil)
	_ starlark.Mapping     = (*Variable)(nil)
	_ starlark.Comparable  = (*Variable)(nil)
	_ starlark.Container   = (*Variable)(nil)
)

// String is the name, or Theano's description of an unnamed variable
// ("Elemwise{add}.0", "TensorType(float32, matrix)").
func (v *Variable) String() string { return v.V.String() }

// Type is "TensorVariable".
func (v *Variable) Type() string { return "TensorVariable" }

// Freeze forbids renaming and re-tagging from Starlark.
func (v *Variable) Freeze() { v.frozen = true }

// Truth is always true.
func (v *Variable) Truth() starlark.Bool { return true }

// Hash is the identity of the graph node.
func (v *Variable) Hash() (uint32, error) {
	id := uint64(v.V.ID())
	return uint32(id ^ id>>32), nil
}

// CompareSameType is identity for == and !=; ordered comparisons are
// refused with a pointer to the elementwise functions.
func (v *Variable) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	w := y.(*Variable)
	switch op {
	case syntax.EQL:
		return v.V == w.V, nil
	case syntax.NEQ:
		return v.V != w.V, nil
	}
	return false, fmt.Errorf("%s %s %s: symbolic comparisons are elementwise; use tensor.%s(x, y)", v, op, w, compareNames[op])
}

var compareNames = map[syntax.Token]string{syntax.LT: "lt", syntax.LE: "le", syntax.GT: "gt", syntax.GE: "ge"}

// Has refuses `in`: a symbolic variable has no elements yet.
func (v *Variable) Has(y starlark.Value) (bool, error) {
	return false, fmt.Errorf("'in' on a symbolic variable is not supported (it has no value yet)")
}

// Binary implements + - * / with variables, numbers, arrays and lists.
func (v *Variable) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (r starlark.Value, err error) {
	defer RecoverInternal("TensorVariable "+op.String(), &err)
	f := binaryOp(op)
	if f == nil {
		return nil, nil
	}
	// Without a thread, floats become the variable's dtype when it is a
	// float, else float64 (core promotes as numpy does).
	floatX := nd.Float64
	if v.V.DType().IsFloat() {
		floatX = v.V.DType()
	}
	w, err := ToVariable(y, floatX)
	if err != nil {
		switch y.(type) {
		case starlark.Tuple, *starlark.List:
			return nil, fmt.Errorf("%s %s list: %v", v, op, err)
		}
		return nil, nil // let the other operand try, else Starlark's error
	}
	if side == starlark.Left {
		return &Variable{V: f(v.V, w)}, nil
	}
	return &Variable{V: f(w, v.V)}, nil
}

// Unary implements -x and +x.
func (v *Variable) Unary(op syntax.Token) (starlark.Value, error) {
	switch op {
	case syntax.MINUS:
		return &Variable{V: core.Neg(v.V)}, nil
	case syntax.PLUS:
		return v, nil
	}
	return nil, nil
}

// Get implements x[key] (basic indexing).
func (v *Variable) Get(key starlark.Value) (r starlark.Value, found bool, err error) {
	defer RecoverInternal("TensorVariable index", &err)
	stripped, newaxes := splitNewaxis(key, v.V.NDim())
	idx, err := parseIndex(stripped, v.V.NDim())
	if err != nil {
		return nil, false, fmt.Errorf("%s[%s]: %v", v, key, err)
	}
	s, err := core.Subtensor(v.V, idx)
	if err == nil {
		s, err = insertNewaxes(s, newaxes)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s[%s]: %v", v, key, err)
	}
	return &Variable{V: s}, true, nil
}

// SetField sets name (a string or None) or refuses.
func (v *Variable) SetField(name string, val starlark.Value) error {
	if name != "name" {
		if _, ok := variableAttrs[name]; ok || name == "tag" {
			return fmt.Errorf("cannot set .%s of %s", name, v)
		}
		return starlark.NoSuchAttrError(fmt.Sprintf("TensorVariable has no .%s field", name))
	}
	if v.frozen {
		return fmt.Errorf("cannot set .name of %s: it is frozen (defined by a module that has finished loading)", v)
	}
	if val == starlark.None {
		v.V.Name = ""
		return nil
	}
	s, ok := starlark.AsString(val)
	if !ok {
		return fmt.Errorf("name: got %s, want string or None", val.Type())
	}
	v.V.Name = s
	return nil
}

var variableAttrs = map[string]bool{"name": true, "dtype": true, "ndim": true, "type": true, "T": true, "shape": true, "size": true}

var variableMethods = map[string]BuiltinFunc{
	"sum":        varReduce,
	"mean":       varReduce,
	"prod":       varReduce,
	"max":        varReduce,
	"std":        varReduce,
	"var":        varReduce,
	"min":        varReduce,
	"argmax":     varArg,
	"argmin":     varArg,
	"flatten":    varFlatten,
	"reshape":    varReshape,
	"dimshuffle": varDimshuffle,
	"dot":        varDot,
	"astype":     varAstype,
	"square":     varUnary,
	"sqrt":       varUnary,
	"exp":        varUnary,
	"log":        varUnary,
	"copy":       varUnary,
	"eval":       varEval,
	"get_value":  varGetValue,
	"set_value":  varSetValue,
	"norm":       varNorm,
}

// varNorm is Theano's x.norm(L): the L1 or L2 norm of all the entries.
func varNorm(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	x := b.Receiver().(*Variable)
	var l int
	if err := starlark.UnpackArgs("norm", args, kwargs, "L", &l); err != nil {
		return nil, err
	}
	switch l {
	case 1:
		return NewVariable(thread, core.SumAll(core.Abs(x.V))), nil
	case 2:
		return NewVariable(thread, core.Sqrt(core.SumAll(core.Sqr(x.V)))), nil
	}
	return nil, fmt.Errorf("norm: L must be 1 or 2, got %d", l)
}

// Attr returns the attributes and methods listed in the type's doc.
func (v *Variable) Attr(name string) (starlark.Value, error) {
	switch name {
	case "name":
		if v.V.Name == "" {
			return starlark.None, nil
		}
		return starlark.String(v.V.Name), nil
	case "dtype":
		return starlark.String(v.V.DType().String()), nil
	case "ndim":
		return starlark.MakeInt(v.V.NDim()), nil
	case "type":
		return starlark.String(v.V.TypeString()), nil
	case "T":
		return &Variable{V: core.Transpose(v.V)}, nil
	case "shape":
		// Theano's symbolic shape: an int64 vector (x.shape[0] is a
		// scalar variable).
		return &Variable{V: core.ShapeOf(v.V)}, nil
	case "size":
		p, err := core.Prod(core.ShapeOf(v.V), nil, false)
		if err != nil {
			return nil, err
		}
		return &Variable{V: p}, nil
	case "tag":
		return &Tag{v: v}, nil
	}
	if m, ok := variableMethods[name]; ok {
		if (name == "get_value" || name == "set_value") && !v.V.IsShared() {
			return nil, starlark.NoSuchAttrError(fmt.Sprintf("%s is not a shared variable: it has no .%s", v, name))
		}
		return NewBuiltin(name, m).BindReceiver(v), nil
	}
	return nil, nil
}

// AttrNames lists the attributes and methods.
func (v *Variable) AttrNames() []string {
	names := []string{"tag"}
	for n := range variableAttrs {
		names = append(names, n)
	}
	for n := range variableMethods {
		if (n == "get_value" || n == "set_value") && !v.V.IsShared() {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func recv(b *starlark.Builtin) *core.Variable { return b.Receiver().(*Variable).V }

func varReduce(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return ReduceBuiltin(thread, b.Name(), recv(b), args, kwargs)
}

// ReduceBuiltin unpacks (axis=None, keepdims=False[, dtype=None]) and
// applies the reduction name.
func ReduceBuiltin(thread *starlark.Thread, name string, x *core.Variable, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var axes Axes
	var keepdims bool
	var dt DTypeArg
	pairs := []any{"axis?", &axes, "keepdims?", &keepdims}
	var ddof int
	var corrected bool
	switch name {
	case "sum", "mean", "prod":
		pairs = append(pairs, "dtype?", &dt)
	case "var", "std":
		// Theano's var(input, axis=None, ddof=0, keepdims=False,
		// corrected=False): corrected picks Theano's two-pass algorithm,
		// the same value.
		pairs = []any{"axis?", &axes, "ddof?", &ddof, "keepdims?", &keepdims, "corrected?", &corrected}
	}
	if err := starlark.UnpackArgs(name, args, kwargs, pairs...); err != nil {
		return nil, err
	}
	var r *core.Variable
	var err error
	switch name {
	case "sum":
		r, err = core.Sum(x, axes.Axes, keepdims, dt.Get(thread))
	case "mean":
		r, err = core.Mean(x, axes.Axes, keepdims, dt.Get(thread))
		if err == nil && r != x {
			// Theano's tensor.mean names its result (Blocks'
			// create_your_own_brick.rst prints the auxiliary x.mean()
			// as [mean]).
			r.Name = "mean"
		}
	case "prod":
		r, err = core.Prod(x, axes.Axes, keepdims)
		if err == nil && dt.IsSet() {
			r = core.Cast(r, *dt.Get(thread))
		}
	case "max":
		r, err = core.Max(x, axes.Axes, keepdims)
	case "min":
		r, err = core.Min(x, axes.Axes, keepdims)
	case "var", "std":
		r, err = variance(x, axes.Axes, ddof, keepdims)
		if err == nil && name == "std" {
			r = core.Sqrt(r)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return NewVariable(thread, r), nil
}

// variance is Theano's tensor.var: the mean of the squared deviations
// from the mean along axes (all when nil), their sum divided by n - ddof
// for ddof > 0, n the number of elements reduced.
func variance(x *core.Variable, axes []int, ddof int, keepdims bool) (*core.Variable, error) {
	m, err := core.Mean(x, axes, true, nil)
	if err != nil {
		return nil, err
	}
	sq := core.Sqr(core.Sub(x, m))
	if ddof == 0 {
		return core.Mean(sq, axes, keepdims, nil)
	}
	s, err := core.Sum(sq, axes, keepdims, nil)
	if err != nil {
		return nil, err
	}
	if axes == nil {
		for a := 0; a < x.NDim(); a++ {
			axes = append(axes, a)
		}
	}
	n := core.Const(nd.Int64, 1)
	for _, a := range axes {
		if a < 0 {
			a += x.NDim()
		}
		d, err := core.ShapeI(x, a)
		if err != nil {
			return nil, err
		}
		n = core.Mul(n, d)
	}
	return core.Div(s, core.Cast(core.Sub(n, core.Const(nd.Int64, float64(ddof))), s.DType())), nil
}

func varArg(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return ArgBuiltin(thread, b.Name(), recv(b), args, kwargs)
}

// ArgBuiltin is argmax or argmin (name) of the variable x, with the
// arguments (axis=None, keepdims=False).
func ArgBuiltin(thread *starlark.Thread, name string, x *core.Variable, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var axis Axis
	var keepdims bool
	if err := starlark.UnpackArgs(name, args, kwargs, "axis?", &axis, "keepdims?", &keepdims); err != nil {
		return nil, err
	}
	var r *core.Variable
	var err error
	if name == "argmax" {
		r, err = core.Argmax(x, axis.Axis, keepdims)
	} else {
		r, err = core.Argmin(x, axis.Axis, keepdims)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return NewVariable(thread, r), nil
}

func varFlatten(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	ndim := 1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "ndim?", &ndim); err != nil {
		return nil, err
	}
	r, err := core.Flatten(recv(b), ndim)
	if err != nil {
		return nil, err
	}
	return NewVariable(thread, r), nil
}

func varReshape(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("reshape: unexpected keyword arguments")
	}
	shape, err := ShapeArgs(b.Name(), args)
	if err != nil {
		return nil, err
	}
	r, err := core.Reshape(recv(b), shape)
	if err != nil {
		return nil, err
	}
	return NewVariable(thread, r), nil
}

func varDimshuffle(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("dimshuffle: unexpected keyword arguments")
	}
	return Dimshuffle(thread, recv(b), args)
}

// Dimshuffle reads a pattern given as arguments or as one tuple or list:
// ints for input axes, 'x' for a new broadcastable axis.
func Dimshuffle(thread *starlark.Thread, x *core.Variable, args starlark.Tuple) (starlark.Value, error) {
	items := []starlark.Value(args)
	if len(args) == 1 {
		if e, ok := Elems(args[0]); ok {
			items = e
		}
	}
	pattern := make([]int, len(items))
	for i, it := range items {
		if s, ok := starlark.AsString(it); ok {
			if s != "x" {
				return nil, fmt.Errorf("dimshuffle: pattern entry %q must be an axis or 'x'", s)
			}
			pattern[i] = -1
			continue
		}
		if err := starlark.AsInt(IndexValue(it), &pattern[i]); err != nil {
			return nil, fmt.Errorf("dimshuffle: pattern entry %s must be an axis or 'x'", it)
		}
		if pattern[i] < 0 {
			return nil, fmt.Errorf("dimshuffle: axis %d must not be negative", pattern[i])
		}
	}
	r, err := core.Dimshuffle(x, pattern)
	if err != nil {
		return nil, err
	}
	return NewVariable(thread, r), nil
}

func varDot(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var y starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "y", &y); err != nil {
		return nil, err
	}
	w, err := AsVariable(thread, y)
	if err != nil {
		return nil, fmt.Errorf("dot: %v", err)
	}
	r, err := core.Dot(recv(b), w)
	if err != nil {
		return nil, err
	}
	return NewVariable(thread, r), nil
}

func varAstype(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var dt DTypeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dtype", &dt); err != nil {
		return nil, err
	}
	if !dt.IsSet() {
		return nil, fmt.Errorf("astype: dtype must not be None")
	}
	return NewVariable(thread, core.Cast(recv(b), *dt.Get(thread))), nil
}

func varUnary(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if b.Name() == "copy" {
		// Theano's copy(name=None): the identity, named.
		var name starlark.Value = starlark.None
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name?", &name); err != nil {
			return nil, err
		}
		r := recv(b).Copy()
		if name != starlark.None {
			s, ok := starlark.AsString(name)
			if !ok {
				return nil, fmt.Errorf("copy: name must be a string or None, got %s", name.Type())
			}
			r.Name = s
		}
		return NewVariable(thread, r), nil
	}
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	x := recv(b)
	var r *core.Variable
	switch b.Name() {
	case "square":
		r = core.Sqr(x)
	case "sqrt":
		r = core.Sqrt(x)
	case "exp":
		r = core.Exp(x)
	case "log":
		r = core.Log(x)
	case "copy":
		r = x.Copy()
	}
	return NewVariable(thread, r), nil
}

// varEval compiles and runs the variable: eval(inputs_dict=None) with a
// dict mapping input variables to arrays or lists.
func varEval(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := settingsCheckpoint(thread); err != nil {
		return nil, err
	}
	var d *starlark.Dict
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "inputs_dict??", &d); err != nil {
		return nil, err
	}
	var inputs []*core.Variable
	var vals []*nd.Array
	if d != nil {
		for _, item := range d.Items() {
			k, ok := item[0].(*Variable)
			if !ok {
				return nil, fmt.Errorf("eval: inputs_dict keys must be input variables, got %s", item[0].Type())
			}
			a, err := InputArray(k.V, item[1])
			if err != nil {
				return nil, fmt.Errorf("eval: %v", err)
			}
			inputs = append(inputs, k.V)
			vals = append(vals, a)
		}
	}
	f, err := core.CompileFor(Device(thread), inputs, []*core.Variable{recv(b)}, nil)
	if err != nil {
		return nil, fmt.Errorf("eval: %v", err)
	}
	f.SetMemoryLimit(memoryLimit(thread))
	out, err := f.Call(vals)
	if err != nil {
		return nil, fmt.Errorf("eval: %v", err)
	}
	return FromArray(out[0]), nil
}

// InputArray converts a value given for the input variable in: an
// ndarray as it is (the compiled function checks its dtype: an int array
// may feed a float variable of enough precision, never the reverse), a
// number or (nested) list converted to the variable's dtype.
func InputArray(in *core.Variable, v starlark.Value) (*nd.Array, error) {
	if a, ok := v.(*Array); ok {
		if !core.CanFeed(a.A.DType(), in.DType()) {
			return nil, fmt.Errorf("input %s is %s but got a %s array; convert it first: a.astype(%q)",
				in, in.TypeString(), a.A.DType(), in.DType().String())
		}
		return a.A, nil
	}
	dt := in.DType()
	a, err := ToArray(v, &dt)
	if err != nil {
		return nil, fmt.Errorf("value for %s (%s): %v", in, in.TypeString(), err)
	}
	return a, nil
}

func varGetValue(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	// borrow and return_internal_type are Theano's; the value is always
	// a copy here (a script cannot alias the shared storage).
	var borrow, internal bool
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "borrow?", &borrow, "return_internal_type?", &internal); err != nil {
		return nil, err
	}
	return FromArray(recv(b).Value().Copy()), nil
}

// varSetValue stores a new value: an array or nested lists of the same
// number of dimensions (the shape may change), converted to the
// variable's dtype within its kind (float64 data into a float32 variable
// is fine, floats into an integer variable are refused).
func varSetValue(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var val starlark.Value
	var borrow bool // Theano's; the value is always copied in
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &val, "borrow?", &borrow); err != nil {
		return nil, err
	}
	v := recv(b)
	if err := SetSharedValue(v, val); err != nil {
		return nil, fmt.Errorf("set_value: %v", err)
	}
	return starlark.None, nil
}

// SetSharedValue stores val (an array, nested lists or a number) into the
// shared variable v, converted to its dtype. A value of the same shape is
// copied into the existing array, which every compiled function reads;
// another shape of the same number of dimensions replaces it.
func SetSharedValue(v *core.Variable, val starlark.Value) error {
	dt := v.DType()
	if a, ok := val.(*Array); ok && a.A.DType().IsFloat() && !dt.IsFloat() {
		return fmt.Errorf("%s is %s: cannot store %s data in it", v, v.TypeString(), a.A.DType())
	}
	a, err := ToArray(val, &dt)
	if err != nil {
		return err
	}
	if a.NDim() != v.NDim() {
		return fmt.Errorf("%s is %s (%d-d), got a value of shape %v", v, v.TypeString(), v.NDim(), a.Shape)
	}
	if old := v.Value(); old != nil && nd.SameShape(old.Shape, a.Shape) {
		v.BeforeWrite()
		return old.CopyFrom(a)
	}
	if a == ValueArray(val) {
		a = a.Copy() // never share storage with a script's array
	}
	return v.SetValue(a)
}

// ValueArray is the array v holds when v is an Array, else nil.
func ValueArray(v starlark.Value) *nd.Array {
	if a, ok := v.(*Array); ok {
		return a.A
	}
	return nil
}

// Tag is a variable's tag (Blocks' var.tag): tag.roles lists its roles;
// assigning a list of roles replaces them.
type Tag struct {
	v *Variable
}

var _ starlark.HasSetField = (*Tag)(nil)

func (t *Tag) String() string        { return fmt.Sprintf("<tag of %s>", t.v) }
func (t *Tag) Type() string          { return "tag" }
func (t *Tag) Freeze()               {}
func (t *Tag) Truth() starlark.Bool  { return true }
func (t *Tag) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tag") }

// Attr returns roles (a new list of the variable's roles), name and
// aggregation_scheme (when set).
func (t *Tag) Attr(name string) (starlark.Value, error) {
	if v, ok, err := tagAttrMore(t, name); ok {
		return v, err
	}
	if name == "roles" {
		roles := make([]starlark.Value, len(t.v.V.Tag.Roles))
		for i, r := range t.v.V.Tag.Roles {
			roles[i] = &Role{R: r}
		}
		return starlark.NewList(roles), nil
	}
	return nil, nil
}

// AttrNames lists roles and the attributes of tagAttrMore.
func (t *Tag) AttrNames() []string { return append([]string{"roles"}, tagAttrNamesMore(t)...) }

// SetField replaces the roles, or sets a field of setTagFieldMore.
func (t *Tag) SetField(name string, val starlark.Value) error {
	if ok, err := setTagFieldMore(t, name, val); ok {
		return err
	}
	if name != "roles" {
		return starlark.NoSuchAttrError(fmt.Sprintf("tag has no .%s field", name))
	}
	if t.v.frozen {
		return fmt.Errorf("cannot set the roles of %s: it is frozen (defined by a module that has finished loading)", t.v)
	}
	items, ok := Elems(val)
	if !ok {
		return fmt.Errorf("tag.roles: got %s, want a list of roles", val.Type())
	}
	roles := make([]*core.Role, len(items))
	for i, it := range items {
		r, ok := it.(*Role)
		if !ok {
			return fmt.Errorf("tag.roles: item %d is %s, want a role", i, it.Type())
		}
		roles[i] = r.R
	}
	t.v.V.Tag.Roles = roles
	return nil
}

// Role is the Starlark value of one of Blocks' roles (WEIGHT, BIAS, ...),
// printed by name. Roles compare by identity.
type Role struct {
	R *core.Role
}

var _ starlark.Comparable = (*Role)(nil)

func (r *Role) String() string        { return r.R.Name }
func (r *Role) Type() string          { return "VariableRole" }
func (r *Role) Freeze()               {}
func (r *Role) Truth() starlark.Bool  { return true }
func (r *Role) Hash() (uint32, error) { return starlark.String(r.R.Name).Hash() }

// CompareSameType is identity for == and !=.
func (r *Role) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	switch op {
	case syntax.EQL:
		return r.R == y.(*Role).R, nil
	case syntax.NEQ:
		return r.R != y.(*Role).R, nil
	}
	return false, fmt.Errorf("roles are not ordered")
}
