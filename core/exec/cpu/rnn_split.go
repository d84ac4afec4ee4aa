package cpu

import (
	"errors"
	"fmt"
	"github.com/blocks-go/blocks/core"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// Fused sequences split by batch rows. The rows of a recurrent batch never
// meet inside a sequence: row b's state at step t depends only on row b's
// inputs and states. So a fused sequence of a small layer (W_state up to
// rnnMaxSplitWeights elements) runs as two independent halves of its batch,
// one per core, each doing its own per-step products (one BLAS call on its
// rows) and its own elementwise passes, for the whole sequence, with no
// hand-over per step: one split per op instead of one per product, and the
// elementwise work, which the column-split products left on one core, on
// both. Each element is computed by the same code either way (a product's
// element is the same dot product whatever the other rows; the gate
// kernels work row by row), so the forward bits do not depend on the
// split. The backward halves sum the peepholes' gradients each into their
// own buffer; the two are added after the join, in a fixed order. The
// partition is a function of the shapes only (never of GOMAXPROCS or the
// load): while another split runs, the halves run here one after the
// other, with the same results. A large layer (lstm-big's W_state is 16
// MiB) keeps one sequence and column-split products: each half would read
// all of W every step.

// The per-step products of a split float32 sequence run on vec.Gemm32,
// with the weights packed into its panels once per call (in the ops'
// outputs) instead of OpenBLAS, which packs them again on every call:
// half a batch's product (16×256 by 256×1024) takes 82 µs of CPU there
// against OpenBLAS's 128 (docs/performance.md). Gemm32 computes each
// element as OpenBLAS's AVX-512 float32 kernels do when k fits one of
// their blocks (fused multiply-adds in order from zero), so the forward
// products, whose k is d, use it only up to rnnMaxPanelK: the fused
// forward pass keeps the bits of the step graph's Dot under those kernels,
// and agrees with it within rounding under others (OpenBLAS's Haswell
// kernels on an AVX-512 CPU sum some elements in another order).

// rnnMaxPanelK is the largest state dimension whose forward products run
// on vec.Gemm32 (OpenBLAS's float32 blocks along k hold 320 or more).
const rnnMaxPanelK = 256

// rnnPanelSize is the length of the packed panels of a k×n operand when a
// sequence split in parts row blocks uses them (0 otherwise).
func rnnPanelSize(parts, k, n int) int {
	if parts < 2 || !vec.Gemm32Fast() {
		return 0
	}
	return vec.PanelsSize32(k, n)
}

// rnnUsePanels says whether a buffer of reserved panels can serve: float32
// data, and panels reserved.
func rnnUsePanels[T float32 | float64](size int) bool {
	var z T
	_, ok := any(z).(float32)
	return ok && size > 0
}

// rnnPack packs b (k×n, or its transpose when b is n×k and trans) into
// panels.
func rnnPack[T float32 | float64](panels, b []T, k, n int, trans bool) {
	p, w := any(panels).([]float32), any(b).([]float32)
	if trans {
		vec.PackPanelsT32(p, w, k, n, k)
	} else {
		vec.PackPanels32(p, w, k, n, n)
	}
}

// rnnProduct is c = a·op(b) (m×n, k inner) for a row block of a split
// sequence: on bp, op(b)'s packed panels (vec.Gemm32), when not nil; else
// rnnGemmRows.
func rnnProduct[T float32 | float64](direct, tB bool, m, n, k int, a, b, bp, c []T) error {
	if bp == nil {
		return rnnGemmRows(direct, tB, m, n, k, a, b, c)
	}
	if err := gemmCheck(m, n, k, a, b, c); err != nil {
		return err
	}
	if len(bp) < vec.PanelsSize32(k, n) {
		return fmt.Errorf("recurrent product: %d elements of panels for %d×%d", len(bp), k, n)
	}
	if a, ok := any(a).([]float32); ok {
		vec.Gemm32(m, n, k, a, k, any(bp).([]float32), any(c).([]float32), n)
	}
	return nil
}

// rnnMinSplitRows is the least batch that splits (8 rows a half).
const rnnMinSplitRows = 16

// Row-split thresholds (variables so that tests can split small layers).
var (
	// rnnMinSplitWork is the least number of multiply-adds of a
	// sequence's recurrent products (T·B·d·gates·d) that splits.
	rnnMinSplitWork = 1 << 21
	// rnnMaxSplitWeights is the largest recurrent weight matrix (elements)
	// that splits.
	rnnMaxSplitWeights = 1 << 20
)

// rnnRowParts is how many row blocks a fused sequence of T steps, B rows
// and a recurrent weight matrix of w elements runs in.
func rnnRowParts(T, B, w int) int {
	if !kernels.SplitsProducts() || B < rnnMinSplitRows || w > rnnMaxSplitWeights || T*B*w < rnnMinSplitWork {
		return 1
	}
	return kernels.MaxParts
}

// RNNMinSplitRows is the fewest rows a fused sequence splits by.
const RNNMinSplitRows = rnnMinSplitRows

// RNNRowParts is how many row blocks a fused sequence of T steps, B rows
// and a recurrent weight matrix of w elements runs in.
func RNNRowParts(T, B, w int) int { return rnnRowParts(T, B, w) }

// SplitSmallRNNs makes every fused sequence of RNNMinSplitRows rows or
// more split by rows, until the returned restore is called: a test hook,
// for checking the split's bits on small layers.
func SplitSmallRNNs() (restore func()) {
	work, w := rnnMinSplitWork, rnnMaxSplitWeights
	rnnMinSplitWork, rnnMaxSplitWeights = 0, 1<<30
	return func() { rnnMinSplitWork, rnnMaxSplitWeights = work, w }
}

// rnnRowRange is part i of parts of B rows, in multiples of 8 rows (the
// products' row blocks).
func rnnRowRange(B, i, parts int) (lo, hi int) { return kernels.PartRange(B, 8, i, parts) }

// rnnPass says which half of which fused op a row job runs.
type rnnPass int

const (
	lstmFwdPass rnnPass = iota
	lstmBwdPass
	gruFwdPass
	gruBwdPass
)

// rnnRowsJob is one fused sequence's pass split by rows: part i runs rows
// rnnRowRange(B, i, parts) over every step.
type rnnRowsJob[T float32 | float64] struct {
	pass   rnnPass
	lstm   *core.LSTMSeqOp
	gru    *core.GRUSeqOp
	out    []T
	in     []*nd.Array
	B      int
	p1, p2 []T  // packed weights (vec.Gemm32), or nil
	sums   []T  // the LSTM gradient's peephole sums of row blocks 1..
	direct bool // one BLAS call per product (the parts run in parallel)
	errs   [kernels.MaxParts]error
}

func (j *rnnRowsJob[T]) RunPart(i, parts int) {
	lo, hi := rnnRowRange(j.B, i, parts)
	if lo >= hi {
		return
	}
	switch j.pass {
	case lstmFwdPass:
		j.errs[i] = lstmForwardRows(j.lstm, j.out, j.in, lo, hi, j.direct, j.p1)
	case lstmBwdPass:
		j.errs[i] = lstmBackwardRows(j.lstm, j.out, j.in, lo, hi, i, j.direct, j.p1, j.sums)
	case gruFwdPass:
		j.errs[i] = gruForwardRows(j.gru, j.out, j.in, lo, hi, j.direct, j.p1, j.p2)
	case gruBwdPass:
		j.errs[i] = gruBackwardRows(j.gru, j.out, j.in, lo, hi, j.direct, j.p1, j.p2)
	}
}

// The job of the running split (guarded by the split lock).
var (
	rnnRows32 rnnRowsJob[float32]
	rnnRows64 rnnRowsJob[float64]
)

// runRNNRows runs j in parts row blocks: in parallel when it can take the
// split lock, else one after the other here.
func runRNNRows[T float32 | float64](j rnnRowsJob[T], parts int) error {
	if parts > 1 && kernels.LockParts(parts) {
		var g *rnnRowsJob[T]
		switch any(j.out).(type) {
		case []float32:
			g = any(&rnnRows32).(*rnnRowsJob[T])
		case []float64:
			g = any(&rnnRows64).(*rnnRowsJob[T])
		}
		*g = j
		g.direct = true
		kernels.RunLocked(g, parts)
		errs := g.errs
		*g = rnnRowsJob[T]{}
		kernels.UnlockParts()
		return errors.Join(errs[:]...)
	}
	j.direct = parts > 1
	for i := range parts {
		j.RunPart(i, parts)
	}
	return errors.Join(j.errs[:]...)
}

// rnnGemmRows is rnnGemm for one row block of a split sequence: a single
// BLAS call when direct (the caller's part runs beside the other one),
// else rnnGemm's split product.
func rnnGemmRows[T float32 | float64](direct, tB bool, m, n, k int, a, b, c []T) error {
	if !direct {
		return gemm(false, tB, m, n, k, a, b, c)
	}
	if err := gemmCheck(m, n, k, a, b, c); err != nil || m == 0 || n == 0 {
		return err
	}
	if k == 0 {
		clear(c[:m*n])
		return nil
	}
	ldb := n
	if tB {
		ldb = k
	}
	kernels.GemmRows(tB, m, n, k, a, b, ldb, c)
	return nil
}
