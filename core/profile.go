package core

import (
	"fmt"
	"time"

	"github.com/blocks-go/blocks/nd"
)

// OpTime is the time a function spent in one kind of op (ops of the same
// name and output shape summed), for performance work.
type OpTime struct {
	Op    string // the op and its output shape
	Calls int    // steps of this kind per call
	Time  time.Duration
}

// Profiler is an Executor that times its steps (the CPU backend's).
type Profiler interface {
	// Profile runs the plan for args reps times (its updates not applied,
	// its outputs not copied) timing every step, and returns the time per
	// call of each kind of op, largest first.
	Profile(args []*nd.Array, reps int) ([]OpTime, error)
}

// ProfileOps runs the function reps times on args (its updates are not
// applied, its outputs not copied) timing every step of the plan, and
// returns the time per call of each kind of op, largest first. A loop
// (Scan) counts as one op: its steps run inside it. Only functions on a
// backend whose executor is a Profiler (the CPU's) can be profiled.
func (f *Function) ProfileOps(args []*nd.Array, reps int) ([]OpTime, error) {
	p, ok := f.exec.(Profiler)
	if !ok {
		return nil, fmt.Errorf("profiling ops is the CPU backend's; this function runs on %s", f.backend.Name())
	}
	if _, err := f.CallView(args); err != nil { // plan and warm up
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.Profile(args, reps)
}
