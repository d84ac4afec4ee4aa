package core

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// Pooling modes, Theano's names.
const (
	PoolMax        = "max"
	PoolSum        = "sum"
	PoolAverageInc = "average_inc_pad"
	PoolAverageExc = "average_exc_pad"
)

// PoolOptions are Theano's pool_2d arguments.
type PoolOptions struct {
	// Size is the pooling window (ws), Step its stride (default Size).
	Size, Step [2]int
	// Pad pads the image with (rows, cols) on each side; it needs
	// IgnoreBorder and must be smaller than the window.
	Pad [2]int
	// IgnoreBorder drops a partial window at the bottom and right edges.
	IgnoreBorder bool
	// Mode is PoolMax, PoolSum, PoolAverageInc or PoolAverageExc.
	Mode string
}

// pool2dOp is Theano's pool_2d; ws keeps its parallel region's job
// (core/exec/cpu/kernels/conv.go) from call to call.
type pool2dOp struct {
	o  PoolOptions
	ws *kernels.Workspace
}

func (op pool2dOp) String() string {
	return fmt.Sprintf("Pool{ws=(%d, %d), stride=(%d, %d), pad=(%d, %d), ignore_border=%v, mode=%s}",
		op.o.Size[0], op.o.Size[1], op.o.Step[0], op.o.Step[1], op.o.Pad[0], op.o.Pad[1], op.o.IgnoreBorder, op.o.Mode)
}

func (op pool2dOp) Type(in []*Variable) (nd.DType, int, error) {
	x := in[0]
	if x.ndim < 2 || !x.dtype.IsFloat() {
		return 0, 0, fmt.Errorf("pool_2d needs a float variable with at least 2 dimensions, got %s (%s)", x, x.TypeString())
	}
	return x.dtype, x.ndim, nil
}

// PoolOutputSize is the pooled length of an axis of length n (Theano's
// Pool.out_shape).
func PoolOutputSize(n, ws, st, pad int, ignoreBorder bool) int {
	r := n + 2*pad
	if ignoreBorder {
		return max(0, (r-ws)/st+1)
	}
	if st >= ws {
		return (r-1)/st + 1
	}
	return max(0, (r-1-ws+st)/st) + 1
}

func (op pool2dOp) outShape(s []int) []int {
	d := len(s)
	out := append([]int(nil), s...)
	out[d-2] = PoolOutputSize(s[d-2], op.o.Size[0], op.o.Step[0], op.o.Pad[0], op.o.IgnoreBorder)
	out[d-1] = PoolOutputSize(s[d-1], op.o.Size[1], op.o.Step[1], op.o.Pad[1], op.o.IgnoreBorder)
	return out
}

func (op pool2dOp) Shape(in [][]int) ([]int, error) { return op.outShape(in[0]), nil }

// newPoolOp is a pooling op with its own workspace.
func newPoolOp(o PoolOptions) pool2dOp { return pool2dOp{o: o, ws: kernels.NewWorkspace()} }

// poolGeom is a pooling's sizes: planes of h×w pooled to oh×ow.
type poolGeom struct {
	planes, h, w, oh, ow int
	o                    PoolOptions
}

func (op pool2dOp) geom(xs []int) poolGeom {
	d := len(xs)
	h, w, o := xs[d-2], xs[d-1], op.o
	return poolGeom{planes: nd.Prod(xs[:d-2]), h: h, w: w, o: o,
		oh: PoolOutputSize(h, o.Size[0], o.Step[0], o.Pad[0], o.IgnoreBorder),
		ow: PoolOutputSize(w, o.Size[1], o.Step[1], o.Pad[1], o.IgnoreBorder)}
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
	if g.o.Mode == PoolAverageInc {
		return rs.inc * cs.inc
	}
	return max(0, rs.hi-rs.lo) * max(0, cs.hi-cs.lo)
}

func (op pool2dOp) Run(out *nd.Array, in []*nd.Array) {
	g := op.geom(in[0].Shape)
	switch y := out.Data.(type) {
	case []float32:
		runPool(op.ws, poolFwd, g, y, in[0].F32(), nil, nil)
	case []float64:
		runPool(op.ws, poolFwd, g, y, in[0].F64(), nil, nil)
	default:
		panic(Unsupported(op, out.DType()))
	}
}

func planeChunks(g poolGeom) int { return min(g.planes, 64) }

// max2x2 reports whether g is a max pooling of whole 2×2 windows with
// stride 2 and no padding (LeNet's), which float32 runs through
// internal/vec's row kernels.
func (g poolGeom) max2x2() bool {
	o := g.o
	return o.Mode == PoolMax && o.Size == [2]int{2, 2} && o.Step == [2]int{2, 2} && o.Pad == [2]int{} &&
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
			if g.o.Mode == PoolMax {
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
				if n := g.count(rs, cs); g.o.Mode != PoolSum && n > 0 {
					s /= T(n)
				}
				yr[j] = s
			}
		}
	}
}

func (op pool2dOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if op.o.Mode == PoolMax {
		return []*Variable{apply(poolGradOp{newPoolOp(op.o)}, in[0], out, gz)}
	}
	return []*Variable{apply(poolGradOp{newPoolOp(op.o)}, in[0], gz)}
}

// poolGradOp is the gradient of a pooling: inputs x, the pooled output and
// gz for max pooling (Theano's MaxPoolGrad: every entry equal to its
// window's maximum gets gz), x and gz for sum and average pooling.
type poolGradOp struct{ pool2dOp }

func (op poolGradOp) String() string { return "PoolGrad" + op.pool2dOp.String()[4:] }
func (op poolGradOp) Type(in []*Variable) (nd.DType, int, error) {
	return in[0].dtype, in[0].ndim, nil
}
func (op poolGradOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (op poolGradOp) Run(out *nd.Array, in []*nd.Array) {
	g := op.geom(in[0].Shape)
	switch gx := out.Data.(type) {
	case []float32:
		if g.o.Mode == PoolMax {
			runPool(op.ws, poolMaxGrad, g, gx, in[0].F32(), in[1].F32(), in[2].F32())
		} else {
			runPool(op.ws, poolAvgGrad, g, gx, nil, nil, in[1].F32())
		}
	case []float64:
		if g.o.Mode == PoolMax {
			runPool(op.ws, poolMaxGrad, g, gx, in[0].F64(), in[1].F64(), in[2].F64())
		} else {
			runPool(op.ws, poolAvgGrad, g, gx, nil, nil, in[1].F64())
		}
	default:
		panic(Unsupported(op, out.DType()))
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
				if n := g.count(rs, cs); g.o.Mode != PoolSum && n > 0 {
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

// Grad: second derivatives of pooling are not needed by Blocks' rules
// except through sum and average pooling, which are linear in gz.
func (op poolGradOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if op.o.Mode == PoolMax {
		return []*Variable{nil, nil, nil}
	}
	return []*Variable{nil, apply(newPoolOp(op.o), gz)}
}

// Pool2d is Theano's pool_2d over the last two axes of x.
func Pool2d(x *Variable, o PoolOptions) (*Variable, error) {
	if o.Step == [2]int{} {
		o.Step = o.Size
	}
	if o.Mode == "" {
		o.Mode = PoolMax
	}
	switch o.Mode {
	case PoolMax, PoolSum, PoolAverageInc, PoolAverageExc:
	default:
		return nil, fmt.Errorf("pool_2d: unknown mode %q (want max, sum, average_inc_pad or average_exc_pad)", o.Mode)
	}
	for a := 0; a < 2; a++ {
		if o.Size[a] < 1 || o.Step[a] < 1 || o.Pad[a] < 0 {
			return nil, fmt.Errorf("pool_2d: pooling size %v and step %v must be positive, padding %v non-negative", o.Size, o.Step, o.Pad)
		}
		if o.Pad[a] >= o.Size[a] {
			return nil, fmt.Errorf("pool_2d: padding %v must be smaller than the pooling size %v", o.Pad, o.Size)
		}
	}
	if o.Pad != [2]int{} && !o.IgnoreBorder {
		return nil, fmt.Errorf("pool_2d: padding (%d, %d) works only with ignore_border=True (as in Theano)", o.Pad[0], o.Pad[1])
	}
	return tryApply(newPoolOp(o), x)
}
