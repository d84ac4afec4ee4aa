package core

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
)

// CPUSettings are the CPU executor's machine-specific tuning: how large
// products, elementwise kernels and column sums split across cores. They
// are read once, at the first split, from the runtime and the environment,
// and never change afterwards.
//
// Bits: an elementwise kernel or a column sum computes each output
// element with the same arithmetic however it is split, so Workers never
// changes a result. A product split into row blocks may not (OpenBLAS
// picks its inner kernels by the block's size), so the partition of
// products and of the fused recurrent sequences is a constant, maxParts
// (2), the same on every machine, not the number of cores: a run gives the
// same bits on a laptop, a 64-core server and every process of a
// data-parallel job (whose processes may each see one core). Workers only
// says how many parts run at once.
type CPUSettings struct {
	// Workers is how many parts run at once: the number of CPUs the
	// runtime sees (runtime.NumCPU, which honours the process's CPU
	// affinity), at most 8; BLOCKS_CPU_WORKERS overrides it. With one,
	// every split runs serially (same partition, same bits). Products in
	// two parts run on the calling thread and a C thread in one cgo call
	// (gemm_split.go); other splits on Go workers.
	Workers int
	// SpinMicros is how long the C thread of split products polls for
	// the next product before it sleeps (cgo build): 200 µs, measured on
	// a 2-core machine (docs/performance.md); BLOCKS_CPU_SPIN_US
	// overrides it (0: sleep at once).
	SpinMicros int
	// MinGemmSplit is the least number of multiply-adds of a split
	// product (1<<19: with the hand-over at a microsecond or so, the
	// 784-500-10 MLP's three 640k products gain 2% on its step);
	// BLOCKS_CPU_MIN_GEMM_SPLIT overrides it.
	MinGemmSplit int
	// MinElemPart is the least number of elements of each part of a
	// split elementwise kernel (32768: splitting pays once each part has
	// tens of thousands); BLOCKS_CPU_MIN_ELEM_PART overrides it.
	MinElemPart int
}

// maxParts is the number of row blocks of a large product or a split
// recurrent sequence: fixed, because the partition of a product can change
// its bits (CPUSettings).
const maxParts = 2

// DefaultCPUSettings are the settings for a machine with cpus CPUs and no
// overrides.
func DefaultCPUSettings(cpus int) CPUSettings {
	return CPUSettings{Workers: max(1, min(cpus, 8)), SpinMicros: 200, MinGemmSplit: 1 << 19, MinElemPart: 32 << 10}
}

var settings struct {
	once sync.Once
	s    CPUSettings
	err  error
}

// CPU returns the settings in force, reading them on the first call, and
// an error naming a malformed override (its default is kept then).
func CPU() (CPUSettings, error) {
	settings.once.Do(func() {
		s := DefaultCPUSettings(runtime.NumCPU())
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
			v := os.Getenv(o.env)
			if v == "" {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < o.min || n > 1<<30 {
				if settings.err == nil {
					settings.err = fmt.Errorf("%s=%q: want a whole number from %d; keeping %d", o.env, v, o.min, *o.to)
				}
				continue
			}
			*o.to = n
		}
		s.Workers = min(s.Workers, 64)
		settings.s = s
		setSpin(s.SpinMicros)
	})
	return settings.s, settings.err
}

// cpuSettings is CPU without its error (blocks-repl reports the error at
// start-up).
func cpuSettings() CPUSettings {
	s, _ := CPU()
	return s
}
