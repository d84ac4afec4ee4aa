package core

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int num_threads);
import "C"

import "sync"

var singleThreaded sync.Once

// singleThreadedBLAS makes OpenBLAS run each call on the calling thread,
// once a convolution runs in the process: the convolution kernels split
// their work over goroutines themselves, and OpenBLAS's own worker threads,
// which spin for a while after every threaded call, would otherwise take
// the cores those goroutines need (measured here: 3-5x slower).
func singleThreadedBLAS() {
	singleThreaded.Do(func() { C.openblas_set_num_threads(1) })
}
