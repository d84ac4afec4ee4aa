package numpy

import "go.starlark.net/starlarkstruct"

// Modules returns the Starlark modules of this package, for package
// all's Library. Modules of the same name are merged there.
func Modules() []*starlarkstruct.Module {
	var mods []*starlarkstruct.Module
	mods = append(mods, numpyModules()...)
	mods = append(mods, tileModules()...)
	mods = append(mods, npyModules()...)
	return mods
}
