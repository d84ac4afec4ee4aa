package starlib

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.starlark.net/starlark"
)

// Python classes in scripts. Starlark has no class statement; a script
// builds a class as Python's dynamic form does, type(name, bases,
// namespace): the class body becomes the namespace dict, a decorator
// becomes a call, and super(Cls, self) works as written:
//
//	def _init(self, dim):
//	    super(Scaler, self).__init__()
//	    self.dim = dim
//	Scaler = type("Scaler", (object,), {"__init__": _init, "factor": 2})
//
// A Class is such a class; an Instance is an instance of one whose bases
// are script classes or object. A library class (a brick class, ...) may
// be a base too: it implements NativeBase, and the instance is then the
// library's own value (a brick), which keeps its script attributes in an
// ObjectState and reports it through ScriptObject, so that the library
// takes it wherever it takes its own objects.
//
// Attribute lookup follows Python: a property of the class (or of a base,
// in the method resolution order), then the instance's own attributes,
// then the class attributes and methods in MRO order (functions bound to
// the instance), then the library base's. The MRO is Python's C3
// linearization.

// NativeBase is a library class a script class may derive from.
type NativeBase interface {
	starlark.Value
	// Name is the class name (Linear).
	Name() string
	// ScriptNew makes the value of a new instance of the script class
	// st.Class, before its __init__ runs.
	ScriptNew(thread *starlark.Thread, st *ObjectState) (starlark.Value, error)
	// ScriptInit is the base's __init__, called by super(C,
	// self).__init__(...) or when the class has no __init__ of its own.
	ScriptInit(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error
	// ScriptInitDone is called after the instance's __init__ returned.
	ScriptInitDone(thread *starlark.Thread, self starlark.Value) error
	// ScriptSuperAttr is super(C, self).name where the library base
	// is next in the MRO: its own method (the default _allocate, ...);
	// nil when it has none.
	ScriptSuperAttr(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error)
	// IsInstanceOf reports whether v is an instance of the class.
	IsInstanceOf(v starlark.Value) bool
	// IsSubclassOf reports whether the class derives from other (a
	// library class).
	IsSubclassOf(other starlark.Value) bool
	// Combine is the library base of a class with this base and other
	// (class C(Initializable, Feedforward)); an error when they cannot
	// be combined.
	Combine(other NativeBase) (NativeBase, error)
}

// ScriptObject is a library value that is an instance of a script class.
type ScriptObject interface {
	starlark.Value
	ScriptState() *ObjectState
}

// ObjectState is what an instance of a script class holds: its class and
// its own attributes, in the order they were first set.
type ObjectState struct {
	Class *Class
	names []string
	attrs map[string]starlark.Value
}

// NewObjectState returns the empty state of an instance of c.
func NewObjectState(c *Class) *ObjectState {
	return &ObjectState{Class: c, attrs: map[string]starlark.Value{}}
}

// Get returns an instance attribute.
func (st *ObjectState) Get(name string) (starlark.Value, bool) {
	v, ok := st.attrs[name]
	return v, ok
}

// Set sets an instance attribute.
func (st *ObjectState) Set(name string, v starlark.Value) {
	if _, ok := st.attrs[name]; !ok {
		st.names = append(st.names, name)
	}
	st.attrs[name] = v
}

// replace makes names (with values) the instance's attributes, in that
// order, and drops the others (a checkpoint's restore).
func (st *ObjectState) replace(names []string, values []starlark.Value) {
	st.names = append([]string(nil), names...)
	st.attrs = make(map[string]starlark.Value, len(names))
	for i, n := range names {
		st.attrs[n] = values[i]
	}
}

// Names are the instance attributes' names, in the order first set.
func (st *ObjectState) Names() []string { return append([]string(nil), st.names...) }

// Class is a class built by type(name, bases, namespace).
type Class struct {
	name   string
	bases  []starlark.Value // *Class or NativeBase
	names  []string         // namespace keys, in order
	dict   map[string]starlark.Value
	mro    []starlark.Value // the class itself first; *Class or NativeBase
	native NativeBase       // the library base, if any
	object bool             // Python's object
	thread *starlark.Thread // the thread that built it: properties and __repr__ run on a CallThread of it
	lazy   []string         // do_not_pickle_attributes' names (script_objects.go)
}

var (
	_ starlark.Callable    = (*Class)(nil)
	_ starlark.HasAttrs    = (*Class)(nil)
	_ starlark.HasSetField = (*Class)(nil)
)

// NewObjectClass returns Python's object, the root of every class.
func NewObjectClass() *Class {
	return &Class{name: "object", dict: map[string]starlark.Value{}, object: true}
}

// Name is the class name.
func (c *Class) Name() string { return c.name }

// Thread is the thread that built the class: it runs the class's
// properties and methods called from the library (Go) side.
func (c *Class) Thread() *starlark.Thread { return c.thread }

// Native is the library base of the class, nil if it has none.
func (c *Class) Native() NativeBase { return c.native }

// MRONames are the names of the classes of the MRO, the class first
// (object left out).
func (c *Class) MRONames() []string {
	var out []string
	for _, k := range c.mroOrSelf() {
		switch k := k.(type) {
		case *Class:
			out = append(out, k.name)
		case NativeBase:
			out = append(out, k.Name())
		}
	}
	return out
}

func (c *Class) mroOrSelf() []starlark.Value {
	if c.object {
		return nil
	}
	return c.mro
}

func (c *Class) String() string        { return "<class '" + c.name + "'>" }
func (c *Class) Type() string          { return "type" }
func (c *Class) Freeze()               {}
func (c *Class) Truth() starlark.Bool  { return true }
func (c *Class) Hash() (uint32, error) { return pointerHash(c), nil }

func pointerHash(p any) uint32 {
	x := reflect.ValueOf(p).Pointer()
	return uint32(x) ^ uint32(uint64(x)>>32)
}

// Lookup finds name in the class or its script bases, in MRO order: the
// raw namespace value and the class that has it.
func (c *Class) Lookup(name string) (starlark.Value, *Class) {
	for _, k := range c.mroOrSelf() {
		if k, ok := k.(*Class); ok {
			if v, ok := k.dict[name]; ok {
				return v, k
			}
		}
	}
	return nil, nil
}

// Attr is a class attribute: a function unbound, a classmethod bound to
// the class, a staticmethod's function, a property as such.
func (c *Class) Attr(name string) (starlark.Value, error) {
	switch name {
	case "__name__":
		return starlark.String(c.name), nil
	case "__bases__":
		return starlark.Tuple(append([]starlark.Value(nil), c.bases...)), nil
	case "__mro__":
		out := append(starlark.Tuple(nil), c.mroOrSelf()...)
		return append(out, objectOf(c)), nil
	}
	v, _ := c.Lookup(name)
	if v == nil {
		if c.native != nil {
			if h, ok := c.native.(starlark.HasAttrs); ok {
				return h.Attr(name)
			}
		}
		return nil, nil
	}
	switch v := v.(type) {
	case *StaticMethod:
		return v.fn, nil
	case *ClassMethod:
		return &BoundMethod{fn: v.fn, self: c, name: c.name + "." + name}, nil
	}
	return v, nil
}

// objectOf is the object class ending c's MRO.
func objectOf(c *Class) starlark.Value {
	for _, b := range c.bases {
		switch b := b.(type) {
		case *Class:
			if b.object {
				return b
			}
			return objectOf(b)
		}
	}
	return NewObjectClass()
}

// AttrNames lists the class attributes.
func (c *Class) AttrNames() []string {
	seen := map[string]bool{"__name__": true, "__bases__": true, "__mro__": true}
	for _, k := range c.mroOrSelf() {
		if k, ok := k.(*Class); ok {
			for _, n := range k.names {
				seen[n] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SetField sets a class attribute (Class.count = 0).
func (c *Class) SetField(name string, v starlark.Value) error {
	if c.object {
		return fmt.Errorf("can't set attributes of built-in type 'object'")
	}
	if _, ok := c.dict[name]; !ok {
		c.names = append(c.names, name)
	}
	c.dict[name] = v
	return nil
}

// Name of the callable.
func (c *Class) callName() string { return c.name }

// CallInternal makes an instance: the value (the library base's, or an
// Instance), then __init__.
func (c *Class) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
	defer RecoverInternal(c.name, &err)
	if c.object {
		if len(args) > 0 || len(kwargs) > 0 {
			return nil, fmt.Errorf("object() takes no arguments")
		}
		return &Instance{st: NewObjectState(c)}, nil
	}
	st := NewObjectState(c)
	var self starlark.Value
	if c.native != nil {
		if self, err = c.native.ScriptNew(thread, st); err != nil {
			return nil, err
		}
	} else {
		self = &Instance{st: st}
	}
	init, err := findInit(thread, c, 0, self)
	if err != nil {
		return nil, err
	}
	if init == nil {
		if len(args) > 0 || len(kwargs) > 0 {
			return nil, fmt.Errorf("%s() takes no arguments", c.name)
		}
	} else {
		r, err := starlark.Call(thread, init, args, kwargs)
		if err != nil {
			return nil, err
		}
		if r != starlark.None {
			return nil, fmt.Errorf("%s.__init__() should return None, not '%s'", c.name, r.Type())
		}
	}
	if c.native != nil {
		if err := c.native.ScriptInitDone(thread, self); err != nil {
			return nil, err
		}
		if savesState(c.native) {
			if r := registryOf(thread); r != nil {
				r.objects = append(r.objects, self.(ScriptObject))
			}
		}
	}
	return self, nil
}

// findInit is the first __init__ of c's MRO from index from on, bound to
// self: a script class's, or the library base's; nil for object's.
func findInit(thread *starlark.Thread, c *Class, from int, self starlark.Value) (starlark.Value, error) {
	mro := c.mroOrSelf()
	for _, k := range mro[from:] {
		switch k := k.(type) {
		case *Class:
			if v, ok := k.dict["__init__"]; ok {
				return bindMethod(v, self, k.name+".__init__"), nil
			}
		case NativeBase:
			if c.native == nil {
				continue
			}
			nat := c.native
			return NewBuiltin(k.Name()+".__init__", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				return starlark.None, nat.ScriptInit(thread, self, args, kwargs)
			}), nil
		}
	}
	return nil, nil
}

// Instance is an instance of a script class without a library base.
type Instance struct{ st *ObjectState }

var (
	_ starlark.HasAttrs    = (*Instance)(nil)
	_ starlark.HasSetField = (*Instance)(nil)
	_ starlark.Mapping     = (*Instance)(nil)
	_ starlark.HasSetKey   = (*Instance)(nil)
	_ starlark.Callable    = (*Instance)(nil)
	_ ScriptObject         = (*Instance)(nil)
)

// NewInstance is an instance of a class whose library base makes plain
// instances (LibClass.New).
func NewInstance(st *ObjectState) *Instance { return &Instance{st: st} }

// ScriptState is the instance's class and attributes.
func (o *Instance) ScriptState() *ObjectState { return o.st }

func (o *Instance) String() string {
	if s, ok := reprOf(o, o.st.Class, "__str__"); ok {
		return s
	}
	if s, ok := reprOf(o, o.st.Class, "__repr__"); ok {
		return s
	}
	return fmt.Sprintf("<%s object>", o.st.Class.name)
}

// ScriptRepr is what the script class of self gives as its text: its
// __str__, else its __repr__ (as an Instance prints); ok is false when
// it defines neither.
func ScriptRepr(self starlark.Value, st *ObjectState) (string, bool) {
	if s, ok := reprOf(self, st.Class, "__str__"); ok {
		return s, true
	}
	return reprOf(self, st.Class, "__repr__")
}

// reprOf calls the class's __repr__ or __str__ on its thread.
func reprOf(self starlark.Value, c *Class, method string) (string, bool) {
	fn, _ := c.Lookup(method)
	if fn == nil || c.thread == nil {
		return "", false
	}
	r, err := starlark.Call(CallThread(c.thread, c.name+"."+method), bindMethod(fn, self, method), nil, nil)
	if err != nil {
		return fmt.Sprintf("<%s object (%s failed: %v)>", c.name, method, err), true
	}
	if s, ok := starlark.AsString(r); ok {
		return s, true
	}
	return fmt.Sprintf("<%s object (%s returned %s)>", c.name, method, r.Type()), true
}

func (o *Instance) Type() string          { return o.st.Class.name }
func (o *Instance) Freeze()               {}
func (o *Instance) Hash() (uint32, error) { return pointerHash(o), nil }
func (o *Instance) Truth() starlark.Bool {
	if fn, _ := o.st.Class.Lookup("__len__"); fn != nil && o.st.Class.thread != nil {
		r, err := starlark.Call(CallThread(o.st.Class.thread, o.st.Class.name+".__len__"), bindMethod(fn, o, "__len__"), nil, nil)
		if err == nil {
			return r.Truth()
		}
	}
	return true
}

// Name is the class name (for error messages of calls).
func (o *Instance) Name() string { return o.st.Class.name }

// CallInternal calls __call__.
func (o *Instance) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	fn, _ := o.st.Class.Lookup("__call__")
	if fn == nil {
		return nil, fmt.Errorf("'%s' object is not callable", o.st.Class.name)
	}
	return starlark.Call(thread, bindMethod(fn, o, o.st.Class.name+".__call__"), args, kwargs)
}

// Get is x[k]: the class's __getitem__(self, k).
func (o *Instance) Get(k starlark.Value) (starlark.Value, bool, error) {
	v, err := o.special("__getitem__", "is not subscriptable", k)
	return v, err == nil, err
}

// SetKey is x[k] = v: the class's __setitem__(self, k, v).
func (o *Instance) SetKey(k, v starlark.Value) error {
	_, err := o.special("__setitem__", "does not support item assignment", k, v)
	return err
}

// special calls the class's special method name (looked up on the
// class, as Python does), or fails with what (Python's TypeError).
func (o *Instance) special(name, what string, args ...starlark.Value) (starlark.Value, error) {
	fn, owner := o.st.Class.Lookup(name)
	if fn == nil || o.st.Class.thread == nil {
		return nil, fmt.Errorf("'%s' object %s", o.st.Class.name, what)
	}
	return starlark.Call(CallThread(o.st.Class.thread, o.st.Class.name+"."+name), bindMethod(fn, o, owner.name+"."+name), args, nil)
}

// Attr looks name up as Python does: the normal lookup, then the
// class's __getattr__.
func (o *Instance) Attr(name string) (starlark.Value, error) {
	v, found, err := ScriptAttr(o, o.st, name)
	if found || err != nil {
		return v, err
	}
	return ScriptGetattr(o, o.st, name)
}

// ScriptGetattr is Python's fallback when the normal lookup of name on
// self found nothing (the library base's attributes included): the
// class's __getattr__(self, name), if it has one; (nil, nil) otherwise.
// A fail("AttributeError...") from it is a missing attribute
// (starlark.NoSuchAttrError), which hasattr reads as False and getattr
// with a default as the default.
func ScriptGetattr(self starlark.Value, st *ObjectState, name string) (starlark.Value, error) {
	fn, owner := st.Class.Lookup("__getattr__")
	if fn == nil || st.Class.thread == nil {
		return nil, nil
	}
	v, err := starlark.Call(CallThread(st.Class.thread, st.Class.name+".__getattr__"), bindMethod(fn, self, owner.name+".__getattr__"), starlark.Tuple{starlark.String(name)}, nil)
	if err != nil {
		if msg, ok := attributeError(err); ok {
			return nil, starlark.NoSuchAttrError(msg)
		}
		return nil, err
	}
	return v, nil
}

// attributeError tells a script's fail("AttributeError...") (Python's
// raise AttributeError) and returns its message.
func attributeError(err error) (string, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if _, wraps := e.(interface{ Unwrap() error }); wraps {
			continue
		}
		msg, ok := strings.CutPrefix(e.Error(), "fail: ")
		if ok && strings.HasPrefix(msg, "AttributeError") {
			return msg, true
		}
		return "", false
	}
	return "", false
}

// AttrNames lists the instance's and its class's attributes.
func (o *Instance) AttrNames() []string { return ScriptAttrNames(o.st) }

// SetField sets an attribute (a property's setter, else the instance's own).
func (o *Instance) SetField(name string, v starlark.Value) error {
	_, err := ScriptSetField(o, o.st, name, v, true)
	return err
}

// ScriptAttr looks name up on the script instance self: a property of
// its class, its own attribute, a class attribute or method (bound to
// self). found is false when the script part has no such name (the
// library base may have it).
func ScriptAttr(self starlark.Value, st *ObjectState, name string) (v starlark.Value, found bool, err error) {
	if name == "__class__" {
		return st.Class, true, nil
	}
	if name == "__dict__" {
		d := starlark.NewDict(len(st.names))
		for _, n := range st.names {
			_ = d.SetKey(starlark.String(n), st.attrs[n])
		}
		return d, true, nil
	}
	cv, owner := st.Class.Lookup(name)
	if p, ok := cv.(*Property); ok {
		if st.Class.thread == nil {
			return nil, true, fmt.Errorf("property %s: no thread", name)
		}
		r, err := starlark.Call(CallThread(st.Class.thread, st.Class.name+"."+name), p.fget, starlark.Tuple{self}, nil)
		if err != nil {
			return nil, true, err
		}
		return r, true, nil
	}
	if v, ok := st.attrs[name]; ok {
		return v, true, nil
	}
	if cv == nil {
		if lc, ok := st.Class.native.(interface{ ClassAttrs() starlark.StringDict }); ok {
			if v, ok := lc.ClassAttrs()[name]; ok {
				return v, true, nil // a library base's class constant
			}
		}
		return nil, false, nil
	}
	return bindMethod(cv, self, owner.name+"."+name), true, nil
}

// ScriptAttrNames are the names of an instance's attributes.
func ScriptAttrNames(st *ObjectState) []string {
	seen := map[string]bool{}
	for _, n := range st.names {
		seen[n] = true
	}
	for _, n := range st.Class.AttrNames() {
		if !strings.HasPrefix(n, "__") {
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ScriptSetField sets name on the script instance self: through a
// property's setter, or as its own attribute when own is true (the
// library base, asked first, did not take it). handled is false when
// the class has no property of that name and own is false.
func ScriptSetField(self starlark.Value, st *ObjectState, name string, v starlark.Value, own bool) (handled bool, err error) {
	cv, _ := st.Class.Lookup(name)
	if p, ok := cv.(*Property); ok {
		if p.fset == nil {
			return true, fmt.Errorf("%s.%s: can't set attribute (the property has no setter)", st.Class.name, name)
		}
		_, err := starlark.Call(CallThread(st.Class.thread, st.Class.name+"."+name), p.fset, starlark.Tuple{self, v}, nil)
		return true, err
	}
	if !own {
		return false, nil
	}
	st.Set(name, v)
	return true, nil
}

// HasClassProperty reports whether the class of st has a property name.
func HasClassProperty(st *ObjectState, name string) bool {
	cv, _ := st.Class.Lookup(name)
	_, ok := cv.(*Property)
	return ok
}

// bindMethod binds a namespace value to self: a function becomes a
// method, a classmethod binds the class, a staticmethod is its function,
// anything else is itself.
func bindMethod(v, self starlark.Value, name string) starlark.Value {
	switch f := v.(type) {
	case *starlark.Function, *MethodWrapper:
		return &BoundMethod{fn: f.(starlark.Callable), self: self, name: name}
	case *StaticMethod:
		return f.fn
	case *ClassMethod:
		return &BoundMethod{fn: f.fn, self: classOf(self), name: name}
	}
	return v
}

// MethodWrapper is a callable a decorator made of a method (lazy(...)(fn)),
// bound to the instance like a function.
type MethodWrapper struct {
	Fn       starlark.Callable
	NameText string
	// Call runs the method with self as args[0].
	Call func(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)
}

func (m *MethodWrapper) String() string        { return "<function " + m.NameText + ">" }
func (m *MethodWrapper) Type() string          { return "function" }
func (m *MethodWrapper) Freeze()               {}
func (m *MethodWrapper) Truth() starlark.Bool  { return true }
func (m *MethodWrapper) Hash() (uint32, error) { return pointerHash(m), nil }
func (m *MethodWrapper) Name() string          { return m.NameText }
func (m *MethodWrapper) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return m.Call(thread, args, kwargs)
}

// classOf is the class of a script instance (self itself if a class).
func classOf(self starlark.Value) starlark.Value {
	if so, ok := self.(ScriptObject); ok && so.ScriptState() != nil {
		return so.ScriptState().Class
	}
	return self
}

// BoundMethod is a function bound to an instance (or a classmethod to
// its class).
type BoundMethod struct {
	fn   starlark.Callable
	self starlark.Value
	name string
}

var _ starlark.Callable = (*BoundMethod)(nil)

func (m *BoundMethod) String() string        { return "<bound method " + m.name + ">" }
func (m *BoundMethod) Type() string          { return "method" }
func (m *BoundMethod) Freeze()               {}
func (m *BoundMethod) Truth() starlark.Bool  { return true }
func (m *BoundMethod) Hash() (uint32, error) { return pointerHash(m), nil }
func (m *BoundMethod) Name() string          { return m.name }

// Func is the unbound function.
func (m *BoundMethod) Func() starlark.Callable { return m.fn }

// CallInternal calls the function with self first.
func (m *BoundMethod) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	all := make(starlark.Tuple, 0, len(args)+1)
	all = append(all, m.self)
	all = append(all, args...)
	return starlark.Call(thread, m.fn, all, kwargs)
}

// Property is property(fget, fset=None).
type Property struct{ fget, fset starlark.Callable }

func (p *Property) String() string        { return "<property>" }
func (p *Property) Type() string          { return "property" }
func (p *Property) Freeze()               {}
func (p *Property) Truth() starlark.Bool  { return true }
func (p *Property) Hash() (uint32, error) { return pointerHash(p), nil }

// Attr gives property.setter, as Python's @x.setter.
func (p *Property) Attr(name string) (starlark.Value, error) {
	switch name {
	case "setter":
		return NewBuiltin("setter", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var fset starlark.Callable
			if err := starlark.UnpackPositionalArgs("setter", args, kwargs, 1, &fset); err != nil {
				return nil, err
			}
			return &Property{fget: p.fget, fset: fset}, nil
		}), nil
	case "fget":
		return p.fget, nil
	}
	return nil, nil
}

// AttrNames lists setter and fget.
func (p *Property) AttrNames() []string { return []string{"fget", "setter"} }

// StaticMethod is staticmethod(fn).
type StaticMethod struct{ fn starlark.Callable }

func (s *StaticMethod) String() string        { return "<staticmethod>" }
func (s *StaticMethod) Type() string          { return "staticmethod" }
func (s *StaticMethod) Freeze()               {}
func (s *StaticMethod) Truth() starlark.Bool  { return true }
func (s *StaticMethod) Hash() (uint32, error) { return pointerHash(s), nil }

// ClassMethod is classmethod(fn).
type ClassMethod struct{ fn starlark.Callable }

func (s *ClassMethod) String() string        { return "<classmethod>" }
func (s *ClassMethod) Type() string          { return "classmethod" }
func (s *ClassMethod) Freeze()               {}
func (s *ClassMethod) Truth() starlark.Bool  { return true }
func (s *ClassMethod) Hash() (uint32, error) { return pointerHash(s), nil }

// Super is super(Cls, self).
type Super struct {
	cls  starlark.Value // a *Class or a NativeBase of self's MRO
	self starlark.Value
	st   *ObjectState
}

func (s *Super) String() string {
	return fmt.Sprintf("<super: <class '%s'>, <%s object>>", className(s.cls), s.st.Class.name)
}
func (s *Super) Type() string          { return "super" }
func (s *Super) Freeze()               {}
func (s *Super) Truth() starlark.Bool  { return true }
func (s *Super) Hash() (uint32, error) { return pointerHash(s), nil }

// AttrNames is empty: super's attributes are looked up by name.
func (s *Super) AttrNames() []string { return nil }

// Attr looks name up in the MRO of self's class after cls.
func (s *Super) Attr(name string) (starlark.Value, error) {
	c := s.st.Class
	mro := c.mroOrSelf()
	i := mroIndex(mro, s.cls)
	if name == "__init__" {
		from := min(i+1, len(mro))
		if _, ok := s.cls.(NativeBase); ok && c.native != nil {
			// super(Feedforward, self).__init__: the library base's
			// classes are one node of the MRO, whose __init__ is its root's.
			from = i
		}
		init, err := findInit(c.thread, c, from, s.self)
		if err != nil || init != nil {
			return init, err
		}
		return NewBuiltin("object.__init__", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) > 0 || len(kwargs) > 0 {
				return nil, fmt.Errorf("object.__init__() takes no arguments")
			}
			return starlark.None, nil
		}), nil
	}
	for _, k := range mro[min(i+1, len(mro)):] {
		switch k := k.(type) {
		case *Class:
			if v, ok := k.dict[name]; ok {
				if p, ok := v.(*Property); ok {
					return starlark.Call(CallThread(c.thread, c.name+"."+name), p.fget, starlark.Tuple{s.self}, nil)
				}
				return bindMethod(v, s.self, k.name+"."+name), nil
			}
		case NativeBase:
			if c.native != nil {
				v, err := c.native.ScriptSuperAttr(c.thread, s.self, name)
				if err != nil || v != nil {
					return v, err
				}
			}
		}
	}
	return nil, starlark.NoSuchAttrError(fmt.Sprintf("'super' object has no attribute '%s'", name))
}

// classBuiltins are type (one argument: Starlark's; three: a new class),
// object, super, property, staticmethod, classmethod, isinstance,
// issubclass and setattr.
func classBuiltins() starlark.StringDict {
	object := NewObjectClass()
	starType := starlark.Universe["type"].(*starlark.Builtin)
	return starlark.StringDict{
		"object": object,
		"type": NewBuiltin("type", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) == 1 && len(kwargs) == 0 {
				return starType.CallInternal(thread, args, kwargs)
			}
			var name string
			var bases starlark.Tuple
			var ns *starlark.Dict
			if err := starlark.UnpackPositionalArgs("type", args, kwargs, 3, &name, &bases, &ns); err != nil {
				return nil, fmt.Errorf("%v (type(x) or type(name, bases, dict))", err)
			}
			return NewClass(thread, object, name, bases, ns)
		}),
		"super": NewBuiltin("super", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var cls, self starlark.Value
			if err := starlark.UnpackPositionalArgs("super", args, kwargs, 2, &cls, &self); err != nil {
				return nil, fmt.Errorf("%v (write super(Class, self): Starlark has no zero-argument super())", err)
			}
			switch cls.(type) {
			case *Class, NativeBase:
			default:
				return nil, fmt.Errorf("super(): argument 1 must be a class, got %s", cls.Type())
			}
			name := className(cls)
			so, ok := self.(ScriptObject)
			if !ok || so.ScriptState() == nil {
				return nil, fmt.Errorf("super(%s, obj): obj must be an instance of %s, got %s", name, name, self.Type())
			}
			st := so.ScriptState()
			if mroIndex(st.Class.mroOrSelf(), cls) < 0 {
				return nil, fmt.Errorf("super(%s, obj): obj must be an instance of %s, got a %s", name, name, st.Class.name)
			}
			return &Super{cls: cls, self: self, st: st}, nil
		}),
		"property": NewBuiltin("property", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var fget starlark.Callable
			var fset starlark.Value = starlark.None
			var doc starlark.Value
			if err := starlark.UnpackArgs("property", args, kwargs, "fget", &fget, "fset?", &fset, "fdel?", &doc, "doc?", &doc); err != nil {
				return nil, err
			}
			p := &Property{fget: fget}
			if fset != starlark.None {
				f, ok := fset.(starlark.Callable)
				if !ok {
					return nil, fmt.Errorf("property: fset must be a function, got %s", fset.Type())
				}
				p.fset = f
			}
			return p, nil
		}),
		"staticmethod": NewBuiltin("staticmethod", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var fn starlark.Callable
			if err := starlark.UnpackPositionalArgs("staticmethod", args, kwargs, 1, &fn); err != nil {
				return nil, err
			}
			return &StaticMethod{fn: fn}, nil
		}),
		"classmethod": NewBuiltin("classmethod", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var fn starlark.Callable
			if err := starlark.UnpackPositionalArgs("classmethod", args, kwargs, 1, &fn); err != nil {
				return nil, err
			}
			return &ClassMethod{fn: fn}, nil
		}),
		"isinstance": NewBuiltin("isinstance", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x, cls starlark.Value
			if err := starlark.UnpackPositionalArgs("isinstance", args, kwargs, 2, &x, &cls); err != nil {
				return nil, err
			}
			ok, err := IsInstance(x, cls)
			return starlark.Bool(ok), err
		}),
		"issubclass": NewBuiltin("issubclass", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x, cls starlark.Value
			if err := starlark.UnpackPositionalArgs("issubclass", args, kwargs, 2, &x, &cls); err != nil {
				return nil, err
			}
			ok, err := isSubclass(x, cls)
			return starlark.Bool(ok), err
		}),
		"setattr": NewBuiltin("setattr", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x, v starlark.Value
			var name string
			if err := starlark.UnpackPositionalArgs("setattr", args, kwargs, 3, &x, &name, &v); err != nil {
				return nil, err
			}
			s, ok := x.(starlark.HasSetField)
			if !ok {
				return nil, fmt.Errorf("setattr: %s has no settable attributes", x.Type())
			}
			return starlark.None, s.SetField(name, v)
		}),
	}
}

// NewClass is type(name, bases, namespace).
func NewClass(thread *starlark.Thread, object *Class, name string, bases starlark.Tuple, ns *starlark.Dict) (*Class, error) {
	c := &Class{name: name, dict: map[string]starlark.Value{}, thread: thread}
	if name == "" {
		return nil, fmt.Errorf("type(): the class name is empty")
	}
	if len(bases) == 0 {
		bases = starlark.Tuple{object}
	}
	for i, b := range bases {
		switch b := b.(type) {
		case *Class:
			if !b.object {
				for _, k := range b.mro {
					if k == starlark.Value(c) {
						return nil, fmt.Errorf("type(): class %s: cyclic bases", name)
					}
				}
			}
			if b.native != nil {
				if err := c.addNative(b.native); err != nil {
					return nil, err
				}
			}
		case NativeBase:
			if err := c.addNative(b); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("type(): class %s: bases[%d] must be a class (object, a script class or a library class), got %s", name, i, b.Type())
		}
		for _, o := range bases[:i] {
			if o == b {
				return nil, fmt.Errorf("type(): class %s: duplicate base class %s", name, b.String())
			}
		}
		c.bases = append(c.bases, b)
	}
	for _, item := range ns.Items() {
		k, ok := starlark.AsString(item[0])
		if !ok {
			return nil, fmt.Errorf("type(): class %s: namespace keys must be strings, got %s", name, item[0].Type())
		}
		v := item[1]
		if f, ok := v.(*starlark.Function); ok && f.NumParams() == 0 && !f.HasVarargs() {
			pos := f.Position()
			return nil, fmt.Errorf("type(): class %s: method %s (%s, defined at %s) takes no self argument (write def %s(self, ...), or wrap it in staticmethod)", name, k, f.Name(), pos, k)
		}
		c.names = append(c.names, k)
		c.dict[k] = v
	}
	mro, err := c3(c)
	if err != nil {
		return nil, err
	}
	c.mro = mro
	if r := registryOf(thread); r != nil {
		r.classes = append(r.classes, c)
	}
	return c, nil
}

func (c *Class) addNative(n NativeBase) error {
	if c.native == nil || c.native == n {
		c.native = n
		return nil
	}
	m, err := c.native.Combine(n)
	if err != nil {
		return fmt.Errorf("type(): class %s: %v", c.name, err)
	}
	c.native = m
	return nil
}

// c3 is Python's C3 linearization of c (object left out).
func c3(c *Class) ([]starlark.Value, error) {
	var seqs [][]starlark.Value
	for _, b := range c.bases {
		switch b := b.(type) {
		case *Class:
			if !b.object {
				seqs = append(seqs, append([]starlark.Value(nil), b.mro...))
			}
		default:
			seqs = append(seqs, []starlark.Value{b})
		}
	}
	var direct []starlark.Value
	for _, b := range c.bases {
		if b, ok := b.(*Class); ok && b.object {
			continue
		}
		direct = append(direct, b)
	}
	seqs = append(seqs, direct)
	out := []starlark.Value{c}
	for {
		nonEmpty := seqs[:0]
		for _, s := range seqs {
			if len(s) > 0 {
				nonEmpty = append(nonEmpty, s)
			}
		}
		seqs = nonEmpty
		if len(seqs) == 0 {
			return out, nil
		}
		var head starlark.Value
		for _, s := range seqs {
			cand := s[0]
			inTail := false
			for _, t := range seqs {
				for _, x := range t[1:] {
					if x == cand {
						inTail = true
					}
				}
			}
			if !inTail {
				head = cand
				break
			}
		}
		if head == nil {
			var names []string
			for _, b := range c.bases {
				names = append(names, className(b))
			}
			return nil, fmt.Errorf("type(): class %s: cannot create a consistent method resolution order (MRO) for bases %s", c.name, strings.Join(names, ", "))
		}
		out = append(out, head)
		for i, s := range seqs {
			if s[0] == head {
				seqs[i] = s[1:]
			}
		}
	}
}

// mroIndex is the index of cls in mro (a library class by its name), -1
// if absent.
func mroIndex(mro []starlark.Value, cls starlark.Value) int {
	for i, k := range mro {
		if k == cls {
			return i
		}
		if n, ok := cls.(NativeBase); ok {
			if kn, ok := k.(NativeBase); ok && kn.Name() == n.Name() {
				return i
			}
		}
	}
	return -1
}

func className(v starlark.Value) string {
	switch v := v.(type) {
	case *Class:
		return v.name
	case NativeBase:
		return v.Name()
	}
	return v.String()
}

// classIsSub reports whether c is sub or derives from it.
func classIsSub(c, sup *Class) bool {
	if sup.object {
		return true
	}
	for _, k := range c.mroOrSelf() {
		if k == starlark.Value(sup) {
			return true
		}
	}
	return false
}

// builtinTypeNames maps Starlark's conversion builtins to the Type() of
// their values, for isinstance(x, list).
var builtinTypeNames = map[string][]string{
	"list": {"list"}, "dict": {"dict", "status"}, "str": {"string"}, "int": {"int"}, "float": {"float"},
	"tuple": {"tuple"}, "bool": {"bool"}, "set": {"set"}, "bytes": {"bytes"},
}

// IsInstance is Python's isinstance(x, cls); cls may be a tuple of classes.
func IsInstance(x, cls starlark.Value) (bool, error) {
	switch cls := cls.(type) {
	case starlark.Tuple:
		for _, c := range cls {
			ok, err := IsInstance(x, c)
			if ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	case *Class:
		if cls.object {
			return true, nil
		}
		if so, ok := x.(ScriptObject); ok && so.ScriptState() != nil {
			return classIsSub(so.ScriptState().Class, cls), nil
		}
		return false, nil
	case NativeBase:
		return cls.IsInstanceOf(x), nil
	case *ClassBuiltin:
		return x.Type() == cls.Name(), nil
	case *starlark.Builtin:
		if names, ok := builtinTypeNames[cls.Name()]; ok {
			if x.Type() == "bool" && cls.Name() == "int" {
				return true, nil // Python's bool is an int
			}
			for _, n := range names {
				if x.Type() == n {
					return true, nil
				}
			}
			return false, nil
		}
		return x.Type() == cls.Name(), nil
	}
	return false, fmt.Errorf("isinstance() arg 2 must be a class or a tuple of classes, got %s", cls.Type())
}

func isSubclass(x, cls starlark.Value) (bool, error) {
	if t, ok := cls.(starlark.Tuple); ok {
		for _, c := range t {
			ok, err := isSubclass(x, c)
			if ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	}
	switch x := x.(type) {
	case *Class:
		switch cls := cls.(type) {
		case *Class:
			return classIsSub(x, cls), nil
		case NativeBase:
			return x.native != nil && x.native.IsSubclassOf(cls), nil
		}
		return false, nil
	case NativeBase:
		if c, ok := cls.(*Class); ok {
			return c.object, nil
		}
		return x.IsSubclassOf(cls), nil
	}
	return false, fmt.Errorf("issubclass() arg 1 must be a class, got %s", x.Type())
}
