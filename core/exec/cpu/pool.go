package cpu

import (
	"math"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// The poolings' kernels: each node's parallel region over the planes,
// kept in the node's workspace.

// float is the kernels' float dtypes.
type float interface{ ~float32 | ~float64 }

// poolGeom is a pooling's sizes: planes of h×w pooled to oh×ow.
type poolGeom struct {
	planes, h, w, oh, ow int
	o                    core.PoolOptions
}

func poolGeomOf(o core.PoolOptions, xs []int) poolGeom {
	d := len(xs)
	h, w := xs[d-2], xs[d-1]
	return poolGeom{planes: nd.Prod(xs[:d-2]), h: h, w: w, o: o,
		oh: core.PoolOutputSize(h, o.Size[0], o.Step[0], o.Pad[0], o.IgnoreBorder),
		ow: core.PoolOutputSize(w, o.Size[1], o.Step[1], o.Pad[1], o.IgnoreBorder)}
}

// span is one output position's window along an axis, in image
// coordinates [lo, hi), and the window's length counting the padding
// (average_inc_pad's divisor).
type span struct{ lo, hi, inc int }

// spans appends to s the windows along an axis of length n pooled to out
// positions: the window in padded coordinates, clipped to the padded image
// (inc), then to the image itself.
func spans(s []span, n, out, size, step, pad int) []span {
	for i := range out {
		a := i * step
		b := min(a+size, n+2*pad)
		s = append(s, span{lo: max(a, pad) - pad, hi: min(b, n+pad) - pad, inc: b - a})
	}
	return s
}

// windows are the row and column spans of a pooling, appended to rows
// and cols.
func (g poolGeom) windows(rows, cols []span) ([]span, []span) {
	return spans(rows, g.h, g.oh, g.o.Size[0], g.o.Step[0], g.o.Pad[0]), spans(cols, g.w, g.ow, g.o.Size[1], g.o.Step[1], g.o.Pad[1])
}

// count is the divisor of an average over the window rs×cs.
func (g poolGeom) count(rs, cs span) int {
	if g.o.Mode == core.PoolAverageInc {
		return rs.inc * cs.inc
	}
	return max(0, rs.hi-rs.lo) * max(0, cs.hi-cs.lo)
}

// poolKernel is a pooling node's kernel (core.Pool2DOp, core.PoolGradOp):
// its op, its options and its workspace, which keeps the parallel
// region's job from call to call.
type poolKernel struct {
	op core.Op
	o  core.PoolOptions
	ws *kernels.Workspace
}

func newPoolKernel(op core.Op) kernel {
	var o core.PoolOptions
	switch p := op.(type) {
	case core.Pool2DOp:
		o = p.Options()
	case core.PoolGradOp:
		o = p.Options()
	}
	return poolKernel{op, o, kernels.NewWorkspace()}
}

func (k poolKernel) String() string { return k.op.String() }

func (k poolKernel) Run(out *nd.Array, in []*nd.Array) {
	if _, ok := k.op.(core.PoolGradOp); ok {
		k.grad(out, in)
		return
	}
	g := poolGeomOf(k.o, in[0].Shape)
	switch y := out.Data.(type) {
	case []float32:
		runPool(k.ws, poolFwd, g, y, in[0].F32(), nil, nil)
	case []float64:
		runPool(k.ws, poolFwd, g, y, in[0].F64(), nil, nil)
	default:
		panic(core.Unsupported(k.op, out.DType()))
	}
}

func planeChunks(g poolGeom) int { return min(g.planes, 64) }

// max2x2 reports whether g is a max pooling of whole 2×2 windows with
// stride 2 and no padding (LeNet's), which float32 runs through
// internal/vec's row kernels.
func (g poolGeom) max2x2() bool {
	o := g.o
	return o.Mode == core.PoolMax && o.Size == [2]int{2, 2} && o.Step == [2]int{2, 2} && o.Pad == [2]int{} &&
		2*g.oh <= g.h && 2*g.ow <= g.w
}

// The kernels of a pooling's region (poolJob.kind).
const (
	poolFwd     = iota // out = pool(x)
	poolMaxGrad        // out = gx of a max pooling, from x, y and gz
	poolAvgGrad        // out = gx of a sum or average pooling, from gz
)

// poolJob is a pooling's parallel region (core/exec/cpu/kernels/conv.go): a chunk is a
// range of planes (planeChunks).
type poolJob[T float] struct {
	kernels.Chunks
	kind          int
	g             poolGeom
	out, x, y, gz []T
	// fast: float32 2×2 max pooling (max2x2); whole: its windows cover
	// every input.
	fast, whole bool
	// rows and cols are the windows of geometry spansOf (when spansOK),
	// kept from call to call.
	rows, cols []span
	spansOf    poolGeom
	spansOK    bool
}

// runPool runs kind's kernel on the planes of g in parallel, with the job
// kept in ws.
func runPool[T float](ws *kernels.Workspace, kind int, g poolGeom, out, x, y, gz []T) {
	ws.Lock()
	defer ws.Unlock()
	j := kernels.WSJob[poolJob[T]](ws)
	j.kind, j.g, j.out, j.x, j.y, j.gz = kind, g, out, x, y, gz
	_, is32 := any(out).([]float32)
	j.fast = is32 && kind != poolAvgGrad && g.max2x2()
	j.whole = 2*g.oh == g.h && 2*g.ow == g.w
	if !j.fast && (!j.spansOK || j.spansOf != g) {
		j.rows, j.cols = g.windows(j.rows[:0], j.cols[:0])
		j.spansOf, j.spansOK = g, true
	}
	nc := planeChunks(g)
	kernels.RunRegion(j, &j.Chunks, nc, kernels.RegionParts(nc))
	j.out, j.x, j.y, j.gz = nil, nil, nil, nil
}

func (j *poolJob[T]) RunPart(i, _ int) { j.Each(i, j.run) }

func (j *poolJob[T]) run(c, _ int) {
	p0, p1 := kernels.ChunkBounds(j.g.planes, j.N, c)
	switch j.kind {
	case poolFwd:
		j.forward(p0, p1)
	case poolMaxGrad:
		j.maxGrad(p0, p1)
	case poolAvgGrad:
		j.avgGrad(p0, p1)
	}
}

// forward pools planes [p0, p1) of x into out.
func (j *poolJob[T]) forward(p0, p1 int) {
	g, y, x, rows, cols := j.g, j.out, j.x, j.rows, j.cols
	hw, ohw := g.h*g.w, g.oh*g.ow
	x32, _ := any(x).([]float32)
	y32, _ := any(y).([]float32)
	for pl := p0; pl < p1; pl++ {
		if j.fast {
			xp, yp := x32[pl*hw:(pl+1)*hw], y32[pl*ohw:(pl+1)*ohw]
			for i := range g.oh {
				vec.MaxPool2x2Rows32(yp[i*g.ow:(i+1)*g.ow], xp[2*i*g.w:], xp[(2*i+1)*g.w:])
			}
			continue
		}
		xp, yp := x[pl*hw:(pl+1)*hw], y[pl*ohw:(pl+1)*ohw]
		for i, rs := range rows {
			yr := yp[i*g.ow : (i+1)*g.ow]
			if g.o.Mode == core.PoolMax {
				for j, cs := range cols {
					m := T(math.Inf(-1))
					for r := rs.lo; r < rs.hi; r++ {
						for _, e := range xp[r*g.w+cs.lo : r*g.w+cs.hi] {
							if e > m {
								m = e
							}
						}
					}
					yr[j] = m
				}
				continue
			}
			for j, cs := range cols {
				var s T
				for r := rs.lo; r < rs.hi; r++ {
					for _, e := range xp[r*g.w+cs.lo : r*g.w+cs.hi] {
						s += e
					}
				}
				if n := g.count(rs, cs); g.o.Mode != core.PoolSum && n > 0 {
					s /= T(n)
				}
				yr[j] = s
			}
		}
	}
}

// grad is the gradient of a pooling: inputs x, y, gz (max), x, gz (sum,
// average).
func (k poolKernel) grad(out *nd.Array, in []*nd.Array) {
	g := poolGeomOf(k.o, in[0].Shape)
	switch gx := out.Data.(type) {
	case []float32:
		if g.o.Mode == core.PoolMax {
			runPool(k.ws, poolMaxGrad, g, gx, in[0].F32(), in[1].F32(), in[2].F32())
		} else {
			runPool(k.ws, poolAvgGrad, g, gx, nil, nil, in[1].F32())
		}
	case []float64:
		if g.o.Mode == core.PoolMax {
			runPool(k.ws, poolMaxGrad, g, gx, in[0].F64(), in[1].F64(), in[2].F64())
		} else {
			runPool(k.ws, poolAvgGrad, g, gx, nil, nil, in[1].F64())
		}
	default:
		panic(core.Unsupported(k.op, out.DType()))
	}
}

// maxGrad is the gradient of a max pooling on planes [p0, p1): every
// entry of x equal to its window's maximum (y) gets the window's gz.
func (j *poolJob[T]) maxGrad(p0, p1 int) {
	g, gx, x, y, gz, rows, cols := j.g, j.out, j.x, j.y, j.gz, j.rows, j.cols
	hw, ohw := g.h*g.w, g.oh*g.ow
	gx32, _ := any(gx).([]float32)
	x32, _ := any(x).([]float32)
	y32, _ := any(y).([]float32)
	gz32, _ := any(gz).([]float32)
	for pl := p0; pl < p1; pl++ {
		if j.fast {
			xp, gp := x32[pl*hw:(pl+1)*hw], gx32[pl*hw:(pl+1)*hw]
			yp, gzp := y32[pl*ohw:(pl+1)*ohw], gz32[pl*ohw:(pl+1)*ohw]
			if !j.whole {
				clear(gp)
			}
			for i := range g.oh {
				r0, r1 := 2*i*g.w, (2*i+1)*g.w
				vec.MaxPool2x2GradRows32(gp[r0:], gp[r1:], xp[r0:], xp[r1:], yp[i*g.ow:(i+1)*g.ow], gzp[i*g.ow:(i+1)*g.ow])
			}
			continue
		}
		xp, gp := x[pl*hw:(pl+1)*hw], gx[pl*hw:(pl+1)*hw]
		yp, gzp := y[pl*ohw:(pl+1)*ohw], gz[pl*ohw:(pl+1)*ohw]
		clear(gp)
		for i, rs := range rows {
			for j, cs := range cols {
				m, d := yp[i*g.ow+j], gzp[i*g.ow+j]
				for r := rs.lo; r < rs.hi; r++ {
					xr, gr := xp[r*g.w+cs.lo:r*g.w+cs.hi], gp[r*g.w+cs.lo:r*g.w+cs.hi]
					for k, e := range xr {
						if e == m {
							gr[k] += d
						}
					}
				}
			}
		}
	}
}

// avgGrad is the gradient of a sum or average pooling on planes
// [p0, p1): every entry of a window gets its gz (divided by its count).
func (j *poolJob[T]) avgGrad(p0, p1 int) {
	g, gx, gz, rows, cols := j.g, j.out, j.gz, j.rows, j.cols
	hw, ohw := g.h*g.w, g.oh*g.ow
	for pl := p0; pl < p1; pl++ {
		gp, gzp := gx[pl*hw:(pl+1)*hw], gz[pl*ohw:(pl+1)*ohw]
		clear(gp)
		for i, rs := range rows {
			for j, cs := range cols {
				d := gzp[i*g.ow+j]
				if n := g.count(rs, cs); g.o.Mode != core.PoolSum && n > 0 {
					d /= T(n)
				}
				for r := rs.lo; r < rs.hi; r++ {
					gr := gp[r*g.w+cs.lo : r*g.w+cs.hi]
					for k := range gr {
						gr[k] += d
					}
				}
			}
		}
	}
}
