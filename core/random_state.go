package core

import "github.com/blocks-go/blocks/numpyrand"

// RandomOp is an op that draws random numbers when it runs (dropout
// masks, Gaussian noise, augmentation). It keeps its generator, a
// numpy-exact RandomState, so that a checkpoint can save the generator's
// position and a resumed run draws the same numbers the uninterrupted run
// would have drawn (see train/checkpoint, which saves and restores the state
// of every RandomOp of the training graph, in the order of Ancestors).
//
// Every op that draws random numbers must implement this interface.
type RandomOp interface {
	Op
	// RNG is the op's generator (never nil); the executor draws from it
	// in Run.
	RNG() *numpyrand.RandomState
}

// ApplyRandomOp makes the variable op(inputs...) for a random op defined
// outside this package; an input the op refuses is an error.
func ApplyRandomOp(op RandomOp, inputs ...*Variable) (*Variable, error) {
	return tryApply(op, inputs...)
}
