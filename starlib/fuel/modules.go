package fuel

import (
	"slices"
	"sync"

	"go.starlark.net/starlarkstruct"
)

// Modules returns the Starlark modules of this package, for package
// all's Library (modules of the same name are merged there).
func Modules() []*starlarkstruct.Module { return slices.Clone(modules()) }

// modules builds the modules once, on first use. It is the package's one
// cache.
var modules = sync.OnceValue(func() []*starlarkstruct.Module {
	var mods []*starlarkstruct.Module
	mods = append(mods, fuelModules()...)
	mods = append(mods, apiModules()...)
	mods = append(mods, billionModules()...)
	mods = append(mods, convertersModules()...)
	mods = append(mods, convertersIlsvrcModules()...)
	mods = append(mods, convertersMoreModules()...)
	mods = append(mods, datasetsModules()...)
	mods = append(mods, defaultsModules()...)
	mods = append(mods, iterableModules()...)
	mods = append(mods, serverModules()...)
	mods = append(mods, streamsModules()...)
	mods = append(mods, utilsModules()...)
	mods = append(mods, h5pyModuleModules()...)
	mods = append(mods, hashlibModules()...)
	mods = append(mods, scriptClassModules()...)
	return mods
})
