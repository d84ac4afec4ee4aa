package run

import (
	"sync"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
)

// Run-local keys (starlib.RunLocal).
const (
	checkpointKey = "blocks.run.checkpoint"
	parallelKey   = "blocks.run.parallel"
	stateKey      = "blocks.run.state"
)

// Locals are the starlib.Options.Locals of a run that relates to the
// checkpoint ck and runs over the processes of par (either may be nil).
func Locals(ck *Checkpoint, par *Parallel) map[string]any {
	l := map[string]any{}
	if ck != nil {
		l[checkpointKey] = ck
	}
	if par != nil {
		l[parallelKey] = par
	}
	return l
}

// CheckpointOf is the run's Checkpoint (nil for a plain run).
func CheckpointOf(thread *starlark.Thread) *Checkpoint {
	ck, _ := starlib.RunLocal(thread, checkpointKey, nil).(*Checkpoint)
	return ck
}

// parallelOf is the run's Parallel (nil for a run of one process without
// microbatches set on the command line).
func ParallelOf(thread *starlark.Thread) *Parallel {
	p, _ := starlib.RunLocal(thread, parallelKey, nil).(*Parallel)
	return p
}

// runState is what this package records of a run.
type runState struct {
	mu sync.Mutex
	// resumeRouted is set once a Checkpoint extension took the resumed
	// checkpoint's path.
	resumeRouted bool
	// loopRuns are the main_loop.run() calls not yet taken (TakeLoopRuns).
	loopRuns []LoopRun
	// microbatches is the number of microbatches the main loops use
	// (for checkpoints).
	microbatches int
}

// stateOf is the run's runState (nil outside a run).
func stateOf(thread *starlark.Thread) *runState {
	s, _ := starlib.RunLocal(thread, stateKey, func() any { return &runState{} }).(*runState)
	return s
}
