package starlib

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	starlarkmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

func init() {
	// go.starlark.net's own deterministic modules (not time: scripts are
	// reproducible).
	Register("math", starlarkmath.Module)
	Register("json", jsonModule)
}

// registry maps dotted module names to their modules. It is filled by the
// init functions of the module files and read by the loader.
var registry = struct {
	sync.RWMutex
	modules    map[string]*starlarkstruct.Module
	registered map[string]bool // names given to Register (not only Extend)
}{modules: map[string]*starlarkstruct.Module{}, registered: map[string]bool{}}

// Register makes m loadable under the dotted name (load("blocks.bricks",
// "MLP")). Call it from the init function of the module's file. The name's
// parents need not be registered: "blocks" exists as soon as any
// "blocks.x" does, and a parent exposes each child as an attribute named
// by the child's last component (load("blocks", "bricks"), then
// bricks.MLP). A member of the parent with the same name as a child wins
// over the child.
//
// Builtins among m's members are wrapped, when loaded, so that a Go panic
// inside one becomes a Starlark error ("internal error in NAME: ...")
// carrying the script's backtrace.
//
// Register panics on an empty or malformed name, a nil module or a name
// registered twice: these are programming errors.
func Register(name string, m *starlarkstruct.Module) {
	if m == nil || !validModuleName(name) {
		panic(fmt.Sprintf("starlib.Register: bad module %q", name))
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.registered[name] {
		panic(fmt.Sprintf("starlib.Register: module %q registered twice", name))
	}
	registry.registered[name] = true
	if prev, ok := registry.modules[name]; ok {
		// Members added by Extend before this file's init ran.
		mergeMembers(name, m, prev.Members)
	}
	registry.modules[name] = m
}

// Extend adds members to the module name, creating it when nothing is
// registered under that name yet. It lets several files contribute to one
// Starlark module (blocks.bricks holds bricks defined in many files); call
// it from an init function. A member defined twice panics.
func Extend(name string, members starlark.StringDict) {
	if !validModuleName(name) {
		panic(fmt.Sprintf("starlib.Extend: bad module %q", name))
	}
	registry.Lock()
	defer registry.Unlock()
	m, ok := registry.modules[name]
	if !ok {
		m = &starlarkstruct.Module{Name: name, Members: starlark.StringDict{}}
		registry.modules[name] = m
	}
	mergeMembers(name, m, members)
}

func mergeMembers(name string, m *starlarkstruct.Module, members starlark.StringDict) {
	if m.Members == nil {
		m.Members = starlark.StringDict{}
	}
	for k, v := range members {
		if _, dup := m.Members[k]; dup {
			panic(fmt.Sprintf("starlib: module %q defines %s twice", name, k))
		}
		m.Members[k] = v
	}
}

func validModuleName(name string) bool {
	if name == "" || strings.HasSuffix(name, ".star") {
		return false
	}
	for _, part := range strings.Split(name, ".") {
		if part == "" {
			return false
		}
		for i, r := range part {
			ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
			if !ok {
				return false
			}
		}
	}
	return true
}

// Modules lists the names that load() resolves from the registry: every
// registered module and every parent of one, sorted.
func Modules() []string {
	registry.RLock()
	defer registry.RUnlock()
	seen := map[string]bool{}
	for name := range registry.modules {
		for {
			seen[name] = true
			i := strings.LastIndexByte(name, '.')
			if i < 0 {
				break
			}
			name = name[:i]
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the module load(name, ...) sees: the registered members
// of name (none when name is only a parent) plus its children as
// attributes. Dynamic members are left unresolved (the loader resolves
// them for its thread). The result is a new module; ok is false when
// nothing is registered under or below name.
func Lookup(name string) (m *starlarkstruct.Module, ok bool) {
	return newModuleCache(nil).lookup(name)
}

// moduleCache builds the modules one interpreter loads, each once, so
// that a module reached as a parent's attribute and loaded by its own
// name is the same value, with the same builtins.
type moduleCache struct {
	thread  *starlark.Thread // resolves Dynamic members when not nil
	modules map[string]*starlarkstruct.Module
	wrapped map[*starlark.Builtin]*starlark.Builtin
}

func newModuleCache(thread *starlark.Thread) *moduleCache {
	return &moduleCache{thread: thread, modules: map[string]*starlarkstruct.Module{}, wrapped: map[*starlark.Builtin]*starlark.Builtin{}}
}

func (c *moduleCache) lookup(name string) (*starlarkstruct.Module, bool) {
	if m, ok := c.modules[name]; ok {
		return m, true
	}
	registry.RLock()
	reg, found := registry.modules[name]
	var children []string
	prefix := name + "."
	for n := range registry.modules {
		if rest, ok := strings.CutPrefix(n, prefix); ok {
			child, _, _ := strings.Cut(rest, ".")
			if !slices.Contains(children, child) {
				children = append(children, child)
			}
		}
	}
	registry.RUnlock()
	if !found && len(children) == 0 {
		return nil, false
	}
	members := starlark.StringDict{}
	for _, ch := range children {
		if cm, ok := c.lookup(prefix + ch); ok {
			members[ch] = cm
		}
	}
	if reg != nil {
		for k, v := range reg.Members {
			members[k] = c.resolve(v)
		}
	}
	m := &starlarkstruct.Module{Name: name, Members: members}
	c.modules[name] = m
	return m, true
}

// resolve wraps builtins against panics and resolves Dynamic values.
func (c *moduleCache) resolve(v starlark.Value) starlark.Value {
	switch v := v.(type) {
	case *starlark.Builtin:
		if v.Receiver() != nil {
			return v
		}
		w, ok := c.wrapped[v]
		if !ok {
			w = NewBuiltin(v.Name(), func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				return v.CallInternal(thread, args, kwargs)
			})
			c.wrapped[v] = w
		}
		return w
	case *Dynamic:
		if c.thread != nil {
			return v.Get(c.thread)
		}
	}
	return v
}

// Dynamic is a module member whose value depends on the run: the loader
// replaces it by Get(thread) when a script loads the module. Use it for
// values such as tensor.floatX that come from the run's options, never
// for mutable state shared between runs.
type Dynamic struct {
	Name string
	Get  func(thread *starlark.Thread) starlark.Value
}

var _ starlark.Value = (*Dynamic)(nil)

func (d *Dynamic) String() string        { return "<dynamic " + d.Name + ">" }
func (d *Dynamic) Type() string          { return "dynamic" }
func (d *Dynamic) Freeze()               {}
func (d *Dynamic) Truth() starlark.Bool  { return true }
func (d *Dynamic) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: dynamic") }
