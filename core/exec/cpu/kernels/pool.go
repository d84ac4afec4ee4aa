package kernels

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

// PartJob is a job split in parts: RunPart computes part i of n.
type PartJob interface{ RunPart(i, n int) }

var par struct {
	mu     sync.Mutex
	once   sync.Once
	work   chan partWork
	done   chan struct{}
	serial bool // SetSerial: run every split serially
}

type partWork struct {
	job  PartJob
	i, n int
}

func parWorker() {
	for w := range par.work {
		w.job.RunPart(w.i, w.n)
		par.done <- struct{}{}
	}
}

// SetSerial makes every later split run its parts one after the other on
// the calling goroutine (same partition, same bits), or in parallel again;
// it returns the previous setting. For tests comparing the two; not safe
// while a split runs.
func SetSerial(on bool) (was bool) {
	was, par.serial = par.serial, on
	return was
}

// LockParts takes the split lock for a run in n parts; false (run the
// parts serially then) when n is 1 or another split is running. The
// caller fills its preallocated job, calls RunLocked, then UnlockParts.
func LockParts(n int) bool {
	if n <= 1 || par.serial || current().Workers < 2 {
		return false
	}
	return par.mu.TryLock()
}

// UnlockParts releases the split lock.
func UnlockParts() { par.mu.Unlock() }

// RunLocked runs job in n parts (n ≤ max(MaxParts, Settings.Workers)) in
// parallel; the caller holds the split lock.
func RunLocked(job PartJob, n int) {
	par.once.Do(func() {
		par.work = make(chan partWork)
		par.done = make(chan struct{})
		for range startWorkers() - 1 {
			go parWorker()
		}
	})
	for i := 1; i < n; i++ {
		par.work <- partWork{job, i, n}
	}
	job.RunPart(0, n)
	for i := 1; i < n; i++ {
		<-par.done
	}
}

// PartRange is part i of n of [0, size), in whole multiples of align.
func PartRange(size, align, i, n int) (lo, hi int) {
	units := (size + align - 1) / align
	lo = units * i / n * align
	hi = units * (i + 1) / n * align
	return min(lo, size), min(hi, size)
}

// ElemParts is how many parts an elementwise kernel over size elements
// runs in: splitting pays once each part has tens of thousands of
// elements.
func ElemParts(size int) int {
	s := current()
	return max(1, min(s.Workers, size/s.MinElemPart))
}
