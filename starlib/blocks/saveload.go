package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Module blocks.extensions.saveload: checkpoints (see docs/checkpoints.md).
//
//	Checkpoint(path, parameters=None, save_separately=None, save_main_loop=True,
//	           use_cpickle=False, keep_last=1, **triggers)
//	    saves the run to the tar file path (default after_training; use
//	    every_n_epochs=, every_n_batches=, ...): the script and the .star
//	    files it loaded, the overrides and config, the parameters (.npz
//	    member _parameters, keys "|mlp|linear_0.W"), the step rules'
//	    buffers, the position in the data (mid-epoch too), the generators
//	    and the log; atomically. path always holds the newest; keep_last=N
//	    keeps N-1 older ones beside it as STEM_iterK.tar. Records saved_to.
//	    save_separately accepts "log", "iteration_state", "algorithm_state",
//	    "parameters", "model" (each already is its own member).
//	    blocks-repl resume path continues the run bit for bit.
//	Load(path, load_iteration_state=False, load_log=False, **triggers)
//	    before training (default), loads the parameters of the checkpoint
//	    at path; with load_iteration_state the step-rule state and the
//	    generators too; with load_log the log (and, with both, the position
//	    in the epoch). Records loaded_from. Nothing in the file is run.
func saveloadModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.extensions.saveload", Members: starlark.StringDict{
		"SAVED_TO":    starlark.String(checkpoint.RecordSavedTo),
		"LOADED_FROM": starlark.String(checkpoint.RecordLoadedFrom),
	}})
	return
}

func parameterPath(p *core.Variable) string { return bricks.ParameterPath(p) }

// newCheckpointExtension makes Checkpoint from its table's arguments
// (extensions_table.go).
func newCheckpointExtension(c *classCall) (mainloop.Extension, error) {
	thread, params, separately := c.thread, c.Value("parameters"), c.Value("save_separately")
	path, keepLast := c.String("path"), c.Int("keep_last") // None is "": refused once save_separately is checked
	c.Bool("save_main_loop")                               // read, as Blocks: the checkpoint always holds the state
	c.Bool("use_cpickle")
	tr := c.Triggers
	var err error
	var ps []*core.Variable
	if params != starlark.None {
		if ps, err = variablesOf(thread, "Checkpoint: parameters", params); err != nil {
			return nil, err
		}
	}
	var sep []string
	if separately != starlark.None {
		ss, elem, ok := starlib.Strings(separately)
		switch {
		case !ok && elem == nil:
			return nil, fmt.Errorf("Checkpoint: save_separately must be a list of names, got %s", separately.Type())
		case !ok:
			return nil, fmt.Errorf("Checkpoint: save_separately must hold strings, got %s", elem.Type())
		}
		sep = append(sep, ss...)
	}
	if err := checkpoint.CheckSaveSeparately(sep); err != nil {
		return nil, err
	}
	if path, err = run.CheckpointPath(thread, path); err != nil {
		return nil, fmt.Errorf("Checkpoint: %w", err)
	}
	e, err := checkpoint.NewCheckpointExtension(path, keepLast, sep,
		checkpoint.Bindings{Parameters: ps, Namer: parameterPath}, tr)
	if err != nil {
		return nil, err
	}
	bindCheckpoint(thread, e)
	return e, nil
}

// bindCheckpoint ties a Checkpoint extension to the run: what it records
// about the run, and the resume or replay it serves.
func bindCheckpoint(thread *starlark.Thread, e *checkpoint.CheckpointExtension) {
	e.Info = func() checkpoint.RunInfo { return run.Info(thread) }
	e.Bindings.RandomStreams = runStreams(thread)
	e.Bindings.Objects = starlib.ScriptObjects(thread)
	if ck := run.CheckpointOf(thread); ck != nil {
		e.Resume = ck.Resume
		e.Replay = ck.Replay
		e.PauseHalfway = ck.PauseCheckpointWrites
	}
}

// runStreams gives the random streams the run has made (Theano's
// RandomStreams, MRG_RandomStreams, bricks' theano_rng), whose draws'
// generators checkpoints save (random_streams).
func runStreams(thread *starlark.Thread) func() []*core.RandomStreams {
	return func() []*core.RandomStreams { return starlib.RandomStreamsOf(thread) }
}

// addCommandLineCheckpoint appends to the run's first main loop the
// Checkpoint that the command line asks for (run.Checkpoint.Add: blocks-repl
// run --checkpoint PATH), after the script's own extensions, as if the
// script had passed Checkpoint(PATH, every_n_epochs=..., ...) last.
func addCommandLineCheckpoint(thread *starlark.Thread, ml *mainloop.MainLoop) error {
	ck := run.CheckpointOf(thread)
	if ck == nil || ck.Add == nil || ck.Added {
		return nil
	}
	ck.Added = true
	for _, x := range ml.Extensions {
		if e, ok := x.(*checkpoint.CheckpointExtension); ok && e.Path == ck.Add.Path {
			return fmt.Errorf("--checkpoint %s: the script's own Checkpoint writes %s already", ck.Add.Path, e.Path)
		}
	}
	path, err := run.CheckpointPath(thread, ck.Add.Path)
	if err != nil {
		return fmt.Errorf("--checkpoint: %w", err)
	}
	e, err := checkpoint.NewCheckpointExtension(path, 1, nil, checkpoint.Bindings{Namer: parameterPath}, ck.Add.Triggers())
	if err != nil {
		return fmt.Errorf("--checkpoint: %w", err)
	}
	bindCheckpoint(thread, e)
	ml.Extensions = append(ml.Extensions, e)
	return nil
}
