//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
)

func init() { core.RegisterBackend(device.CUDA, &Backend{}) }

// Backend is the CUDA backend. It opens the GPU of the first function
// compiled on it (that function's Device().Index: core.CompileFor's
// device, index 0 through core.CompileOn) and keeps it: one process uses
// one GPU, and a function asked for another index is refused with an
// error that names both.
type Backend struct {
	once  sync.Once
	index int // the GPU opened (or tried) first
	gpu   *gpu
	err   error
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// Executor prepares f to run on the GPU f.Device() names.
func (b *Backend) Executor(f *core.Function) (core.Executor, error) {
	index := f.Device().Index
	b.once.Do(func() { b.index = index; b.gpu, b.err = openGPU(index) })
	if index != b.index {
		other := device.Device{Kind: device.CUDA, Index: index}
		if b.err != nil {
			return nil, fmt.Errorf("cuda: this process asked for GPU %d first (%v), so it cannot use GPU %d: one process uses one GPU (start another process for %s)",
				b.index, b.err, index, other)
		}
		return nil, fmt.Errorf("cuda: this process already runs on GPU %d (%s), so it cannot also use GPU %d: one process uses one GPU (start another process for %s)",
			b.index, b.gpu.name, index, other)
	}
	if b.err != nil {
		return nil, b.err
	}
	return newExecutor(b.gpu, f), nil
}

// gpu is an open device: its primary context, the stream every launch
// and copy goes on, the kernels, cuBLAS when present, and the device
// copies of shared variables (by slot: core keeps none, a copy newer than
// the host's is only the variable's read guard).
type gpu struct {
	mu      sync.Mutex // one run at a time
	running bool       // a run holds mu
	dev     cu.Device
	ctx     cu.CUContext
	stream  cu.Stream
	mod     cu.Module
	fns     map[string]cu.Function
	cublas  string // soname, "" when products use gemm_tiled
	name    string
	shared  map[core.DeviceSlot]*devValue
	scratch []unsafe.Pointer // launch arguments
	strict  bool             // BLOCKS_CUDA_STRICT=1: a step on the CPU is an error
}

func openGPU(index int) (*gpu, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if index >= n {
		return nil, fmt.Errorf("cuda: no GPU %d (this machine has %d)", index, n)
	}
	g := &gpu{fns: map[string]cu.Function{}, shared: map[core.DeviceSlot]*devValue{}, strict: os.Getenv("BLOCKS_CUDA_STRICT") == "1"}
	if g.dev, err = cu.GetDevice(index); err != nil {
		return nil, fmt.Errorf("cuda: GPU %d: %w", index, err)
	}
	g.name, _ = g.dev.Name()
	// The primary context: the one cuBLAS (through the runtime API) uses.
	if g.ctx, err = g.dev.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("cuda: GPU %d (%s): context: %w", index, g.name, err)
	}
	err = g.do(func() error {
		var err error
		if g.stream, err = cu.MakeStream(cu.DefaultStream); err != nil {
			return fmt.Errorf("stream: %w", err)
		}
		if g.mod, err = cu.LoadData(kernelsPTX); err != nil {
			return fmt.Errorf("loading the kernels (PTX JIT): %w", err)
		}
		for _, k := range kernelNames {
			fn, err := g.mod.Function(k)
			if err != nil {
				return fmt.Errorf("kernel %s: %w", k, err)
			}
			g.fns[k] = fn
		}
		g.cublas, _ = openCuBLAS(g.stream)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: GPU %d (%s): %w", index, g.name, err)
	}
	return g, nil
}

// Describe names the GPU and how products run, for logs and gpu-check.
func (b *Backend) Describe() string {
	if b.gpu == nil {
		return "cuda (not opened)"
	}
	gemm := "products on gemm_tiled (no cuBLAS found)"
	if b.gpu.cublas != "" {
		gemm = "products on cuBLAS (" + b.gpu.cublas + ")"
	}
	return fmt.Sprintf("cuda: %s, driver %d, %s", b.gpu.name, cu.Version(), gemm)
}

// do runs f with the context current on a locked OS thread (CUDA's
// current context is per thread).
func (g *gpu) do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(g.ctx); err != nil {
		return err
	}
	return f()
}

// launch runs kernel name on a 1-D grid of blocks x threads (or the 2-D
// grid gx x gy of threads 16 x 16 when gy > 0) with args, each a
// cu.DevicePtr, an int64 or a float64 (8 bytes, as cu's Launch copies
// them).
func (g *gpu) launch(name string, blocks, threads int, args ...any) error {
	return g.launch2(name, blocks, 1, threads, 1, args...)
}

func (g *gpu) launch2(name string, gx, gy, tx, ty int, args ...any) error {
	fn, ok := g.fns[name]
	if !ok {
		return fmt.Errorf("cuda: no kernel %s", name)
	}
	vals := make([]uint64, len(args))
	ptrs := g.scratch[:0]
	for i, a := range args {
		switch v := a.(type) {
		case cu.DevicePtr:
			vals[i] = uint64(v)
		case int64:
			vals[i] = uint64(v)
		case int:
			vals[i] = uint64(int64(v))
		case float64:
			vals[i] = *(*uint64)(unsafe.Pointer(&v))
		case bool:
			if v {
				vals[i] = 1
			}
		default:
			return fmt.Errorf("cuda: kernel %s: argument %d of type %T", name, i, a)
		}
		ptrs = append(ptrs, unsafe.Pointer(&vals[i]))
	}
	g.scratch = ptrs[:0]
	if err := fn.Launch(gx, gy, 1, tx, ty, 1, 0, g.stream, ptrs); err != nil {
		return fmt.Errorf("cuda: launching %s: %w", name, err)
	}
	return nil
}

// grid is the number of 256-thread blocks for n elements in a
// grid-stride loop.
func grid(n int) int { return max(1, min((n+255)/256, 8192)) }
