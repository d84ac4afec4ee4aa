package run

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/checkpoint"
)

// Checkpoint ties a run to a checkpoint: resume restores one when the
// main loop starts, replay compares with one, a probe captures the state
// the script builds (Locals).
type Checkpoint struct {
	// Command is recorded in the manifests of the checkpoints the run
	// writes (os.Args).
	Command []string
	// Resume, when set, is restored by the first Checkpoint extension to
	// start.
	Resume *checkpoint.ResumeSource
	// Replay, when set, makes the Checkpoint extensions compare with its
	// target instead of saving.
	Replay *checkpoint.ReplayTarget
	// Probe, when set, receives the state the script builds before its
	// first main loop, which then stops the script with ErrProbed
	// (probe.go).
	Probe *Probe
	// Expect, when set, is compared with the state the script builds
	// before the first main loop restores the checkpoint: a difference is
	// an OverrideRefusedError.
	Expect *Probe
	// Scratch, for a replay, is the directory that receives what the
	// script writes (removed by the caller afterwards).
	Scratch string
	// PauseCheckpointWrites (a test hook), when not nil, is called half
	// way through every checkpoint write (checkpoint.WriteOptions.PauseHalfway).
	PauseCheckpointWrites func()
	// Add, when set, is a Checkpoint extension added to the script's
	// first main loop, after its own extensions (blocks-repl run
	// --checkpoint; resume and replay pass the checkpoint's own).
	Add *checkpoint.AddedCheckpoint
	// Added is set once a main loop has it.
	Added bool
}

// Info is what a checkpoint written during this run stores about it.
func Info(thread *starlark.Thread) checkpoint.RunInfo {
	info := checkpoint.RunInfo{}
	info.Run.FloatX = starlib.FloatX(thread).String()
	info.Run.DefaultSeed = config.DefaultSeed()
	r, ok := starlib.RunRecordOf(thread)
	if !ok {
		return info
	}
	info.Run.Overrides = r.Overrides
	for _, f := range r.Scripts {
		info.Run.Scripts = append(info.Run.Scripts, checkpoint.ScriptFile{Path: f.Path, Source: f.Source})
	}
	if len(r.Scripts) > 0 {
		info.Script = r.Scripts[0].Path
	}
	if r.Tunables != nil {
		info.Run.Config = map[string]checkpoint.Value{}
		for _, t := range r.Tunables {
			info.Run.Config[t.Name] = checkpoint.EncodeValue(t.Value)
			info.Run.ConfigOrder = append(info.Run.ConfigOrder, t.Name)
		}
	}
	if ck := CheckpointOf(thread); ck != nil {
		info.Command = ck.Command
		info.Run.Added = ck.Add
	}
	if s := stateOf(thread); s != nil {
		s.mu.Lock()
		if s.microbatches > 1 {
			info.Run.Microbatches = s.microbatches
		}
		s.mu.Unlock()
	}
	return info
}
