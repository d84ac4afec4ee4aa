package core

import "github.com/blocks-go/blocks/numpyrand"

// RandomOp is an op that draws random numbers each time a compiled function
// runs it (dropout masks, noise). RNG is its generator, so that a checkpoint
// can save and restore the generator's state.
type RandomOp interface {
	Op
	RNG() *numpyrand.RandomState
}
