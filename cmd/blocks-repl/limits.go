package main

import (
	"flag"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Defaults of a resumed or replayed checkpoint's script, data from
// elsewhere: a billion Starlark steps (minutes of pure Starlark; training
// inside MainLoop.run is not counted) and half the machine's memory as
// the run's memory budget.
const defaultConfinedSteps = 1_000_000_000

// limitFlags adds --max-steps, --max-memory (and, with loadRoots,
// --load-root) to fs; the returned function gives the limits parsed.
func limitFlags(fs *flag.FlagSet, confined bool) func() (starlib.Limits, []string, error) {
	steps := fs.Uint64("max-steps", 0, "stop the script after N Starlark steps (0: no limit; resume/replay: 1e9)")
	mem := fs.String("max-memory", "", "the run's memory budget: refuse any array, list or buffer that would take the heap past SIZE, and stop the script when its heap is over it (e.g. 8G; default: the machine's memory, half of it for resume/replay)")
	var roots multiFlag
	fs.Var(&roots, "load-root", "also let load() read .star files under DIR (a project's shared helpers)")
	return func() (starlib.Limits, []string, error) {
		l := starlib.Limits{MaxSteps: *steps}
		if confined && l.MaxSteps == 0 {
			l.MaxSteps = defaultConfinedSteps
		}
		if *mem != "" {
			n, err := parseSize(*mem)
			if err != nil {
				return l, nil, fmt.Errorf("--max-memory %s: %v", *mem, err)
			}
			l.MaxMemory = n
		} else if confined {
			l.MaxMemory = nd.PhysicalMemory() / 2
		}
		return l, roots, nil
	}
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// parseSize reads a byte count: a number with an optional K, M, G, T, P
// or E suffix (powers of 1024; a trailing B or iB is allowed), at most
// 4E (2^62 bytes).
func parseSize(s string) (uint64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := uint64(1)
	if t != "" {
		if i := strings.IndexByte("KMGTPE", t[len(t)-1]); i >= 0 {
			mult = 1 << (10 * (i + 1))
			t = t[:len(t)-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	switch {
	case err != nil || math.IsNaN(f):
		return 0, fmt.Errorf("want a size such as 512M or 8G (a number, then K, M, G, T, P or E), got %q", s)
	case f <= 0:
		return 0, fmt.Errorf("want a positive size such as 512M or 8G, got %s", s)
	case f*float64(mult) > 1<<62:
		return 0, fmt.Errorf("%s is more than any memory (at most 4E, 2^62 bytes)", s)
	}
	return uint64(f * float64(mult)), nil
}

// applyMemoryBudget makes the run's --max-memory (or the confined
// default) the process's memory budget: nd.New and every checked buffer
// refuse what would take the heap past it, the script stops when the heap
// is over it, and Go's collector works to keep under it
// (debug.SetMemoryLimit). It returns the function restoring the old one.
func applyMemoryBudget(l starlib.Limits) (restore func()) {
	limit, what := l.MaxMemory, "the run's memory budget (--max-memory)"
	if limit == 0 {
		limit, what = nd.PhysicalMemory(), "the machine's memory"
	}
	back := nd.SetMemoryBudget(limit, what)
	old := debug.SetMemoryLimit(int64(min(limit, 1<<62)))
	return func() {
		back()
		debug.SetMemoryLimit(old)
	}
}
