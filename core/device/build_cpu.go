//go:build cgo && !cuda

package device

// Build says which backends this binary has.
const Build = "CPU build (OpenBLAS; no CUDA backend)"

const hasCUDA = false
