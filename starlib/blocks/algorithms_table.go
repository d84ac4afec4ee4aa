package blocks

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
)

// The training algorithms and the main loop as tables (classtable.go):
//
//	UpdatesAlgorithm(updates=None, theano_func_kwargs=None, on_unused_sources='raise', **kwargs)
//	GradientDescent(cost=None, parameters=None, step_rule=None, gradients=None, known_grads=None,
//	    consider_constant=None, **kwargs: updates=None, theano_func_kwargs=None, on_unused_sources='raise')
//	MainLoop(algorithm, data_stream, model=None, log=None, log_backend=None, extensions=None)
//
// theano_func_kwargs (arguments for theano.function) is taken with
// Blocks' default None only: the project compiles no Theano function.
func algorithmsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.algorithms", Members: registerClasses(false, algorithmTables()...)})
	ml := mainLoopTable()
	loop := registerClasses(false, ml)
	loop["MainLoop"] = &starlib.CallableLibClass{LibClass: mainLoopBase(ml), Fn: loop["MainLoop"].(starlark.Callable)}
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.main_loop", Members: loop})
	return
}

func algorithmTables() []*classTable {
	const m = "blocks.algorithms"
	onUnused := classParam{Name: "on_unused_sources", Default: "'raise'", Kind: argString}
	return []*classTable{
		{Module: m, Name: "UpdatesAlgorithm", Doc: "applies updates with every batch",
			Params: ps(opt("updates", "None"), opt("theano_func_kwargs", "None"), onUnused),
			New:    newUpdatesAlgorithm},
		{Module: m, Name: "GradientDescent", Doc: "each batch, every parameter becomes parameter - step, the steps from step_rule applied to the gradients of cost",
			Params: params(ps(classParam{Name: "cost", Default: "None", Kind: argVariable}, opt("parameters", "None"),
				classParam{Name: "step_rule", Default: "None", Kind: argStepRule}, opt("gradients", "None"), opt("known_grads", "None"),
				opt("consider_constant", "None"), kw("updates", "None"), kw("theano_func_kwargs", "None")),
				ps(classParam{Name: "on_unused_sources", Default: "'raise'", Kind: argString, Keyword: true})),
			New: newGradientDescent},
	}
}

func mainLoopTable() *classTable {
	return &classTable{Module: "blocks.main_loop", Name: "MainLoop", Doc: "trains: the algorithm on each batch of the data stream, the extensions called between",
		Params: ps(req("algorithm"), req("data_stream"), opt("model", "None"), opt("log", "None"), opt("log_backend", "None"), opt("extensions", "None")),
		New:    newMainLoop}
}
