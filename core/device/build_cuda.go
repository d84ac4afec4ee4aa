//go:build cgo && cuda

package device

// Build says which backends this binary has.
const Build = "CUDA build (OpenBLAS on the CPU; CUDA through gorgonia.org/cu)"

const hasCUDA = true
