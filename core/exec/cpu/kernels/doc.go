// Package kernels holds the CPU backend's numeric kernels that bind to
// machine code: matrix products on OpenBLAS through cgo (gonum's Go BLAS
// in the pure-Go build, CGO_ENABLED=0), products split in two row blocks
// on the calling thread and a C thread (gemm_split.c), the fused row
// kernels over internal/vec's AVX2 loops, the pool of workers every split
// runs on, and the machine-specific Settings they read once.
//
// It is a leaf: it knows nothing of core's graphs. Core's ops compute with
// it (each op's Run is the CPU backend's kernel for it) and the CPU
// executor (core/exec/cpu) schedules them; no other package binds BLAS.
//
// Bits: every split has a partition that depends on sizes only (MaxParts
// row blocks for products, whole rows or 1024-element blocks elsewhere),
// so a result is the same bits on any machine, load or number of workers.
package kernels
