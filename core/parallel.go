package core

import (
	"sync"
)

// Work splitting. Large matrix products, elementwise kernels and
// reductions run in a fixed number of parts (a function of the tensor's
// size only, never of GOMAXPROCS or the load), each part computing a fixed
// slice of the output with the same arithmetic as a serial run; results
// are therefore bit-identical from run to run and across GOMAXPROCS.
//
// Parts run on long-lived worker goroutines (parked, not spinning, while
// idle: the machine is shared) and the calling goroutine. A job is a
// pointer to a preallocated struct, so a split run allocates nothing. One
// split runs at a time; a second caller meanwhile runs its parts serially
// (same partition, same results).

// partJob computes part i of n.
type partJob interface{ runPart(i, n int) }

var par struct {
	mu     sync.Mutex
	once   sync.Once
	work   chan partWork
	done   chan struct{}
	serial bool // set by tests: run every split serially
}

type partWork struct {
	job  partJob
	i, n int
}

func parWorker() {
	for w := range par.work {
		w.job.runPart(w.i, w.n)
		par.done <- struct{}{}
	}
}

// lockParts takes the split lock for a run in n parts; false (run the
// parts serially then) when n is 1 or another split is running. The
// caller fills its preallocated job, calls runLocked, then unlockParts.
func lockParts(n int) bool {
	if n <= 1 || par.serial || cpuSettings().Workers < 2 {
		return false
	}
	return par.mu.TryLock()
}

func unlockParts() { par.mu.Unlock() }

// runLocked runs job in n parts (n ≤ max(maxParts, CPUSettings.Workers)) in parallel; the caller
// holds the split lock.
func runLocked(job partJob, n int) {
	par.once.Do(func() {
		par.work = make(chan partWork)
		par.done = make(chan struct{})
		s := cpuSettings()
		for range max(maxParts, s.Workers) - 1 {
			go parWorker()
		}
	})
	for i := 1; i < n; i++ {
		par.work <- partWork{job, i, n}
	}
	job.runPart(0, n)
	for i := 1; i < n; i++ {
		<-par.done
	}
}

// partRange is part i of n of [0, size), in whole multiples of align.
func partRange(size, align, i, n int) (lo, hi int) {
	units := (size + align - 1) / align
	lo = units * i / n * align
	hi = units * (i + 1) / n * align
	return min(lo, size), min(hi, size)
}

// elemParts is how many parts an elementwise kernel over size elements
// runs in: splitting pays once each part has tens of thousands of
// elements.
func elemParts(size int) int {
	s := cpuSettings()
	return max(1, min(s.Workers, size/s.MinElemPart))
}
