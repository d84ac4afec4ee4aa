package blocks

import (
	"slices"
	"sync"

	"go.starlark.net/starlarkstruct"
)

// Modules returns the Starlark modules of this package, for package
// all's Library (modules of the same name are merged there).
func Modules() []*starlarkstruct.Module { return slices.Clone(modules()) }

// modules builds the modules once, on first use: building them also
// fills the package's class tables, which must happen once. It is the
// package's one cache.
var modules = sync.OnceValue(func() []*starlarkstruct.Module {
	var mods []*starlarkstruct.Module
	mods = append(mods, algorithmsModules()...)
	mods = append(mods, annotationsModules()...)
	mods = append(mods, baseModules()...)
	mods = append(mods, bnModules()...)
	mods = append(mods, bricksModules()...)
	mods = append(mods, bricksRecurrentTableModules()...)
	mods = append(mods, bricksSimpleTableModules()...)
	mods = append(mods, containerModules()...)
	mods = append(mods, convModules()...)
	mods = append(mods, evaluatorsModules()...)
	mods = append(mods, extensionsModules()...)
	mods = append(mods, extensionsPlotModules()...)
	mods = append(mods, extensionsTableModules()...)
	mods = append(mods, filterModules()...)
	mods = append(mods, graphModules()...)
	mods = append(mods, initializationModules()...)
	mods = append(mods, initializationTableModules()...)
	mods = append(mods, logModules()...)
	mods = append(mods, modelModules()...)
	mods = append(mods, monitoringModules()...)
	mods = append(mods, recurrentModules()...)
	mods = append(mods, recurrentStackNamesModules()...)
	mods = append(mods, rolesModules()...)
	mods = append(mods, saveloadModules()...)
	mods = append(mods, scriptClassModules()...)
	mods = append(mods, selectModules()...)
	mods = append(mods, sequenceGeneratorsModules()...)
	mods = append(mods, serializationModules()...)
	mods = append(mods, stepsTableModules()...)
	mods = append(mods, trainingModules()...)
	mods = append(mods, utilsModules()...)
	mods = append(mods, wrappersModules()...)
	return mods
})
