// Package blocks is the Starlark modules of Blocks: blocks.bricks (and
// its submodules conv, recurrent, attention, sequence_generators, cost,
// lookup, parallel, base), blocks.initialization, blocks.graph,
// blocks.filter, blocks.roles, blocks.algorithms, blocks.extensions (and
// training, stopping, predicates, monitoring, saveload, plot),
// blocks.monitoring, blocks.main_loop, blocks.model, blocks.log,
// blocks.select, blocks.search, blocks.serialization, blocks.utils and
// blocks.theano_expressions, and the theano module's function, shared and
// config. Each file declares the modules it adds to, with a doc comment
// listing their builtins; Modules returns them all, for package
// starlib/all. The values (Brick, BrickClass, ComputationGraph, MainLoop,
// Log, ...) are this package's; variables, arrays and the run are
// starlib's.
package blocks
