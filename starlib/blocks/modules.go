package blocks

import (
	"slices"
	"sync"

	"go.starlark.net/starlark"
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
	return append(mods, submoduleAliases(mods)...)
})

// blocksSubmodules are the modules where Blocks defines names that its
// packages re-export (blocks.bricks.simple.Linear is blocks.bricks.Linear):
// each is loadable under its own name too, with the names this project
// provides, so that `from blocks.bricks.bn import BatchNormalization`
// ports as load("blocks.bricks.bn", "BatchNormalization") (docs/porting.md).
var blocksSubmodules = []struct {
	name, parent string
	names        []string
}{
	{"blocks.bricks.bn", "blocks.bricks", []string{"BatchNormalization", "SpatialBatchNormalization", "BatchNormalizedMLP"}},
	{"blocks.bricks.interfaces", "blocks.bricks", []string{"Activation", "Feedforward", "Initializable", "LinearLike", "Random"}},
	{"blocks.bricks.sequences", "blocks.bricks", []string{"Sequence", "FeedforwardSequence", "MLP"}},
	{"blocks.bricks.simple", "blocks.bricks", []string{"Linear", "Bias", "Maxout", "LinearMaxout", "Identity", "Tanh", "Logistic",
		"Softplus", "Rectifier", "LeakyRectifier", "Softmax", "NDimensionalSoftmax"}},
	{"blocks.bricks.recurrent.architectures", "blocks.bricks.recurrent", []string{"SimpleRecurrent", "LSTM", "GatedRecurrent"}},
	{"blocks.bricks.recurrent.base", "blocks.bricks.recurrent", []string{"BaseRecurrent", "recurrent"}},
	{"blocks.bricks.recurrent.misc", "blocks.bricks.recurrent", []string{"Bidirectional", "RecurrentStack"}},
	{"blocks.graph.bn", "blocks.graph", []string{"batch_normalization", "apply_batch_normalization", "get_batch_normalization_updates"}},
}

// submoduleAliases makes the modules of blocksSubmodules from the members
// of their parents among mods (a name the parent lacks is left out).
func submoduleAliases(mods []*starlarkstruct.Module) []*starlarkstruct.Module {
	var out []*starlarkstruct.Module
	for _, a := range blocksSubmodules {
		members := starlark.StringDict{}
		for _, m := range mods {
			if m.Name != a.parent {
				continue
			}
			for _, n := range a.names {
				if v, ok := m.Members[n]; ok {
					members[n] = v
				}
			}
		}
		out = append(out, &starlarkstruct.Module{Name: a.name, Members: members})
	}
	return out
}
