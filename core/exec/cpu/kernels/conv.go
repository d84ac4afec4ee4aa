package kernels

import (
	"sync"
	"sync/atomic"

	"github.com/blocks-go/blocks/internal/vec"
)

// The convolution  A batch is cut into groups of m images, m fixed
// by the shapes alone (enough images for a matrix product of at least
// groupColumns columns). For each group, im2col writes the columns of its
// images side by side (k rows of m·p columns) and one OpenBLAS product
// computes the whole group; the groups run in parallel (a region, below),
// each part with its own buffers, and OpenBLAS itself runs
// single-threaded (the default, core/exec/cpu/kernels/blas_cgo.go; with OPENBLAS_NUM_THREADS set
// its threads compete with the parts). The filters' gradient is
// summed per group and the groups' sums are added in order, so the result
// is the same on every run and for any number of cores.

// groupColumns is the least number of columns of a group's product.
const groupColumns = 1024

// groupSize is the number of images per group for p output pixels per
// image and k rows per column.
func groupSize(n, k, p int) int {
	m := (groupColumns + p - 1) / p
	// Keep a group's columns under 16 MB of float32.
	m = min(m, max(1, (4<<20)/(k*p)))
	return max(1, min(m, n))
}

// ConvGeom is one convolution's sizes: images (N, C, H, W), filters
// (F, C, KH, KW), output (N, F, OH, OW), steps (SH, SW), padding (PH, PW),
// and whether the filters are flipped (Theano's convolution proper).
type ConvGeom struct {
	N, C, H, W     int
	F, KH, KW      int
	SH, SW, PH, PW int
	OH, OW         int
	Flip           bool
}

// K is the length of an im2col column (C·KH·KW).
func (g ConvGeom) K() int { return g.C * g.KH * g.KW }

// P is the number of output positions per image (OH·OW).
func (g ConvGeom) P() int { return g.OH * g.OW }

// Workspace holds an op's scratch buffers and the job of its parallel
// region, kept from call to call so that a step allocates nothing. Its
// lock (Lock, Unlock) serialises two functions that share the op.
type Workspace struct {
	mu   sync.Mutex
	bufs []any
	job  any
}

// NewWorkspace returns an empty workspace.
func NewWorkspace() *Workspace { return &Workspace{} }

// Lock takes the workspace's lock.
func (ws *Workspace) Lock() { ws.mu.Lock() }

// Unlock releases it.
func (ws *Workspace) Unlock() { ws.mu.Unlock() }

// Scratch returns buffer slot of at least n elements (contents undefined).
func Scratch[T Float](ws *Workspace, slot, n int) []T {
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

// WSJob is the workspace's job of type J, made at the first call.
func WSJob[J any](ws *Workspace) *J {
	if j, ok := ws.job.(*J); ok {
		return j
	}
	j := new(J)
	ws.job = j
	return j
}

// ChunkBounds is the range of items of chunk c of nc over n items.
func ChunkBounds(n, nc, c int) (int, int) { return c * n / nc, (c + 1) * n / nc }

// Parallel regions. A convolution or a pooling cuts its work into chunks
// (groups of images, ranges of planes) that write disjoint outputs, and
// hands them out in turn to the parts of a split on the worker pool of
// core/exec/cpu/kernels (RunLocked; part 0 runs on the caller),
// each part owning its scratch. Which part computes a chunk never changes
// a bit of the result; while another split runs (or with one worker), part
// 0 computes every chunk here. A region's job is a struct kept in the op's
// workspace (wsJob) and refilled at each call, so that a region allocates
// nothing: no closure, goroutine or wait group per call.

// Chunks hands out the chunks [0, N) of a region, each to the first part
// that asks (RunRegion sets N).
type Chunks struct {
	N    int
	next atomic.Int64
}

// Each runs f(chunk, part) for the chunks part takes, until none is left.
func (c *Chunks) Each(part int, f func(chunk, part int)) {
	for {
		i := int(c.next.Add(1) - 1)
		if i >= c.N {
			return
		}
		f(i, part)
	}
}

// RegionParts is how many parts a region of nc chunks runs in: one per
// worker of the pool (Settings.Workers), at most one per chunk.
func RegionParts(nc int) int { return max(1, min(Current().Workers, nc)) }

// RunRegion runs job, whose chunks c are [0, nc), in parts parts
// (RegionParts): in parallel when it takes the split lock, else part 0
// computes every chunk here.
func RunRegion(job PartJob, c *Chunks, nc, parts int) {
	c.N = nc
	c.next.Store(0)
	if !LockParts(parts) {
		job.RunPart(0, parts)
		return
	}
	defer UnlockParts()
	RunLocked(job, parts)
}

// gemm is C = A·B + beta·C on OpenBLAS (row-major, optional transposes).
func gemm[T Float](tA, tB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	Gemm(tA, tB, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// im2col writes the columns of one image x (c, h, w) into col (k rows of
// p entries, ld apart):
// col[(ci, a, b), (i, j)] is the pixel filter entry (a, b) of channel ci
// meets at output (i, j) — with flipped filters, entry (a, b) sits at
// offset (kh-1-a, kw-1-b) of the window. Padding reads as zeros.
func im2col[T Float](g ConvGeom, col []T, ld int, x []T) {
	if c32, ok := any(col).([]float32); ok && g.SW == 1 && g.KH*g.KW <= maxTaps {
		im2col32(g, c32, ld, any(x).([]float32))
		return
	}
	p := g.P()
	for ci := 0; ci < g.C; ci++ {
		xc := x[ci*g.H*g.W : (ci+1)*g.H*g.W]
		for a := 0; a < g.KH; a++ {
			for b := 0; b < g.KW; b++ {
				r, s := g.tap(a, b)
				row := col[((ci*g.KH+a)*g.KW+b)*ld:][:p]
				x0 := s - g.PW
				j0, j1 := 0, g.OW // output columns whose pixel is inside the image
				if g.SW == 1 {
					j0, j1 = max(0, -x0), min(g.OW, g.W-x0)
				}
				if c32, ok := any(row).([]float32); ok && g.SW == 1 {
					// Output rows i0..i1 read image rows i·sh + r − ph,
					// columns j0..j1 pixels j + x0: one vectorized copy;
					// rows and columns in the padding are zeros.
					i0, i1 := rowRange(g, r)
					if j1 <= j0 {
						i1 = i0
					}
					clear(c32[:i0*g.OW])
					clear(c32[i1*g.OW:])
					if i1 > i0 {
						blk := c32[i0*g.OW : i1*g.OW]
						if j0 > 0 || j1 < g.OW {
							clear(blk)
						}
						y0 := i0*g.SH + r - g.PH
						vec.CopyRows32(blk[j0:], g.OW, any(xc).([]float32)[y0*g.W+j0+x0:], g.SH*g.W, i1-i0, j1-j0)
					}
					continue
				}
				for i := 0; i < g.OH; i++ {
					dst := row[i*g.OW : (i+1)*g.OW]
					y := i*g.SH + r - g.PH
					if y < 0 || y >= g.H {
						clear(dst)
						continue
					}
					xr := xc[y*g.W : (y+1)*g.W]
					if g.SW == 1 {
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
						xx := j*g.SW + x0
						if xx >= 0 && xx < g.W {
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

// maxTaps is the most filter entries (KH·KW) of a convolution whose
// float32 im2col and col2im take their taps from a table on the stack.
const maxTaps = 64

// convTap is where one filter entry's row of the columns meets the image
// (stride 1 along the width): output rows [i0, i1) and columns [j0, j1)
// read the pixels from src on in a channel's plane, rows sh·w apart; the
// rest of the row is padding.
type convTap struct{ i0, i1, j0, j1, src int }

// taps fills t with the filter entries' convTaps, in (a, b) order, and
// returns them: they are the same for every channel and image.
func (g ConvGeom) taps(t *[maxTaps]convTap) []convTap {
	n := 0
	for a := 0; a < g.KH; a++ {
		for b := 0; b < g.KW; b++ {
			r, s := g.tap(a, b)
			x0 := s - g.PW
			j0, j1 := max(0, -x0), min(g.OW, g.W-x0)
			i0, i1 := rowRange(g, r)
			if j1 <= j0 {
				i1 = i0
			}
			t[n] = convTap{i0: i0, i1: i1, j0: j0, j1: j1}
			if i1 > i0 {
				t[n].src = (i0*g.SH+r-g.PH)*g.W + j0 + x0
			}
			n++
		}
	}
	return t[:n]
}

// im2col32 is im2col for float32 with stride 1 along the width: the taps
// worked out once per image, then one vectorized copy of rows per filter
// entry and channel, zeros for the padding (the values im2col's loop
// writes).
func im2col32(g ConvGeom, col []float32, ld int, x []float32) {
	var buf [maxTaps]convTap
	taps := g.taps(&buf)
	p, hw, ow := g.P(), g.H*g.W, g.OW
	rowStride := g.SH * g.W
	// No padding met (a valid convolution, LeNet's): each channel's
	// filter entries in one call, every block its output rows whole.
	var offs [maxTaps]int
	full := true
	for t, tp := range taps {
		full = full && tp.i0 == 0 && tp.i1 == g.OH && tp.j0 == 0 && tp.j1 == ow
		offs[t] = tp.src
	}
	if full {
		for ci := 0; ci < g.C; ci++ {
			vec.CopyTaps32(col[ci*len(taps)*ld:], ld, x[ci*hw:(ci+1)*hw], offs[:len(taps)], rowStride, g.OH, ow)
		}
		return
	}
	for ci := 0; ci < g.C; ci++ {
		xc := x[ci*hw : (ci+1)*hw]
		for t, tp := range taps {
			row := col[(ci*len(taps)+t)*ld:][:p]
			clear(row[:tp.i0*ow])
			clear(row[tp.i1*ow:])
			if tp.i1 > tp.i0 {
				blk := row[tp.i0*ow : tp.i1*ow]
				if tp.j0 > 0 || tp.j1 < ow {
					clear(blk)
				}
				vec.CopyRows32(blk[tp.j0:], ow, xc[tp.src:], rowStride, tp.i1-tp.i0, tp.j1-tp.j0)
			}
		}
	}
}

// col2im32 is col2im for float32 with stride 1 along the width: the
// taps worked out once per image, then one vectorized addition of rows
// per filter entry and channel, in col2im's order.
func col2im32(g ConvGeom, gx, col []float32, ld int) {
	var buf [maxTaps]convTap
	taps := g.taps(&buf)
	p, hw, ow := g.P(), g.H*g.W, g.OW
	rowStride := g.SH * g.W
	// No padding met: each channel's filter entries in one call, in order.
	var offs [maxTaps]int
	full := true
	for t, tp := range taps {
		full = full && tp.i0 == 0 && tp.i1 == g.OH && tp.j0 == 0 && tp.j1 == ow
		offs[t] = tp.src
	}
	if full {
		for ci := 0; ci < g.C; ci++ {
			vec.AddTaps32(gx[ci*hw:(ci+1)*hw], rowStride, col[ci*len(taps)*ld:], ld, offs[:len(taps)], g.OH, ow)
		}
		return
	}
	for ci := 0; ci < g.C; ci++ {
		xc := gx[ci*hw : (ci+1)*hw]
		for t, tp := range taps {
			if tp.i1 <= tp.i0 {
				continue
			}
			row := col[(ci*len(taps)+t)*ld:][:p]
			vec.AddRows32(xc[tp.src:], rowStride, row[tp.i0*ow+tp.j0:], ow, tp.i1-tp.i0, tp.j1-tp.j0)
		}
	}
}

// tap is the offset (r, s) in the window of filter entry (a, b): the
// entry itself, or with flipped filters (kh-1-a, kw-1-b).
func (g ConvGeom) tap(a, b int) (r, s int) {
	if g.Flip {
		return g.KH - 1 - a, g.KW - 1 - b
	}
	return a, b
}

// rowRange is the range [i0, i1) of output rows whose image row
// i·sh + r − ph, for filter row offset r, lies inside the image.
func rowRange(g ConvGeom, r int) (i0, i1 int) {
	// i·sh ≥ ph − r and i·sh ≤ h − 1 + ph − r.
	lo := g.PH - r
	i0 = 0
	if lo > 0 {
		i0 = (lo + g.SH - 1) / g.SH
	}
	hi := g.H - 1 + g.PH - r
	if hi < 0 {
		return i0, i0
	}
	i1 = min(g.OH, hi/g.SH+1)
	return i0, max(i0, i1)
}

// col2im adds the columns col (k rows of p entries, ld apart) back into
// the image gx (c, h, w), which the caller has zeroed: the adjoint of
// im2col.
func col2im[T Float](g ConvGeom, gx, col []T, ld int) {
	if c32, ok := any(col).([]float32); ok && g.SW == 1 && g.KH*g.KW <= maxTaps {
		col2im32(g, any(gx).([]float32), c32, ld)
		return
	}
	p := g.P()
	for ci := 0; ci < g.C; ci++ {
		xc := gx[ci*g.H*g.W : (ci+1)*g.H*g.W]
		for a := 0; a < g.KH; a++ {
			for b := 0; b < g.KW; b++ {
				r, s := g.tap(a, b)
				row := col[((ci*g.KH+a)*g.KW+b)*ld:][:p]
				x0 := s - g.PW
				if c32, ok := any(row).([]float32); ok && g.SW == 1 {
					j0, j1 := max(0, -x0), min(g.OW, g.W-x0)
					i0, i1 := rowRange(g, r)
					if i1 > i0 && j1 > j0 {
						y0 := i0*g.SH + r - g.PH
						vec.AddRows32(any(xc).([]float32)[y0*g.W+j0+x0:], g.SH*g.W, c32[i0*g.OW+j0:], g.OW, i1-i0, j1-j0)
					}
					continue
				}
				for i := 0; i < g.OH; i++ {
					y := i*g.SH + r - g.PH
					if y < 0 || y >= g.H {
						continue
					}
					src := row[i*g.OW : (i+1)*g.OW]
					xr := xc[y*g.W : (y+1)*g.W]
					if g.SW == 1 {
						j0, j1 := max(0, -x0), min(g.OW, g.W-x0)
						if j1 > j0 {
							d := xr[j0+x0 : j1+x0]
							for j, v := range src[j0:j1] {
								d[j] += v
							}
						}
						continue
					}
					for j, v := range src {
						if xx := j*g.SW + x0; xx >= 0 && xx < g.W {
							xr[xx] += v
						}
					}
				}
			}
		}
	}
}

// groupWork is one part's buffers: the group's columns and its (f, m·p)
// products.
func groupWork[T Float](ws *Workspace, worker, k, f, cols int) (col, tmp []T) {
	return Scratch[T](ws, 2*worker, k*cols), Scratch[T](ws, 2*worker+1, f*cols)
}

// convJob is the state of a convolution's region, common to its three
// kernels: the geometry, m images a group, and each part's buffers.
type convJob[T Float] struct {
	Chunks
	g    ConvGeom
	m    int
	bufs [][2][]T
}

// start fills the job for a call in groups groups on parts parts, with
// each part's buffers (groupWork) in bufs, reusing its array.
func (j *convJob[T]) start(ws *Workspace, g ConvGeom) (groups, parts int) {
	k, p := g.K(), g.P()
	j.g, j.m = g, groupSize(g.N, k, p)
	groups = (g.N + j.m - 1) / j.m
	parts = RegionParts(groups)
	j.bufs = j.bufs[:0]
	for i := range parts {
		col, tmp := groupWork[T](ws, i, k, g.F, j.m*p)
		j.bufs = append(j.bufs, [2][]T{col, tmp})
	}
	return groups, parts
}

// group is the first image of group gi, its number of images and the
// row stride of its columns.
func (j *convJob[T]) group(gi int) (n0, mm, ld int) {
	n0 = gi * j.m
	mm = min(j.m, j.g.N-n0)
	return n0, mm, mm * j.g.P()
}

// convFwdJob is ConvForward's region.
type convFwdJob[T Float] struct {
	convJob[T]
	y, x, w, b []T
}

func (j *convFwdJob[T]) RunPart(i, _ int) { j.Each(i, j.run) }

func (j *convFwdJob[T]) run(gi, wk int) {
	g, y, x, w, b := j.g, j.y, j.x, j.w, j.b
	k, p, chw := g.K(), g.P(), g.C*g.H*g.W
	col, tmp := j.bufs[wk][0], j.bufs[wk][1]
	n0, mm, ld := j.group(gi)
	for i := 0; i < mm; i++ {
		im2col(g, col[i*p:], ld, x[(n0+i)*chw:(n0+i+1)*chw])
	}
	gemm(false, false, g.F, ld, k, w, k, col, ld, 0, tmp, ld)
	for i := 0; i < mm; i++ {
		yi := y[(n0+i)*g.F*p : (n0+i+1)*g.F*p]
		for f := 0; f < g.F; f++ {
			if b == nil {
				copy(yi[f*p:(f+1)*p], tmp[f*ld+i*p:])
				continue
			}
			bf, src := b[f], tmp[f*ld+i*p:f*ld+(i+1)*p]
			if y32, ok := any(yi).([]float32); ok {
				vec.AddScalar32(y32[f*p:(f+1)*p], any(src).([]float32), float32(bf))
				continue
			}
			for e, v := range src {
				yi[f*p+e] = v + bf
			}
		}
	}
}

// ConvForward: for each group, Y (f, m·p) = W (f, k) · COL (k, m·p), then
// each image's (f, p) block is copied into the NCHW output.
func ConvForward[T Float](ws *Workspace, g ConvGeom, y, x, w, b []T) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	j := WSJob[convFwdJob[T]](ws)
	groups, parts := j.start(ws, g)
	j.y, j.x, j.w, j.b = y, x, w, b
	RunRegion(j, &j.Chunks, groups, parts)
	j.y, j.x, j.w, j.b = nil, nil, nil, nil
}

// gatherGroup copies the (f, p) blocks of images n0.. into dst (f, mm·p).
func gatherGroup[T Float](g ConvGeom, dst, gz []T, n0, mm int) {
	p := g.P()
	ld := mm * p
	for i := 0; i < mm; i++ {
		gi := gz[(n0+i)*g.F*p : (n0+i+1)*g.F*p]
		for f := 0; f < g.F; f++ {
			copy(dst[f*ld+i*p:f*ld+(i+1)*p], gi[f*p:(f+1)*p])
		}
	}
}

// convBwdInputJob is ConvBackwardInput's region.
type convBwdInputJob[T Float] struct {
	convJob[T]
	gx, gz, w []T
}

func (j *convBwdInputJob[T]) RunPart(i, _ int) { j.Each(i, j.run) }

func (j *convBwdInputJob[T]) run(gi, wk int) {
	g, gx, gz, w := j.g, j.gx, j.gz, j.w
	k, p, chw := g.K(), g.P(), g.C*g.H*g.W
	col, tmp := j.bufs[wk][0], j.bufs[wk][1]
	n0, mm, ld := j.group(gi)
	gatherGroup(g, tmp, gz, n0, mm)
	gemm(true, false, k, ld, g.F, w, k, tmp, ld, 0, col, ld)
	for i := 0; i < mm; i++ {
		img := gx[(n0+i)*chw : (n0+i+1)*chw]
		clear(img)
		col2im(g, img, col[i*p:], ld)
	}
}

// ConvBackwardInput: for each group, GCOL (k, m·p) = Wᵀ · GZ (f, m·p),
// added back into each image by col2im.
func ConvBackwardInput[T Float](ws *Workspace, g ConvGeom, gx, gz, w []T) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	j := WSJob[convBwdInputJob[T]](ws)
	groups, parts := j.start(ws, g)
	j.gx, j.gz, j.w = gx, gz, w
	RunRegion(j, &j.Chunks, groups, parts)
	j.gx, j.gz, j.w = nil, nil, nil
}

// convBwdWeightsJob is ConvBackwardWeights' region.
type convBwdWeightsJob[T Float] struct {
	convJob[T]
	ws            *Workspace
	parts, groups int
	transposed    bool
	gw, x, gz     []T
}

func (j *convBwdWeightsJob[T]) RunPart(i, _ int) { j.Each(i, j.run) }

// part is group i's partial sum: gW itself for the first group, else
// buffer slot 2·parts+i.
func (j *convBwdWeightsJob[T]) part(i int) []T {
	if i == 0 {
		return j.gw
	}
	return j.ws.bufs[2*j.parts+i].([]T)[:j.g.F*j.g.K()]
}

func (j *convBwdWeightsJob[T]) run(gi, wk int) {
	g, x, gz := j.g, j.x, j.gz
	k, p, chw := g.K(), g.P(), g.C*g.H*g.W
	col, tmp := j.bufs[wk][0], j.bufs[wk][1]
	n0, mm, ld := j.group(gi)
	for i := 0; i < mm; i++ {
		im2col(g, col[i*p:], ld, x[(n0+i)*chw:(n0+i+1)*chw])
	}
	gatherGroup(g, tmp, gz, n0, mm)
	if !j.transposed {
		gemm(false, true, g.F, k, ld, tmp, ld, col, ld, 0, j.part(gi), k)
		return
	}
	t := j.ws.bufs[2*j.parts+j.groups+wk].([]T)[:k*g.F]
	gemm(false, true, k, g.F, ld, col, ld, tmp, ld, 0, t, g.F)
	dst := j.part(gi)
	for f := range g.F {
		row := dst[f*k : (f+1)*k]
		for e := range row {
			row[e] = t[e*g.F+f]
		}
	}
}

// ConvBackwardWeights: gW (f, k) = Σ over groups of GZ (f, m·p) · COLᵀ;
// each group's product goes to its own buffer (the first group's straight
// into gW) and the buffers are added in order.
func ConvBackwardWeights[T Float](ws *Workspace, g ConvGeom, gw, x, gz []T) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if g.N == 0 {
		clear(gw)
		return
	}
	k := g.K()
	j := WSJob[convBwdWeightsJob[T]](ws)
	groups, parts := j.start(ws, g)
	j.ws, j.parts, j.groups = ws, parts, groups
	// The groups' partial sums: buffer slots 2·parts+i, made before the
	// region starts (no slice of them is built, so a step allocates
	// nothing that grows with the batch).
	for i := 1; i < groups; i++ {
		Scratch[T](ws, 2*parts+i, g.F*k)
	}
	// With more rows in a column than filters, OpenBLAS computes the
	// transposed product, COL · GZᵀ (k, f), faster (LeNet's second layer:
	// 584 µs against 795 µs a group); it is transposed into place.
	j.transposed = k > g.F
	if j.transposed {
		for i := range parts {
			Scratch[T](ws, 2*parts+groups+i, k*g.F)
		}
	}
	j.gw, j.x, j.gz = gw, x, gz
	RunRegion(j, &j.Chunks, groups, parts)
	for i := 1; i < groups; i++ {
		for e, v := range j.part(i) {
			gw[e] += v
		}
	}
	j.gw, j.x, j.gz = nil, nil, nil
}
