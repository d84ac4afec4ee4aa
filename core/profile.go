package core

import (
	"fmt"

	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/nd"
)

// OpTime is the time a function spent in one kind of op (ops of the same
// name and output shape summed), for performance work.
type OpTime = cpu.OpTime

// ProfileOps runs the function reps times on args (its updates are not
// applied, its outputs not copied) timing every step of the plan, and
// returns the time per call of each kind of op, largest first. A loop
// (Scan) counts as one op: its steps run inside it. Only functions on the
// CPU backend can be profiled.
func (f *Function) ProfileOps(args []*nd.Array, reps int) ([]OpTime, error) {
	e, ok := f.exec.(cpuExecutor)
	if !ok {
		return nil, fmt.Errorf("profiling ops is the CPU backend's; this function runs on %s", f.backend.Name())
	}
	if _, err := f.CallView(args); err != nil { // plan and warm up
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return e.Profile(args, reps)
}
