package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
)

// LibClass is a library class a script class derives from: New makes
// the instance's value (before __init__), which must be a
// ScriptObject; IsInst tells its instances.
type LibClass struct {
	ClassName string
	New       func(thread *starlark.Thread, st *ObjectState) (starlark.Value, error)
	IsInst    func(v starlark.Value) bool
	// Init is the base's __init__; nil: it takes no arguments.
	Init func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error
	// Super is super(C, self).name for the base's own methods; nil: none.
	Super func(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error)
	// State says the instances are training state, whose attributes
	// checkpoints save (script_objects.go).
	State bool
	// Attrs are the class's own attributes (Blocks' class-level constants,
	// Timestamp.DEFAULT_LOG_RECORD), read on the class and, through
	// attribute lookup, on a script subclass and its instances.
	Attrs starlark.StringDict
}

var _ starlark.HasAttrs = (*LibClass)(nil)

// Attr is a class attribute.
func (c *LibClass) Attr(name string) (starlark.Value, error) { return c.Attrs[name], nil }

// AttrNames are the class attributes' names.
func (c *LibClass) AttrNames() []string { return c.Attrs.Keys() }

// ClassAttrs are the class attributes, which its script subclasses'
// instances read.
func (c *LibClass) ClassAttrs() starlark.StringDict { return c.Attrs }

// SavesState reports whether the instances are training state.
func (c *LibClass) SavesState() bool { return c.State }

var _ NativeBase = (*LibClass)(nil)

func (c *LibClass) Name() string          { return c.ClassName }
func (c *LibClass) String() string        { return "<class '" + c.ClassName + "'>" }
func (c *LibClass) Type() string          { return "type" }
func (c *LibClass) Freeze()               {}
func (c *LibClass) Truth() starlark.Bool  { return true }
func (c *LibClass) Hash() (uint32, error) { return starlark.String(c.ClassName).Hash() }

// ScriptNew makes the instance's value.
func (c *LibClass) ScriptNew(thread *starlark.Thread, st *ObjectState) (starlark.Value, error) {
	return c.New(thread, st)
}

// ScriptInit is the base's __init__, which takes no arguments.
func (c *LibClass) ScriptInit(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
	if c.Init != nil {
		return c.Init(thread, self, args, kwargs)
	}
	if len(args) > 0 || len(kwargs) > 0 {
		return fmt.Errorf("%s.__init__() takes no arguments", c.ClassName)
	}
	return nil
}

// ScriptInitDone has nothing to finish.
func (c *LibClass) ScriptInitDone(thread *starlark.Thread, self starlark.Value) error { return nil }

// ScriptSuperAttr: the base's methods are abstract.
func (c *LibClass) ScriptSuperAttr(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
	if c.Super != nil {
		return c.Super(thread, self, name)
	}
	return nil, nil
}

// IsInstanceOf tells the class's instances.
func (c *LibClass) IsInstanceOf(v starlark.Value) bool { return c.IsInst(v) }

// IsSubclassOf: only the class itself.
func (c *LibClass) IsSubclassOf(other starlark.Value) bool {
	o, ok := other.(*LibClass)
	return ok && o.ClassName == c.ClassName
}

// Combine refuses a second library base.
func (c *LibClass) Combine(other NativeBase) (NativeBase, error) {
	return nil, fmt.Errorf("%s and %s cannot both be bases", c.ClassName, other.Name())
}

// ClassBuiltin is a library class whose constructor is a builtin and
// which has class attributes (Blocks' MonitoringExtension.SEPARATOR):
// calling it calls the builtin; isinstance(x, C) holds for the values
// whose type is its name, as for the builtin.
type ClassBuiltin struct {
	*starlark.Builtin
	Attrs starlark.StringDict
}

var _ starlark.HasAttrs = (*ClassBuiltin)(nil)

// Attr is a class attribute.
func (c *ClassBuiltin) Attr(name string) (starlark.Value, error) { return c.Attrs[name], nil }

// AttrNames are the class attributes' names.
func (c *ClassBuiltin) AttrNames() []string { return c.Attrs.Keys() }

// CallableLibClass is a library class that is also called directly
// (SimpleExtension(do, **triggers), the script form without a class).
type CallableLibClass struct {
	*LibClass
	Fn starlark.Callable
}

var _ starlark.Callable = (*CallableLibClass)(nil)

// CallInternal calls the library's constructor.
func (c *CallableLibClass) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return starlark.Call(thread, c.Fn, args, kwargs)
}
