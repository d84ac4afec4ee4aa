//go:build !cgo

package device

// Build says which backends this binary has.
const Build = "pure-Go CPU build (CGO_ENABLED=0: gonum's Go BLAS; no CUDA backend, no HDF5, no ZeroMQ)"

const hasCUDA = false
