//go:build cuda

package cuda

import _ "embed"

// kernelsPTX is kernels/kernels.cu compiled by nvcc -ptx (make build-cuda
// writes kernels/kernels.ptx; it is not kept in git).
//
//go:embed kernels/kernels.ptx
var kernelsPTX string
