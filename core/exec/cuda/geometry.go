package cuda

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
)

// The launch geometry of the convolution, pooling and lookup kernels,
// built (and tested against the CPU backend, geometry_test.go) without
// the cuda tag.

// convGeom is a convolution's sizes: images (n, c, h, w), filters
// (f, c, kh, kw), output (n, f, oh, ow).
type convGeom struct {
	n, c, h, w     int
	f, kh, kw      int
	sh, sw, ph, pw int
	oh, ow         int
	flip           bool
}

// convGeometry is the geometry of images xs and filters ws under spec.
func convGeometry(xs, ws []int, spec core.ConvSpec) convGeom {
	g := convGeom{n: xs[0], c: xs[1], h: xs[2], w: xs[3], f: ws[0], kh: ws[2], kw: ws[3], sh: spec.Step[0], sw: spec.Step[1], flip: spec.Flip}
	g.ph, g.pw = spec.Border.Pads(g.kh, g.kw)
	g.oh = core.ConvOutputSize(g.h, g.kh, g.sh, g.ph)
	g.ow = core.ConvOutputSize(g.w, g.kw, g.sw, g.pw)
	return g
}

func (g convGeom) k() int { return g.c * g.kh * g.kw }
func (g convGeom) p() int { return g.oh * g.ow }

// group is the number of images unfolded at once: as many as keep the
// columns (k × m·p) within limit floats, at least one.
func (g convGeom) group(limit int) int {
	return max(1, min(g.n, limit/max(1, g.k()*g.p())))
}

// meta is the geom array of kernels.cu (G_C .. G_FLIP).
func (g convGeom) meta() []int64 {
	flip := int64(0)
	if g.flip {
		flip = 1
	}
	return []int64{int64(g.c), int64(g.h), int64(g.w), int64(g.kh), int64(g.kw), int64(g.sh), int64(g.sw),
		int64(g.ph), int64(g.pw), int64(g.oh), int64(g.ow), flip}
}

// poolGeom is a pooling's sizes: planes of h × w pooled to oh × ow.
type poolGeom struct {
	planes, h, w, oh, ow int
	o                    core.PoolOptions
}

func poolGeometry(xs []int, o core.PoolOptions) poolGeom {
	d := len(xs)
	g := poolGeom{planes: 1, h: xs[d-2], w: xs[d-1], o: o}
	for _, s := range xs[:d-2] {
		g.planes *= s
	}
	g.oh = core.PoolOutputSize(g.h, o.Size[0], o.Step[0], o.Pad[0], o.IgnoreBorder)
	g.ow = core.PoolOutputSize(g.w, o.Size[1], o.Step[1], o.Pad[1], o.IgnoreBorder)
	return g
}

// meta is the geom array of kernels.cu's pooling (P_H .. P_MODE).
func (g poolGeom) meta(mode int64) []int64 {
	o := g.o
	return []int64{int64(g.h), int64(g.w), int64(g.oh), int64(g.ow), int64(o.Size[0]), int64(o.Size[1]),
		int64(o.Step[0]), int64(o.Step[1]), int64(o.Pad[0]), int64(o.Pad[1]), mode}
}

// fusedArity is each fused rule's number of full inputs and of scalars
// (train/algorithms/kernels.go).
var fusedArity = map[string][2]int{"momentum": {2, 1}, "adadelta": {3, 2}, "rmsprop": {2, 1}, "adagrad": {2, 2}, "adam": {3, 4}}

// groupRows is take_grad's grouping of positions by row: after it,
// perm[start[j]:start[j+1]] are the positions i with idx[i] = j, in
// increasing order (a counting sort). perm holds len(idx) entries (at
// least), start rows+1.
func groupRows(idx []int64, rows int, perm, start []int64) error {
	clear(start)
	for i, j := range idx {
		if j < 0 || j >= int64(rows) {
			return fmt.Errorf("index %d (position %d) is out of bounds for a table of %d rows", j, i, rows)
		}
		start[j+1]++
	}
	for j := range rows {
		start[j+1] += start[j]
	}
	next := make([]int64, rows)
	copy(next, start[:rows])
	for i, j := range idx {
		perm[next[j]] = int64(i)
		next[j]++
	}
	return nil
}

// argGeometry views x as (outer, n, inner) around the axis an argmax
// reduces (all of x when flat).
func argGeometry(x []int, axis int, flat bool) (outer, n, inner int) {
	prod := func(s []int) int {
		p := 1
		for _, d := range s {
			p *= d
		}
		return p
	}
	if flat {
		return 1, prod(x), 1
	}
	return prod(x[:axis]), x[axis], prod(x[axis+1:])
}

// subtensorMeta is a subtensor's gather (or its gradient's scatter) as a
// strided walk: the first element's offset in x, the counts per axis and
// the strides (step × x's stride, elements; negative for a negative step).
func subtensorMeta(x []int, rs [][3]int) (base int, counts, strides []int64) {
	st := contiguousStrides(x)
	for d, r := range rs {
		base += r[0] * int(st[d])
		counts = append(counts, int64(r[2]))
		strides = append(strides, int64(r[1])*st[d])
	}
	return base, counts, strides
}
