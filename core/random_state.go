package core

import "github.com/blocks-go/blocks/numpyrand"

// RandomOp is an op that draws random numbers when it runs (dropout
// masks, Gaussian noise, augmentation). It keeps its generator, a
// numpy-exact RandomState, so that a checkpoint can save the generator's
// position and a resumed run draws the same numbers the uninterrupted run
// would have drawn (see core/checkpoint, which saves and restores the state
// of every RandomOp of the training graph, in the order of Ancestors).
//
// Every op that draws random numbers must implement this interface.
type RandomOp interface {
	Op
	// RNG is the op's generator (never nil); the executor draws from it
	// in Run.
	RNG() *numpyrand.RandomState
}

// RandomOps lists the random ops of the graphs of outputs, in the order
// of Ancestors (deterministic for a given script); ops that share one
// generator are listed once.
func RandomOps(outputs []*Variable) []RandomOp {
	var ops []RandomOp
	seen := map[*numpyrand.RandomState]bool{}
	for _, v := range Ancestors(outputs) {
		r, ok := v.Op().(RandomOp)
		if !ok || r.RNG() == nil || seen[r.RNG()] {
			continue
		}
		seen[r.RNG()] = true
		ops = append(ops, r)
	}
	return ops
}

// ApplyRandomOp makes the variable op(inputs...) for a random op defined
// outside this package; an input the op refuses is an error.
func ApplyRandomOp(op RandomOp, inputs ...*Variable) (*Variable, error) {
	return tryApply(op, inputs...)
}
