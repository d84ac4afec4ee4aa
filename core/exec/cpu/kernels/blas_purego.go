//go:build !cgo

package kernels

// The pure-Go build (CGO_ENABLED=0): products run on gonum's Go BLAS
// instead of OpenBLAS, split across the workers as the cgo build splits
// them (the same row blocks, so the same partition of the work). gonum's
// kernels sum in another order than OpenBLAS's, so products agree with the
// cgo build's within float tolerance, not bit for bit
// (core/purego_compare_test.go checks the tolerance).

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// blasImpl is the BLAS binding, a value without state.
var blasImpl = gonum.Implementation{}

// gemmSplit says whether the backend splits large products across its workers.
const gemmSplit = true

// BLASName names the BLAS this build multiplies with.
const BLASName = "gonum (pure Go)"

// BLASCore is empty: gonum's Go BLAS has one set of kernels.
func BLASCore() string { return "" }

// BLASConfig names the BLAS.
func BLASConfig() string { return BLASName }

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemm2 runs a product's two parts on the calling goroutine and a worker
// (the cgo build hands part 1 to a C thread, gemm2_cgo.go).
func gemm2[T float32 | float64](j *gemmJob[T]) {
	runGemmParts(j, 2)
}

// setSpin does nothing: the pure-Go build has no C product worker.
func setSpin(us int) {}
