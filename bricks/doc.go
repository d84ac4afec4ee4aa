// Package bricks holds Blocks' bricks: parametrized operations with a
// lifecycle (construct, push allocation configuration, allocate, push
// initialization configuration, initialize, apply) that compose into
// hierarchies, annotating every variable they make with their roles, the
// brick and the application call.
//
// A brick is a value of a type that embeds *Base. Its attributes (Blocks'
// lazy arguments and settings such as input_dim, dims, weights_init) live
// in Base under their Blocks names, so a scripting layer can read and set
// them generically; each brick declares them with AttrSpec. Applications
// are registered by name and run through Apply, which allocates the brick
// when needed and copies and tags inputs and outputs as Blocks'
// @application does.
//
// Each brick has a typed constructor taking Blocks' arguments:
// positional Go arguments where they shape the brick (NewLSTM(cfg, name,
// dim, activation, gateActivation), NewFork, NewReadout, ...), or a
// config struct where they are plain attributes (NewLinearWith(cfg, name,
// LinearConfig{InputDim: 784, OutputDim: 10}), ConvolutionalConfig,
// PoolingConfig, ...), a zero field being an argument left out.
//
// Random numbers come from numpyrand, seeded as Blocks seeds them: a
// generator shared by all bricks of a Config (Blocks' class-level
// RandomState(default_seed=1)) draws randint(2**31 - 1) as a brick's seed
// the first time its generator is needed; a parent pushes its generator to
// its children; linear-like bricks initialize biases before weights.
package bricks
