package starlib

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// CheckpointPath is where a Checkpoint extension built now writes, checked
// before training starts: the directory exists, the sandbox allows it, no
// other run holds it (the lock is taken now, for the process's life), and
// what is there is a checkpoint it may replace. In a resumed run, the
// Checkpoint given the path that wrote the resumed checkpoint (the first
// one, when that path is unknown) writes to the checkpoint that was
// resumed instead, wherever that is. A replay writes nothing (it compares), so nothing is
// checked or locked.
func CheckpointPath(thread *starlark.Thread, path string) (string, error) {
	ck := CheckpointRunOf(thread)
	if ck != nil && (ck.Replay != nil || ck.PrintConfig) {
		return path, nil
	}
	if ck != nil && ck.Resume != nil && ck.Resume.Path != "" {
		if s := state(thread); s != nil {
			s.mu.Lock()
			mine := !s.resumeRouted && (ck.Resume.ScriptPath == "" || ck.Resume.ScriptPath == path)
			if mine {
				s.resumeRouted = true
			}
			s.mu.Unlock()
			// The script's own path when it names the resumed file (the
			// log then records the same path as an uninterrupted run).
			if mine && realPath(path) != realPath(ck.Resume.Path) {
				path = ck.Resume.Path
			}
		}
	}
	if err := CheckWrite(thread, path); err != nil {
		return "", err
	}
	if s := state(thread); s != nil && s.parallel != nil && s.parallel.Comm != nil && s.parallel.Comm.Rank() != 0 {
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
