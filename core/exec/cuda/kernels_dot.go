//go:build cuda

package cuda

import (
	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/nd"
)

// The kernels of the kinds that are products: dot, dot_nd and the
// convolutions (im2col and a product per group of images), on cuBLAS
// when the machine has it, else on gemm_tiled.

// colFloats bounds a convolution's im2col buffer (floats): the batch runs
// in groups of images whose columns fit.
const colFloats = 1 << 24

// at is b's pointer plus off elements of size bytes.
func at(b devBuf, off, size int) cu.DevicePtr { return b.ptr + cu.DevicePtr(off*size) }

// gemm is row-major C (m × n) = op(A)·op(B) for contiguous operands, on
// cuBLAS or gemm_tiled.
func (e *executor) gemm(tA, tB bool, m, n, k int, a, b, c cu.DevicePtr) error {
	if k == 0 {
		return cu.MemsetD32Async(c, 0, int64(m*n), e.g.stream)
	}
	if e.g.cublas != "" {
		lda, ldb := k, n
		if tA {
			lda = m
		}
		if tB {
			ldb = k
		}
		return sgemm(tA, tB, m, n, k, a, lda, b, ldb, c)
	}
	return e.g.launch2("gemm_tiled", (n+15)/16, (m+15)/16, 16, 16, c, a, b, m, n, k, tA, tB)
}

func (e *executor) gemmName() string {
	if e.g.cublas != "" {
		return "cublasSgemm"
	}
	return "gemm_tiled"
}

// dotKernel is "dot" of vectors and matrices (TransA, TransB).
func dotKernel(s *opStep) (bool, error) {
	e, p, i, ins, spec := s.e, s.p, s.st.node, s.st.in, s.spec
	buf := s.buf
	if !s.allF32 {
		return false, nil
	}
	a, b := p.shapes[ins[0]], p.shapes[ins[1]]
	tA, tB := spec.TransA && len(a) == 2, spec.TransB && len(b) == 2
	var m, k, n int
	switch {
	case len(a) == 1:
		m, k = 1, a[0]
	case tA:
		m, k = a[1], a[0]
	default:
		m, k = a[0], a[1]
	}
	switch {
	case len(b) == 1:
		n = 1
	case tB:
		n = b[0]
	default:
		n = b[1]
	}
	lda, ldb := k, n
	if tA {
		lda = m
	}
	if tB {
		ldb = k
	}
	if k == 0 {
		return false, nil // zeros: the CPU op clears its output
	}
	if e.g.cublas != "" {
		return s.done("cublasSgemm", func() error { return sgemm(tA, tB, m, n, k, buf(ins[0]), lda, buf(ins[1]), ldb, buf(i)) })
	}
	return s.done("gemm_tiled", func() error {
		return e.g.launch2("gemm_tiled", (n+15)/16, (m+15)/16, 16, 16, buf(i), buf(ins[0]), buf(ins[1]), m, n, k, tA, tB)
	})
}

// dotNDKernel is "dot_nd": x·W over x's last axis.
func dotNDKernel(s *opStep) (bool, error) {
	e, p, i, ins := s.e, s.p, s.st.node, s.st.in
	buf := s.dev
	x, w := p.shapes[ins[0]], p.shapes[ins[1]]
	if !s.allF32 || len(w) != 2 || len(x) == 0 {
		return false, nil
	}
	k, n := x[len(x)-1], w[1]
	m := nd.Prod(x[:len(x)-1])
	return s.done(e.gemmName(), func() error {
		return e.gemm(false, false, m, n, k, buf(ins[0]).ptr, buf(ins[1]).ptr, buf(i).ptr)
	})
}

// convPlan is a convolution's geometry (Conv) for images of shape xs and
// filters of shape ws, uploaded, and its scratch: the columns of a group
// of m images (col) and their product with the filters (tmp). ok is false
// when the kernels do not apply.
type convPlan struct {
	g        convGeom
	geom     devBuf
	col, tmp devBuf
	k, pp, m int
	chw, fp  int
	ok       bool
}

func newConvPlan(s *opStep, xs, ws []int) (convPlan, error) {
	e, p, spec := s.e, s.p, s.spec
	var c convPlan
	if !s.allF32 {
		return c, nil
	}
	g := convGeometry(xs, ws, spec.Conv)
	if g.oh < 1 || g.ow < 1 || g.n == 0 {
		return c, nil
	}
	geom, err := e.upMeta(p, g.meta())
	if err != nil {
		return c, err
	}
	k, pp, m := g.k(), g.p(), g.group(colFloats)
	col, err := e.scratch(p, int64(k*m*pp)*4)
	if err != nil {
		return c, err
	}
	tmp, err := e.scratch(p, int64(g.f*m*pp)*4)
	if err != nil {
		return c, err
	}
	chw, fp := g.c*g.h*g.w, g.f*pp
	return convPlan{g: g, geom: geom, col: col, tmp: tmp, k: k, pp: pp, m: m, chw: chw, fp: fp, ok: true}, nil
}

// conv2dKernel is "conv2d" (inputs images, filters[, biases]): per group
// of images, im2col, the product with the filters, and conv_scatter (the
// biases added).
func conv2dKernel(s *opStep) (bool, error) {
	e, p, i, ins := s.e, s.p, s.st.node, s.st.in
	buf := s.dev
	c, err := newConvPlan(s, p.shapes[ins[0]], p.shapes[ins[1]])
	if err != nil || !c.ok {
		return false, err
	}
	g, geom, col, tmp, k, pp, m, chw, fp := c.g, c.geom, c.col, c.tmp, c.k, c.pp, c.m, c.chw, c.fp
	return s.done("im2col, "+e.gemmName()+", conv_scatter", func() error {
		bias := cu.DevicePtr(0)
		if len(ins) > 2 {
			bias = buf(ins[2]).ptr
		}
		for n0 := 0; n0 < g.n; n0 += m {
			mm := min(m, g.n-n0)
			if err := e.g.launch("im2col", grid(k*mm*pp), 256, col.ptr, at(buf(ins[0]), n0*chw, 4), mm, geom.ptr); err != nil {
				return err
			}
			if err := e.gemm(false, false, g.f, mm*pp, k, buf(ins[1]).ptr, col.ptr, tmp.ptr); err != nil {
				return err
			}
			if err := e.g.launch("conv_scatter", grid(mm*fp), 256, at(buf(i), n0*fp, 4), tmp.ptr, bias, mm, g.f, pp); err != nil {
				return err
			}
		}
		return nil
	})
}

// conv2dGradInputKernel is "conv2d_grad_input" (inputs gz, filters[, a
// variable shaped like the images]): per group of images, conv_gather,
// the product with the filters transposed, and col2im.
func conv2dGradInputKernel(s *opStep) (bool, error) {
	e, p, i, ins, out := s.e, s.p, s.st.node, s.st.in, s.out
	buf := s.dev
	c, err := newConvPlan(s, out, p.shapes[ins[1]])
	if err != nil || !c.ok {
		return false, err
	}
	g, geom, col, tmp, k, pp, m, chw, fp := c.g, c.geom, c.col, c.tmp, c.k, c.pp, c.m, c.chw, c.fp
	return s.done("conv_gather, "+e.gemmName()+", col2im", func() error {
		for n0 := 0; n0 < g.n; n0 += m {
			mm := min(m, g.n-n0)
			if err := e.g.launch("conv_gather", grid(mm*fp), 256, tmp.ptr, at(buf(ins[0]), n0*fp, 4), mm, g.f, pp); err != nil {
				return err
			}
			if err := e.gemm(true, false, k, mm*pp, g.f, buf(ins[1]).ptr, tmp.ptr, col.ptr); err != nil {
				return err
			}
			if err := e.g.launch("col2im", grid(mm*chw), 256, at(buf(i), n0*chw, 4), col.ptr, mm, geom.ptr); err != nil {
				return err
			}
		}
		return nil
	})
}

// conv2dGradWeightsKernel is "conv2d_grad_weights" (inputs images, gz, a
// variable shaped like the filters): per group of images, im2col,
// conv_gather and the product, the groups' sums added in order.
func conv2dGradWeightsKernel(s *opStep) (bool, error) {
	e, p, i, ins, out := s.e, s.p, s.st.node, s.st.in, s.out
	buf := s.dev
	c, err := newConvPlan(s, p.shapes[ins[0]], out)
	if err != nil || !c.ok {
		return false, err
	}
	g, geom, col, tmp, k, pp, m, chw, fp := c.g, c.geom, c.col, c.tmp, c.k, c.pp, c.m, c.chw, c.fp
	part, err := e.scratch(p, int64(g.f*k)*4)
	if err != nil {
		return false, err
	}
	return s.done("im2col, conv_gather, "+e.gemmName()+", ew_contig(add)", func() error {
		for n0 := 0; n0 < g.n; n0 += m {
			mm := min(m, g.n-n0)
			if err := e.g.launch("im2col", grid(k*mm*pp), 256, col.ptr, at(buf(ins[0]), n0*chw, 4), mm, geom.ptr); err != nil {
				return err
			}
			if err := e.g.launch("conv_gather", grid(mm*fp), 256, tmp.ptr, at(buf(ins[1]), n0*fp, 4), mm, g.f, pp); err != nil {
				return err
			}
			// gW (f × k) = GZ (f × mm·p) · COLᵀ; the groups' sums
			// are added in order.
			dst := buf(i).ptr
			if n0 > 0 {
				dst = part.ptr
			}
			if err := e.gemm(false, true, g.f, k, mm*pp, tmp.ptr, col.ptr, dst); err != nil {
				return err
			}
			if n0 > 0 {
				if err := e.g.launch("ew_contig", grid(g.f*k), 256, buf(i).ptr, buf(i).ptr, int64(1), part.ptr, int64(1), g.f*k, int64(0)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
