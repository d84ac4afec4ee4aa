//go:build cuda

package main

// The CUDA build (make build-cuda) links the CUDA backend, which registers
// itself for --device cuda and config.device = "cuda".
import _ "github.com/blocks-go/blocks/core/exec/cuda"
