package blocks

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/mainloop"
)

// configureParallel prepares the main loop of a microbatched or
// data-parallel run (configureLoopParallel) for the algorithm alg.
func configureParallel(thread *starlark.Thread, alg *Algorithm, ml *mainloop.MainLoop) error {
	return run.ConfigureLoopParallel(thread, alg.UA, ml)
}
