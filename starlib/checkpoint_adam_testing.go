//go:build blocks_checkpoint_adam

package starlib

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/checkpoint/checkpointtest"
)

// Built only with -tags blocks_checkpoint_adam (the checkpoint kill test,
// when blocks.algorithms has no Adam of its own): module checkpointtest
// with Adam(learning_rate=0.002).
func init() {
	Register("checkpointtest", CheckpointTestModule)
}

// CheckpointTestModule is the module checkpointtest.
var CheckpointTestModule = &starlarkstruct.Module{Name: "checkpointtest", Members: starlark.StringDict{
	"Adam": NewBuiltin("Adam", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		lr := FloatArg(0.002)
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "learning_rate?", &lr); err != nil {
			return nil, err
		}
		a := checkpointtest.NewAdam(float64(lr))
		return &StepRule{R: a, name: "Adam", attrs: map[string]*core.Variable{"learning_rate": a.LearningRate}}, nil
	}),
}}
