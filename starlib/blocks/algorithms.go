package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/algorithms"
)

// newUpdatesAlgorithm makes UpdatesAlgorithm from its table's bound
// arguments (algorithms_table.go): updates=None is no update.
func newUpdatesAlgorithm(c *classCall) (starlark.Value, error) {
	if err := mustBeDefault(c, "theano_func_kwargs"); err != nil {
		return nil, err
	}
	thread := c.thread
	var ups starlark.Value = starlark.NewList(nil)
	if !c.IsNone("updates") {
		ups = c.Value("updates")
	}
	onUnused := c.String("on_unused_sources")
	us, err := updatesOf(thread, ups)
	if err != nil {
		return nil, fmt.Errorf("UpdatesAlgorithm: updates: %v", err)
	}
	ua, err := algorithms.NewUpdatesAlgorithm(us, onUnused)
	if err != nil {
		return nil, err
	}
	ua.Warn = func(msg string) { thread.Print(thread, "WARNING: "+msg) }
	ua.Device = starlib.Device(thread)
	return &Algorithm{UA: ua}, nil
}
