package core

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The convolution kernels: im2col into a per-worker buffer, then one
// matrix product per image on OpenBLAS, written straight into the NCHW
// output. Images are split into a fixed number of chunks (convChunks,
// independent of the number of cores), so a reduction over the batch (the
// filters' gradient) adds the same partial sums in the same order on every
// run and every machine.

// convChunks is the fixed number of parts a batch is split into.
const convChunks = 8

// workspace holds an op's scratch buffers, kept from call to call so that
// a step allocates nothing proportional to the batch. The lock serialises
// two functions that share the op.
type workspace struct {
	mu   sync.Mutex
	bufs []any
}

func newWorkspace() *workspace { return &workspace{} }

// scratch returns buffer slot of at least n elements (contents undefined).
func scratch[T float](ws *workspace, slot, n int) []T {
	for len(ws.bufs) <= slot {
		ws.bufs = append(ws.bufs, nil)
	}
	if b, ok := ws.bufs[slot].([]T); ok && cap(b) >= n {
		return b[:n]
	}
	b := make([]T, n)
	ws.bufs[slot] = b
	return b
}

// chunkBounds is the range of images of chunk c of nc over n images.
func chunkBounds(n, nc, c int) (int, int) { return c * n / nc, (c + 1) * n / nc }

// parallel runs f(chunk, worker) for every chunk in [0, nc) on up to
// GOMAXPROCS goroutines; worker is in [0, workers) and owns its scratch.
func parallel(nc int, f func(chunk, worker int)) int {
	workers := min(runtime.GOMAXPROCS(0), nc)
	if workers <= 1 {
		for c := 0; c < nc; c++ {
			f(c, 0)
		}
		return 1
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= nc {
					return
				}
				f(c, w)
			}
		}(w)
	}
	wg.Wait()
	return workers
}

func maxWorkers(nc int) int { return max(1, min(runtime.GOMAXPROCS(0), nc)) }

// gemm is C = A·B + beta·C on OpenBLAS (row-major, optional transposes).
func gemm[T float](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch a := any(a).(type) {
	case []float32:
		blasImpl.Sgemm(trans(tA), trans(tB), m, n, k, 1, a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blasImpl.Dgemm(trans(tA), trans(tB), m, n, k, 1, a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// im2col writes the columns of one image x (c, h, w) into col (k, p):
// col[(ci, a, b), (i, j)] is the pixel filter entry (a, b) of channel ci
// meets at output (i, j) — with flipped filters, entry (a, b) sits at
// offset (kh-1-a, kw-1-b) of the window. Padding reads as zeros.
func im2col[T float](g convGeom, col, x []T) {
	p := g.p()
	for ci := 0; ci < g.c; ci++ {
		xc := x[ci*g.h*g.w : (ci+1)*g.h*g.w]
		for a := 0; a < g.kh; a++ {
			r := a
			if g.flip {
				r = g.kh - 1 - a
			}
			for b := 0; b < g.kw; b++ {
				s := b
				if g.flip {
					s = g.kw - 1 - b
				}
				row := col[((ci*g.kh+a)*g.kw+b)*p:][:p]
				x0 := s - g.pw
				j0, j1 := 0, g.ow // output columns whose pixel is inside the image
				if g.sw == 1 {
					j0, j1 = max(0, -x0), min(g.ow, g.w-x0)
				}
				for i := 0; i < g.oh; i++ {
					dst := row[i*g.ow : (i+1)*g.ow]
					y := i*g.sh + r - g.ph
					if y < 0 || y >= g.h {
						clear(dst)
						continue
					}
					xr := xc[y*g.w : (y+1)*g.w]
					if g.sw == 1 {
						if j1 <= j0 {
							clear(dst)
							continue
						}
						clear(dst[:j0])
						copy(dst[j0:j1], xr[j0+x0:j1+x0])
						clear(dst[j1:])
						continue
					}
					for j := range dst {
						xx := j*g.sw + x0
						if xx >= 0 && xx < g.w {
							dst[j] = xr[xx]
						} else {
							dst[j] = 0
						}
					}
				}
			}
		}
	}
}

// col2im adds the columns col (k, p) back into the image gx (c, h, w),
// which the caller has zeroed: the adjoint of im2col.
func col2im[T float](g convGeom, gx, col []T) {
	p := g.p()
	for ci := 0; ci < g.c; ci++ {
		xc := gx[ci*g.h*g.w : (ci+1)*g.h*g.w]
		for a := 0; a < g.kh; a++ {
			r := a
			if g.flip {
				r = g.kh - 1 - a
			}
			for b := 0; b < g.kw; b++ {
				s := b
				if g.flip {
					s = g.kw - 1 - b
				}
				row := col[((ci*g.kh+a)*g.kw+b)*p:][:p]
				x0 := s - g.pw
				for i := 0; i < g.oh; i++ {
					y := i*g.sh + r - g.ph
					if y < 0 || y >= g.h {
						continue
					}
					src := row[i*g.ow : (i+1)*g.ow]
					xr := xc[y*g.w : (y+1)*g.w]
					if g.sw == 1 {
						j0, j1 := max(0, -x0), min(g.ow, g.w-x0)
						if j1 > j0 {
							d := xr[j0+x0 : j1+x0]
							for j, v := range src[j0:j1] {
								d[j] += v
							}
						}
						continue
					}
					for j, v := range src {
						if xx := j*g.sw + x0; xx >= 0 && xx < g.w {
							xr[xx] += v
						}
					}
				}
			}
		}
	}
}

// convForward: y_n (f, p) = W (f, k) · col_n (k, p) for every image n.
func convForward[T float](ws *workspace, g convGeom, y, x, w []T) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	k, p := g.k(), g.p()
	nc := min(g.n, convChunks)
	cols := make([][]T, maxWorkers(nc))
	for i := range cols {
		cols[i] = scratch[T](ws, i, k*p)
	}
	parallel(nc, func(c, wk int) {
		col := cols[wk]
		n0, n1 := chunkBounds(g.n, nc, c)
		for n := n0; n < n1; n++ {
			im2col(g, col, x[n*g.c*g.h*g.w:(n+1)*g.c*g.h*g.w])
			gemm(false, false, g.f, p, k, w, k, col, p, 0, y[n*g.f*p:(n+1)*g.f*p], p)
		}
	})
}

// convBackwardInput: gcol_n (k, p) = Wᵀ · gz_n (f, p), added back into
// the image by col2im.
func convBackwardInput[T float](ws *workspace, g convGeom, gx, gz, w []T) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	k, p := g.k(), g.p()
	nc := min(g.n, convChunks)
	cols := make([][]T, maxWorkers(nc))
	for i := range cols {
		cols[i] = scratch[T](ws, i, k*p)
	}
	parallel(nc, func(c, wk int) {
		col := cols[wk]
		n0, n1 := chunkBounds(g.n, nc, c)
		for n := n0; n < n1; n++ {
			gemm(true, false, k, p, g.f, w, k, gz[n*g.f*p:(n+1)*g.f*p], p, 0, col, p)
			img := gx[n*g.c*g.h*g.w : (n+1)*g.c*g.h*g.w]
			clear(img)
			col2im(g, img, col)
		}
	})
}

// convBackwardWeights: gW (f, k) = Σ_n gz_n (f, p) · col_nᵀ, summed per
// chunk and then over the chunks in order.
func convBackwardWeights[T float](ws *workspace, g convGeom, gw, x, gz []T) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	k, p := g.k(), g.p()
	nc := min(g.n, convChunks)
	if g.n == 0 {
		clear(gw)
		return
	}
	nw := maxWorkers(nc)
	cols := make([][]T, nw)
	for i := range cols {
		cols[i] = scratch[T](ws, i, k*p)
	}
	parts := make([][]T, nc)
	parts[0] = gw
	for c := 1; c < nc; c++ {
		parts[c] = scratch[T](ws, nw+c, g.f*k)
	}
	parallel(nc, func(c, wk int) {
		col := cols[wk]
		n0, n1 := chunkBounds(g.n, nc, c)
		for n := n0; n < n1; n++ {
			im2col(g, col, x[n*g.c*g.h*g.w:(n+1)*g.c*g.h*g.w])
			beta := T(1)
			if n == n0 {
				beta = 0
			}
			gemm(false, true, g.f, k, p, gz[n*g.f*p:(n+1)*g.f*p], p, col, p, beta, parts[c], k)
		}
	})
	for c := 1; c < nc; c++ {
		for i, v := range parts[c] {
			gw[i] += v
		}
	}
}
