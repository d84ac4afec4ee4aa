package starlib

import (
	"fmt"
	"time"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/nd"
)

// Limits bound what a script may consume, so that a runaway or hostile
// script (a resumed checkpoint's) ends with an error that names its line
// instead of exhausting the machine.
type Limits struct {
	// MaxSteps is the most Starlark execution steps (bytecode
	// instructions) the script may run; 0: no limit. Training inside a
	// builtin (MainLoop.run) is not counted.
	MaxSteps uint64
	// MaxMemory is the most bytes one array or one list a builtin builds
	// may take; 0: the machine's memory. (blocks-repl also makes it the
	// process's budget, nd.SetMemoryBudget, which every allocation and
	// the heap as a whole are checked against.)
	MaxMemory uint64
}

// memoryLimit is the budget of the run on thread and the words naming it.
func memoryLimit(thread *starlark.Thread) (uint64, string) {
	if s := state(thread); s != nil && s.limits.MaxMemory > 0 {
		return s.limits.MaxMemory, "the run's memory budget (--max-memory)"
	}
	return nd.PhysicalMemory(), "the machine's memory"
}

// checkAlloc returns an error when an array of dt and shape does not fit
// the run's memory budget (or its size overflows).
func checkAlloc(thread *starlark.Thread, dt nd.DType, shape []int) error {
	limit, what := memoryLimit(thread)
	return nd.CheckAlloc(dt, shape, limit, what)
}

// NewArray is nd.New for a shape a script gave: an error instead of an
// overflowing or impossible allocation.
func NewArray(thread *starlark.Thread, dt nd.DType, shape []int) (*nd.Array, error) {
	if err := checkAlloc(thread, dt, shape); err != nil {
		return nil, err
	}
	return nd.New(dt, shape...), nil
}

// valueBytes is what one element of a Starlark list costs at least (an
// interface value).
const valueBytes = 16

// boundedIterableBuiltins wrap the universe's builtins that allocate the
// length of their argument at once (list(range(1 << 40)) asks for 16 TiB
// before the first element): they refuse an argument longer than the
// run's memory budget allows. They wrap base's builtin of that name
// (Predeclared's dict, tuple, list) or else the universe's.
func boundedIterableBuiltins(base starlark.StringDict) starlark.StringDict {
	out := starlark.StringDict{}
	for _, name := range []string{"list", "tuple", "sorted", "reversed", "dict", "enumerate", "zip"} {
		orig, ok := base[name].(*starlark.Builtin)
		if !ok {
			orig = starlark.Universe[name].(*starlark.Builtin)
		}
		out[name] = NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			limit, what := memoryLimit(thread)
			for _, a := range args {
				n := starlark.Len(a)
				if n > 0 && uint64(n) > limit/valueBytes {
					return nil, fmt.Errorf("an argument of %d elements does not fit in %s (%s holds at most %d elements)",
						n, what, nd.FormatBytes(limit), limit/valueBytes)
				}
			}
			return orig.CallInternal(thread, args, kwargs)
		})
	}
	return out
}

// heapWatchPeriod is how often a running script's heap is compared with
// the process's memory budget.
const heapWatchPeriod = 20 * time.Millisecond

// watchHeap cancels thread, while a script runs on it, once the live heap
// exceeds the process's memory budget (nd.OverBudget), when a command set
// one (nd.SetMemoryBudget): strings and lists grow inside go.starlark.net
// (("ab" * (1 << 24)).replace(...), l.append in a loop), where no array
// check sees them. The script stops at its next step: one step can still
// allocate past the budget (one replace by a long string), the next one
// does not start. The returned function stops the watch.
func watchHeap(thread *starlark.Thread) (stop func()) {
	if !nd.BudgetSet() {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(heapWatchPeriod)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := nd.OverBudget(); err != nil {
					thread.Cancel(err.Error())
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
