// Package bricks holds Blocks' bricks: parametrized operations with a
// lifecycle (construct, push allocation configuration, allocate, push
// initialization configuration, initialize, apply) that compose into
// hierarchies, annotating every variable they make with their roles, the
// brick and the application call.
//
// A brick is a value of a type that embeds *Base. Its configuration
// (Blocks' lazy arguments and settings) is typed fields of that type:
// Linear's InputDim and OutputDim, MLP's Dims, Convolutional's FilterSize
// and BorderMode, ... A zero value (0, nil) is an argument left out: the
// brick's default holds, or, for a lazy allocation argument, a parent
// pushes it (MLP sets its layers' dimensions, Fork its copies', ...) and
// Allocate refuses to run while one is missing. Go interfaces stand for
// Blocks' classes where containers and the lifecycle depend on them:
// Initializable (an embedded InitConfig: WeightsInit, BiasesInit,
// UseBias, which a parent pushes to its children), Feedforward (one input
// and one output whose dimensions a parent sets: MLP's layers and the
// copies of Parallel, Fork, Merge and Distribute are any Feedforward
// prototype), RecurrentBrick (Blocks' BaseRecurrent: recurrent
// applications), Emitter, Feedback, GetDimmer, KeywordApplier. Applications
// are registered by name and run through Apply, which allocates the brick
// when needed and copies and tags inputs and outputs as Blocks'
// @application does.
//
// A brick knows its own Python class name only (Base.Class, for its
// default name and annotations: "Linear(linear)"); Blocks' hierarchy
// above it, which scripts see through isinstance, issubclass and
// VariableFilter(bricks=[Class]), is the Starlark face's, and code here
// asks the Go interfaces (IsInitializable for an Initializable class
// without parameters) or the brick's type.
//
// Python's names for the attributes (input_dim, weights_init, ...), their
// defaults and conversions live in the Starlark face (starlib/blocks'
// class tables), not here; a script class's own attributes live with its
// instance there too.
//
// Each brick has a constructor taking Blocks' arguments that shape it
// (NewLSTM(cfg, name, dim, activation, gateActivation), NewFork,
// NewReadout, ...); the fields can then be set directly
// (l := NewLinear(cfg, "l"); l.InputDim, l.OutputDim = 784, 10), or
// given in a config struct (NewLinearWith(cfg, name, LinearConfig{...}),
// ConvolutionalConfig, PoolingConfig).
//
// Random numbers come from numpyrand, seeded as Blocks seeds them: a
// generator shared by all bricks of a Config (Blocks' class-level
// RandomState(default_seed=1)) draws randint(2**31 - 1) as a brick's seed
// the first time its generator is needed; a parent pushes its generator to
// its children; linear-like bricks initialize biases before weights.
package bricks
