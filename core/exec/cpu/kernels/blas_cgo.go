//go:build cgo

package kernels

// The matrix products run on OpenBLAS through gonum's cgo binding; the link
// flag lives here so that a plain `go build` works once Debian's
// libopenblas-dev is installed.
//
// Threading: OpenBLAS's own threads busy-wait between calls, which on a
// small, shared machine costs more than it gains (measured in
// docs/performance.md). Unless OPENBLAS_NUM_THREADS is set, the CPU backend runs
// OpenBLAS single-threaded and splits large products itself into a fixed
// number of row blocks (pool.go), run on parked Go workers. With
// OPENBLAS_NUM_THREADS set, OpenBLAS threads as told and the backend does not
// split products.

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int num_threads);
// char* openblas_get_corename(void);
// char* openblas_get_config(void);
import "C"

import (
	"os"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// blasImpl is the BLAS binding, a value without state.
var blasImpl = netlib.Implementation{}

// BLASName names the BLAS this build multiplies with.
const BLASName = "OpenBLAS"

// gemmSplit says whether the backend splits large products across its workers.
var gemmSplit = true

func init() {
	if os.Getenv("OPENBLAS_NUM_THREADS") != "" {
		gemmSplit = false
		return
	}
	C.openblas_set_num_threads(1)
}

// BLASCore names the CPU core whose kernels OpenBLAS runs (Haswell,
// SkylakeX, Zen, ...): chosen for the CPU at load time, or by
// OPENBLAS_CORETYPE in a DYNAMIC_ARCH build (Debian's). The products' bits
// may depend on it.
func BLASCore() string { return C.GoString(C.openblas_get_corename()) }

// BLASConfig is OpenBLAS's build description (version, DYNAMIC_ARCH, the
// core, threads).
func BLASConfig() string { return C.GoString(C.openblas_get_config()) }

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
