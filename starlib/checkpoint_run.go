package starlib

import (
	"errors"
	"os"
	"path/filepath"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/train/checkpoint"
)

// CheckpointRun ties a run to a checkpoint: resume restores one when the
// main loop starts, replay compares with one, PrintConfig stops at the
// script's config(...) after printing the resolved tunables.
type CheckpointRun struct {
	// Command is recorded in the manifests of the checkpoints the run
	// writes (os.Args).
	Command []string
	// Resume, when set, is restored by the first Checkpoint extension to
	// start.
	Resume *checkpoint.ResumeSource
	// Replay, when set, makes the Checkpoint extensions compare with its
	// target instead of saving.
	Replay *checkpoint.ReplayTarget
	// PrintConfig makes config(...) print the resolved tunables and stop
	// the script with ErrConfigPrinted.
	PrintConfig bool
	// Printed is set once config(...) printed.
	Printed bool
	// Probe, when set, receives the state the script builds before its
	// first main loop, which then stops the script with ErrProbed
	// (resume_probe.go).
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

// ErrConfigPrinted stops a --print-config run after config(...).
var ErrConfigPrinted = errors.New("config printed")

type scriptSource struct {
	path string
	src  []byte
}

// recordScript records the main script (the first file of a run).
func (in *Interp) recordScript(filename string, src []byte) {
	abs, err := filepath.Abs(filename)
	if err != nil {
		abs = filename
	}
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	in.state.scripts = append(in.state.scripts, scriptSource{abs, src})
}

// SetSessionScript makes the source src returns, named path, the main
// script that the checkpoints written from now on store (an interactive
// session's code: the REPL's or a notebook's inputs so far, as :save
// writes them), so that resume and replay re-run the session. The files
// it loads are stored after it, as for a script. src is called when a
// checkpoint is written (on the goroutine that runs the script), not
// before: a session's inputs cost nothing until then.
func (in *Interp) SetSessionScript(path string, src func() []byte) {
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	in.state.session = &sessionScript{path, src}
}

// sessionScript is SetSessionScript's script.
type sessionScript struct {
	path string
	src  func() []byte
}

// readLoaded reads a file for load(): from Options.Files when set (a
// checkpoint's own files, and nothing else), else from disk.
func (in *Interp) readLoaded(path, abs string) ([]byte, error) {
	if in.opts.Files != nil {
		if src, ok := in.opts.Files[abs]; ok {
			return src, nil
		}
		return nil, &os.PathError{Op: "load", Path: path,
			Err: errors.New("not stored in the checkpoint (a resumed or replayed script loads only the files stored with it)")}
	}
	return os.ReadFile(path)
}

// RunInfo is what a checkpoint written during this run stores about it.
func RunInfo(thread *starlark.Thread) checkpoint.RunInfo {
	s := state(thread)
	info := checkpoint.RunInfo{}
	info.Run.FloatX = FloatX(thread).String()
	info.Run.DefaultSeed = config.DefaultSeed()
	if s == nil {
		return info
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	info.Run.Overrides = map[string]string{}
	for k, v := range s.raw {
		info.Run.Overrides[k] = v
	}
	scripts := s.scripts
	if s.session != nil {
		scripts = append([]scriptSource{{s.session.path, s.session.src()}}, scripts...)
	}
	for _, f := range scripts {
		info.Run.Scripts = append(info.Run.Scripts, checkpoint.ScriptFile{Path: f.path, Source: f.src})
	}
	if len(scripts) > 0 {
		info.Script = scripts[0].path
	}
	if s.tunables != nil {
		info.Run.Config = map[string]checkpoint.Value{}
		for _, name := range s.tunables.order {
			v := s.tunables.values[name]
			var n Nesting
			gv, err := starlarkToGo(v, &n)
			if err != nil {
				// config() checked the value; a list changed since
				// then (made to contain itself) is kept as its repr.
				gv = v.String()
			}
			info.Run.Config[name] = checkpoint.EncodeValue(gv)
		}
		info.Run.ConfigOrder = append([]string(nil), s.tunables.order...)
	}
	if s.ckpt != nil {
		info.Command = s.ckpt.Command
		info.Run.Added = s.ckpt.Add
	}
	if s.microbatches > 1 {
		info.Run.Microbatches = s.microbatches
	}
	return info
}

// CheckpointRunOf is the run's CheckpointRun (nil for a plain run).
func CheckpointRunOf(thread *starlark.Thread) *CheckpointRun {
	if s := state(thread); s != nil {
		return s.ckpt
	}
	return nil
}

// starlarkToGo converts a tunable's value for the log and the checkpoint
// (an error for a value that contains itself or is nested too deep).
func starlarkToGo(v starlark.Value, n *Nesting) (any, error) {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return int(i), nil
		}
		return x.String(), nil
	case starlark.Float:
		return float64(x), nil
	case *Scalar:
		return starlarkToGo(x.Number(), n)
	case starlark.String:
		return string(x), nil
	case starlark.Indexable:
		if err := n.Enter(v); err != nil {
			return nil, err
		}
		defer n.Leave()
		out := make([]any, x.Len())
		for i := range out {
			var err error
			if out[i], err = starlarkToGo(x.Index(i), n); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v.String(), nil
}
