package kernels

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// Settings are the CPU backend's machine-specific tuning: how large
// products, elementwise kernels and column sums split across cores. They
// are DefaultSettings for the machine's CPUs unless the program gives its
// own (Configure; FromEnv reads the documented overrides from the
// environment the program passes).
//
// Bits: an elementwise kernel or a column sum computes each output
// element with the same arithmetic however it is split, so Workers never
// changes a result. A product split into row blocks may not (OpenBLAS
// picks its inner kernels by the block's size), so the partition of
// products and of the fused recurrent sequences is a constant, MaxParts
// (2), the same on every machine, not the number of cores: a run gives the
// same bits on a laptop, a 64-core server and every process of a
// data-parallel job (whose processes may each see one core). Workers only
// says how many parts run at once.
type Settings struct {
	// Workers is how many parts run at once: the number of CPUs the
	// runtime sees (runtime.NumCPU, which honours the process's CPU
	// affinity), at most 8 (BLOCKS_CPU_WORKERS). With one,
	// every split runs serially (same partition, same bits). Products in
	// two parts run on the calling thread and a C thread in one cgo call
	// (gemm2_cgo.go); other splits on Go workers.
	Workers int
	// SpinMicros is how long the C thread of split products polls for
	// the next product before it sleeps (cgo build): 200 µs, measured on
	// a 2-core machine (docs/performance.md); BLOCKS_CPU_SPIN_US
	// (0: sleep at once).
	SpinMicros int
	// MinGemmSplit is the least number of multiply-adds of a split
	// product (1<<19: with the hand-over at a microsecond or so, the
	// 784-500-10 MLP's three 640k products gain 2% on its step);
	// BLOCKS_CPU_MIN_GEMM_SPLIT.
	MinGemmSplit int
	// MinElemPart is the least number of elements of each part of a
	// split elementwise kernel (32768: splitting pays once each part has
	// tens of thousands); BLOCKS_CPU_MIN_ELEM_PART.
	MinElemPart int
	// NoFuse turns fusions off, for comparisons: the executor's
	// planning-time fusions (bias + ReLU, p − s·g written in place) and
	// the bricks' fused recurrent sequences (cpu.FusionEnabled);
	// BLOCKS_NOFUSE=1 sets it. The executor's fusions never change a
	// result's bits; the fused recurrent sequences' products may sum in
	// another order than the Scan's (OpenBLAS's order depends on the
	// product's shape and the CPU), so they agree with it within rounding.
	NoFuse bool
}

// MaxParts is the number of row blocks of a large product or a split
// recurrent sequence: fixed, because the partition of a product can change
// its bits (Settings).
const MaxParts = 2

// DefaultSettings are the settings for a machine with cpus CPUs and no
// overrides.
func DefaultSettings(cpus int) Settings {
	return Settings{Workers: max(1, min(cpus, 8)), SpinMicros: 200, MinGemmSplit: 1 << 19, MinElemPart: 32 << 10}
}

// Overrides are the environment variables a program may pass to
// FromEnv, each with the field it sets.
var Overrides = []string{"BLOCKS_CPU_WORKERS", "BLOCKS_CPU_SPIN_US", "BLOCKS_CPU_MIN_GEMM_SPLIT", "BLOCKS_CPU_MIN_ELEM_PART", "BLOCKS_NOFUSE"}

// FromEnv is DefaultSettings for this machine's CPUs (runtime.NumCPU)
// with the overrides getenv returns for the variables in Overrides
// (os.Getenv in a program: the library reads no environment itself). A
// malformed override is an error naming it; its default is kept.
func FromEnv(getenv func(string) string) (Settings, error) {
	s := DefaultSettings(runtime.NumCPU())
	var err error
	for _, o := range []struct {
		env string
		to  *int
		min int
	}{
		{"BLOCKS_CPU_WORKERS", &s.Workers, 1},
		{"BLOCKS_CPU_SPIN_US", &s.SpinMicros, 0},
		{"BLOCKS_CPU_MIN_GEMM_SPLIT", &s.MinGemmSplit, 1},
		{"BLOCKS_CPU_MIN_ELEM_PART", &s.MinElemPart, 1},
	} {
		v := getenv(o.env)
		if v == "" {
			continue
		}
		n, e := strconv.Atoi(v)
		if e != nil || n < o.min || n > 1<<30 {
			if err == nil {
				err = fmt.Errorf("%s=%q: want a whole number from %d; keeping %d", o.env, v, o.min, *o.to)
			}
			continue
		}
		*o.to = n
	}
	switch v := getenv("BLOCKS_NOFUSE"); v {
	case "", "0":
	case "1":
		s.NoFuse = true
	default:
		if err == nil {
			err = fmt.Errorf("BLOCKS_NOFUSE=%q: want 1 (fusions off) or 0", v)
		}
	}
	s.Workers = min(s.Workers, 64)
	return s, err
}

var settings struct {
	mu      sync.Mutex
	s       atomic.Pointer[Settings]
	started int // the workers the pool started with (0: not yet)
}

// Current returns the settings in force: those last given to Configure,
// else DefaultSettings for this machine's CPUs.
func Current() Settings {
	if p := settings.s.Load(); p != nil {
		return *p
	}
	settings.mu.Lock()
	defer settings.mu.Unlock()
	if settings.s.Load() == nil {
		s := DefaultSettings(runtime.NumCPU())
		settings.s.Store(&s)
		setSpin(s.SpinMicros)
	}
	return *settings.s.Load()
}

// current is Current, for the kernels.
func current() Settings { return Current() }

// Configure puts s in force for the rest of the process (a program calls
// it at start-up, with FromEnv's settings or its own; tests call it to
// compare settings). The workers start at the first split: Configure
// refuses another number of Workers afterwards, and settings out of
// range.
func Configure(s Settings) error {
	if s.Workers < 1 || s.Workers > 64 || s.SpinMicros < 0 || s.MinGemmSplit < 1 || s.MinElemPart < 1 {
		return fmt.Errorf("CPU settings out of range: %+v", s)
	}
	settings.mu.Lock()
	defer settings.mu.Unlock()
	if settings.started > 0 && max(MaxParts, s.Workers) != settings.started {
		return fmt.Errorf("CPU settings: %d workers asked for, but %d already run", s.Workers, settings.started)
	}
	settings.s.Store(&s)
	setSpin(s.SpinMicros)
	return nil
}

// startWorkers records how many workers the pool starts with.
func startWorkers() int {
	s := Current()
	settings.mu.Lock()
	defer settings.mu.Unlock()
	settings.started = max(MaxParts, s.Workers)
	return settings.started
}
