package starlib

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// A Library is the set of modules a run's load() resolves by dotted name
// (load("blocks.bricks", "MLP")). It is built explicitly from the module
// packages' exported modules (package all assembles the standard one),
// never filled behind the caller's back, and it is read-only once built:
// one Library may serve any number of runs at once.
//
// Several modules may share a name: their members are merged (a Starlark
// module may be defined by several Go files, blocks.bricks by a dozen). A
// name's parents need no module of their own: "blocks" exists as soon as
// "blocks.bricks" does, and exposes each child as an attribute named by
// the child's last component (load("blocks", "bricks"), then bricks.MLP).
// A member of the parent with the same name as a child wins over the
// child.
type Library struct {
	modules map[string]*starlarkstruct.Module // merged, by name
	names   []string                          // every module and parent, sorted
}

// NewLibrary builds the library of modules. It fails on an empty or
// malformed name (one ending in ".star", which load() reads as a file),
// a nil module, or a member that two modules of the same name define.
func NewLibrary(modules ...*starlarkstruct.Module) (*Library, error) {
	l := &Library{modules: map[string]*starlarkstruct.Module{}}
	for _, m := range modules {
		if m == nil {
			return nil, fmt.Errorf("starlib.NewLibrary: nil module")
		}
		if !validModuleName(m.Name) {
			return nil, fmt.Errorf("starlib.NewLibrary: bad module name %q", m.Name)
		}
		merged, ok := l.modules[m.Name]
		if !ok {
			merged = &starlarkstruct.Module{Name: m.Name, Members: starlark.StringDict{}}
			l.modules[m.Name] = merged
		}
		for k, v := range m.Members {
			if _, dup := merged.Members[k]; dup {
				return nil, fmt.Errorf("starlib.NewLibrary: module %q defines %s twice", m.Name, k)
			}
			merged.Members[k] = v
		}
	}
	seen := map[string]bool{}
	for name := range l.modules {
		for {
			seen[name] = true
			i := strings.LastIndexByte(name, '.')
			if i < 0 {
				break
			}
			name = name[:i]
		}
	}
	for n := range seen {
		l.names = append(l.names, n)
	}
	sort.Strings(l.names)
	return l, nil
}

// Names lists the names load() resolves: every module and every parent
// of one, sorted. A nil Library has none.
func (l *Library) Names() []string {
	if l == nil {
		return nil
	}
	return slices.Clone(l.names)
}

// Lookup returns the module load(name, ...) sees: the members of name
// (none when name is only a parent) plus its children as attributes.
// Dynamic members are left unresolved (the loader resolves them for its
// thread). The result is a new module; ok is false when nothing is
// defined under or below name.
func (l *Library) Lookup(name string) (m *starlarkstruct.Module, ok bool) {
	return newModuleCache(l, nil).lookup(name)
}

// Module returns the module load(name) gives the thread's run: the same
// value, with the same builtins. ok is false when the run's Library has
// nothing under that name (or the thread is no run's).
func Module(thread *starlark.Thread, name string) (m *starlarkstruct.Module, ok bool) {
	s := state(thread)
	if s == nil || s.modules == nil {
		return nil, false
	}
	return s.modules.lookup(name)
}

// moduleCache builds the modules one interpreter loads, each once, so
// that a module reached as a parent's attribute and loaded by its own
// name is the same value, with the same builtins.
type moduleCache struct {
	lib     *Library
	thread  *starlark.Thread // resolves Dynamic members when not nil
	modules map[string]*starlarkstruct.Module
	wrapped map[*starlark.Builtin]*starlark.Builtin
}

func newModuleCache(lib *Library, thread *starlark.Thread) *moduleCache {
	return &moduleCache{lib: lib, thread: thread, modules: map[string]*starlarkstruct.Module{}, wrapped: map[*starlark.Builtin]*starlark.Builtin{}}
}

func (c *moduleCache) lookup(name string) (*starlarkstruct.Module, bool) {
	if m, ok := c.modules[name]; ok {
		return m, true
	}
	if c.lib == nil {
		return nil, false
	}
	def, found := c.lib.modules[name]
	var children []string
	prefix := name + "."
	for n := range c.lib.modules {
		if rest, ok := strings.CutPrefix(n, prefix); ok {
			child, _, _ := strings.Cut(rest, ".")
			if !slices.Contains(children, child) {
				children = append(children, child)
			}
		}
	}
	if !found && len(children) == 0 {
		return nil, false
	}
	members := starlark.StringDict{}
	for _, ch := range children {
		if cm, ok := c.lookup(prefix + ch); ok {
			members[ch] = cm
		}
	}
	if def != nil {
		for k, v := range def.Members {
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
