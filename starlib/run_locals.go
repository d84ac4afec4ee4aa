package starlib

import "go.starlark.net/starlark"

// Run locals are what a module keeps per run, as go.starlark.net's thread
// locals are per thread, but shared by every thread of the run
// (CallThread): the runtime knows nothing of them. The training modules
// (package starlib/run) keep there how the run relates to a checkpoint,
// its processes and the main loops it ran.

// RunLocal is the value of thread's run under key: Options.Locals' at
// first, else the one init made at the first call that passed it (init
// may be nil: no value is made). RunLocal is nil outside a run.
func RunLocal(thread *starlark.Thread, key string, init func() any) any {
	s := state(thread)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.locals[key]
	if !ok && init != nil {
		v = init()
		if s.locals == nil {
			s.locals = map[string]any{}
		}
		s.locals[key] = v
	}
	return v
}
