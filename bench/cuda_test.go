//go:build cuda

package bench

// The CUDA build of the benchmarks (make gpu-check) links the CUDA
// backend, so that BLOCKS_DEVICE=cuda times the steps on the GPU.
import _ "github.com/blocks-go/blocks/core/exec/cuda"
