package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core/algorithms"
	"github.com/blocks-go/blocks/starlib"
)

// UpdatesAlgorithm of blocks.algorithms (the step rules are tables:
// steps_table.go):
//
//	UpdatesAlgorithm(updates, on_unused_sources="raise")  applies updates with every batch
func algorithmsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.algorithms", Members: starlark.StringDict{
		"UpdatesAlgorithm": starlib.NewBuiltin("UpdatesAlgorithm", updatesAlgorithm),
	}})
	return
}

func updatesAlgorithm(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var ups starlark.Value = starlark.NewList(nil)
	onUnused := "raise"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "updates?", &ups, "on_unused_sources?", &onUnused); err != nil {
		return nil, err
	}
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
