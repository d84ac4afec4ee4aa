package tensor

import "go.starlark.net/starlarkstruct"

// Modules returns the Starlark modules of this package, for package
// all's Library. Modules of the same name are merged there.
func Modules() []*starlarkstruct.Module {
	var mods []*starlarkstruct.Module
	mods = append(mods, tensorModules()...)
	mods = append(mods, theanoScanModules()...)
	mods = append(mods, theanoTypesModules()...)
	mods = append(mods, allocModules()...)
	mods = append(mods, randomStreamsModules()...)
	mods = append(mods, theanoConfigModules()...)
	mods = append(mods, extraModules()...)
	return mods
}
