package starlib

import (
	"fmt"
	"sort"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// registry holds the modules of the files of this package that still
// register themselves from init (the blocks.* and fuel.* modules, until
// they move to their own packages). Registered hands them to package all,
// which assembles the Library; nothing else reads it.
var registry = struct {
	sync.RWMutex
	modules    map[string]*starlarkstruct.Module
	registered map[string]bool // names given to Register (not only Extend)
}{modules: map[string]*starlarkstruct.Module{}, registered: map[string]bool{}}

// Register records m under the dotted name for Registered. Register
// panics on a malformed name, a nil module or a name registered twice:
// these are programming errors.
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

// Extend adds members to the module name for Registered, creating it
// when nothing is registered under that name yet. A member defined twice
// panics.
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

// Registered returns the modules this package's files registered, sorted
// by name, each a copy: the blocks.* and fuel.* modules that have not yet
// moved to packages of their own.
func Registered() []*starlarkstruct.Module {
	registry.RLock()
	defer registry.RUnlock()
	var mods []*starlarkstruct.Module
	for name, m := range registry.modules {
		members := starlark.StringDict{}
		for k, v := range m.Members {
			members[k] = v
		}
		mods = append(mods, &starlarkstruct.Module{Name: name, Members: members})
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Name < mods[j].Name })
	return mods
}
