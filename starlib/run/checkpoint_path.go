package run

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/checkpoint"
)

// CheckpointPath is where a Checkpoint extension built now writes, checked
// before training starts: the directory exists, the sandbox allows it, no
// other run holds it (the lock is taken now, for the process's life), and
// what is there is a checkpoint it may replace. In a resumed run, the
// Checkpoint given the path that wrote the resumed checkpoint (the first
// one, when that path is unknown) writes to the checkpoint that was
// resumed instead, wherever that is. A replay or a --print-config run
// writes nothing (a replay compares), so nothing is checked or locked.
func CheckpointPath(thread *starlark.Thread, path string) (string, error) {
	ck := CheckpointOf(thread)
	if (ck != nil && ck.Replay != nil) || starlib.PrintingConfig(thread) {
		return path, nil
	}
	if ck != nil && ck.Resume != nil && ck.Resume.Path != "" {
		if s := stateOf(thread); s != nil {
			s.mu.Lock()
			mine := !s.resumeRouted && (ck.Resume.ScriptPath == "" || ck.Resume.ScriptPath == path)
			if mine {
				s.resumeRouted = true
			}
			s.mu.Unlock()
			// The script's own path when it names the resumed file (the
			// log then records the same path as an uninterrupted run).
			if mine && starlib.RealPath(path) != starlib.RealPath(ck.Resume.Path) {
				path = ck.Resume.Path
			}
		}
	}
	if err := starlib.CheckWrite(thread, path); err != nil {
		return "", err
	}
	if p := ParallelOf(thread); p != nil && p.Comm != nil && p.Comm.Rank() != 0 {
		return path, nil // only process 0 writes (and locks)
	}
	if err := checkpoint.Lock(path); err != nil {
		return "", err
	}
	if err := checkpoint.CheckReplaceable(path); err != nil {
		return "", err
	}
	return path, nil
}
