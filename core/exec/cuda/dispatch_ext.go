//go:build cuda

package cuda

import (
	"fmt"
	"slices"

	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/nd"
)

// The dispatch of route.go's kinds beyond the MLP's (dispatch.go):
// convolutions, poolings, the step rules' fused updates, lookups, copies
// and the ops whose value is their inputs' shapes.

// colFloats bounds a convolution's im2col buffer (floats): the batch runs
// in groups of images whose columns fit.
const colFloats = 1 << 24

// at is b's pointer plus off elements of size bytes.
func at(b devBuf, off, size int) cu.DevicePtr { return b.ptr + cu.DevicePtr(off*size) }

// scratch allocates a buffer the plan owns (freed with it).
func (e *executor) scratch(p *plan, bytes int64) (devBuf, error) {
	b, err := e.g.alloc(bytes)
	if err == nil && b.bytes > 0 {
		p.metas = append(p.metas, b)
	}
	return b, err
}

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

// hostValue is node j's value on the host (indices the ops check): the
// batch as the run uploaded it when j is an input (no copy back), else a
// download.
func (e *executor) hostValue(p *plan, j int) (*nd.Array, error) {
	// Through views (a flattened batch of targets) to an input.
	src := j
	for e.argOf[src] < 0 {
		v := e.graph.Nodes[src]
		if v.Op() == nil || len(v.Inputs()) == 0 {
			break
		}
		k := core.Spec(v.Op()).Kind
		if k != "view" && k != "rows" {
			break
		}
		src = e.index[v.Inputs()[0]]
	}
	if k := e.argOf[src]; k >= 0 && k < len(p.args) && p.args[k] != nil && p.args[k].Size() == nd.Prod(p.shapes[j]) {
		return &nd.Array{Shape: p.shapes[j], Data: p.args[k].Data}, nil
	}
	h := p.host[j]
	if h == nil || !slices.Equal(h.Shape, p.shapes[j]) {
		h = nd.New(e.graph.Nodes[j].DType(), p.shapes[j]...)
		p.host[j] = h
	}
	return h, e.g.download(h, p.bufs[j])
}

// makeStepExt chooses the kernels of the kinds dispatch.go leaves; ok is
// false when it has none for these dtypes or shapes.
func (e *executor) makeStepExt(p *plan, st step, v *core.Variable, spec core.OpSpec, allF32 bool) (step, bool, error) {
	i, ins, out := st.node, st.in, p.shapes[st.node]
	buf := func(j int) devBuf { return p.bufs[j] }
	dt := func(j int) nd.DType { return e.graph.Nodes[j].DType() }
	size := nd.Prod(out)
	done := func(what string, run func() error) (step, bool, error) {
		st.what, st.run = what, run
		return st, true, nil
	}
	switch spec.Kind {
	case "conv2d", "conv2d_grad_input", "conv2d_grad_weights":
		if !allF32 {
			break
		}
		var xs, ws []int
		switch spec.Kind {
		case "conv2d":
			xs, ws = p.shapes[ins[0]], p.shapes[ins[1]]
		case "conv2d_grad_input":
			xs, ws = out, p.shapes[ins[1]]
		default:
			xs, ws = p.shapes[ins[0]], out
		}
		g := convGeometry(xs, ws, spec.Conv)
		if g.oh < 1 || g.ow < 1 || g.n == 0 {
			break
		}
		geom, err := e.upMeta(p, g.meta())
		if err != nil {
			return st, false, err
		}
		k, pp, m := g.k(), g.p(), g.group(colFloats)
		col, err := e.scratch(p, int64(k*m*pp)*4)
		if err != nil {
			return st, false, err
		}
		tmp, err := e.scratch(p, int64(g.f*m*pp)*4)
		if err != nil {
			return st, false, err
		}
		chw, fp := g.c*g.h*g.w, g.f*pp
		switch spec.Kind {
		case "conv2d":
			return done("im2col, "+e.gemmName()+", conv_scatter", func() error {
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
		case "conv2d_grad_input":
			return done("conv_gather, "+e.gemmName()+", col2im", func() error {
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
		default:
			part, err := e.scratch(p, int64(g.f*k)*4)
			if err != nil {
				return st, false, err
			}
			return done("im2col, conv_gather, "+e.gemmName()+", ew_contig(add)", func() error {
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
	case "map_sum":
		x := p.shapes[ins[0]]
		if !allF32 || len(x) != 4 {
			break
		}
		xst := contiguousStrides(x)
		meta := []int64{1, int64(x[1]), xst[1], 3, int64(x[0]), int64(x[2]), int64(x[3]), xst[0], xst[2], xst[3]}
		m, err := e.upMeta(p, meta)
		if err != nil {
			return st, false, err
		}
		count := int64(x[0] * x[2] * x[3])
		return done("reduce_strided", func() error {
			return e.g.launch("reduce_strided", size, 256, buf(i).ptr, buf(ins[0]).ptr, int64(0), count, m.ptr)
		})
	case "pool2d", "pool2d_grad":
		mode, ok := poolModes[spec.Pool.Mode]
		x := p.shapes[ins[0]]
		if !allF32 || !ok || len(x) < 2 {
			break
		}
		g := poolGeometry(x, spec.Pool)
		geom, err := e.upMeta(p, g.meta(mode))
		if err != nil {
			return st, false, err
		}
		if spec.Kind == "pool2d" {
			return done("pool2d", func() error {
				return e.g.launch("pool2d", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, g.planes, geom.ptr)
			})
		}
		return done("pool2d_grad", func() error {
			y, gz := cu.DevicePtr(0), buf(ins[1]).ptr
			if mode == poolModes["max"] {
				y, gz = buf(ins[1]).ptr, buf(ins[2]).ptr
			}
			return e.g.launch("pool2d_grad", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, y, gz, g.planes, geom.ptr)
		})
	case "fused":
		code, ok := fusedRules[spec.Func]
		arity := fusedArity[spec.Func]
		if !ok || v.DType() != nd.Float32 || spec.FullInputs != arity[0] || len(ins) != arity[0]+arity[1] {
			break
		}
		var full [3]int
		var scalars [4]int
		for k := range full {
			full[k] = -1
		}
		for k := range scalars {
			scalars[k] = -1
		}
		dbl := int64(0)
		for k, j := range ins {
			if k < spec.FullInputs {
				if dt(j) != nd.Float32 {
					return st, false, nil
				}
				full[k] = j
				continue
			}
			s := k - spec.FullInputs
			switch dt(j) {
			case nd.Float32:
			case nd.Float64:
				dbl |= 1 << s
			default:
				return st, false, nil
			}
			scalars[s] = j
		}
		ptr := func(j int) cu.DevicePtr {
			if j < 0 {
				return 0
			}
			return buf(j).ptr
		}
		c0 := 0.0
		if len(spec.Consts) > 0 {
			c0 = spec.Consts[0]
		}
		n := size / max(spec.Parts, 1)
		return done("fused_rule("+spec.Func+")", func() error {
			return e.g.launch("fused_rule", grid(n), 256, buf(i).ptr, ptr(full[0]), ptr(full[1]), ptr(full[2]),
				ptr(scalars[0]), ptr(scalars[1]), ptr(scalars[2]), ptr(scalars[3]), dbl, n, code, c0)
		})
	case "take":
		if v.DType() != nd.Float32 || dt(ins[0]) != nd.Float32 || dt(ins[1]) != nd.Int64 {
			break
		}
		check, hasCheck := v.Op().(interface{ Check([]*nd.Array) error })
		ws, nIdx := p.shapes[ins[0]], nd.Prod(p.shapes[ins[1]])
		row := nd.Prod(ws[1:])
		return done("take", func() error {
			if hasCheck {
				y, err := e.hostValue(p, ins[1])
				if err != nil {
					return err
				}
				if err := check.Check([]*nd.Array{{Shape: ws}, y}); err != nil {
					return err
				}
			}
			return e.g.launch("take", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, buf(ins[1]).ptr, nIdx, row)
		})
	case "take_grad":
		if v.DType() != nd.Float32 || dt(ins[1]) != nd.Int64 || dt(ins[2]) != nd.Float32 {
			break
		}
		rows, nIdx := out[0], nd.Prod(p.shapes[ins[1]])
		row := nd.Prod(out[1:])
		perm, err := e.scratch(p, int64(max(nIdx, 1))*8)
		if err != nil {
			return st, false, err
		}
		start, err := e.scratch(p, int64(rows+1)*8)
		if err != nil {
			return st, false, err
		}
		permH, startH := nd.New(nd.Int64, max(nIdx, 1)), nd.New(nd.Int64, rows+1)
		return done("take_grad", func() error {
			idx, err := e.hostValue(p, ins[1])
			if err != nil {
				return err
			}
			if err := groupRows(idx.Data.([]int64), rows, permH.Data.([]int64), startH.Data.([]int64)); err != nil {
				return err
			}
			if err := e.g.upload(perm, permH); err != nil {
				return err
			}
			if err := e.g.upload(start, startH); err != nil {
				return err
			}
			return e.g.launch("take_grad", grid(size), 256, buf(i).ptr, buf(ins[2]).ptr, perm.ptr, start.ptr, rows, row)
		})
	case "repeat":
		// the second input gives the count only (any dtype)
		if v.DType() != nd.Float32 || dt(ins[0]) != nd.Float32 {
			break
		}
		n := nd.Prod(p.shapes[ins[0]])
		return done("tile", func() error {
			return e.g.launch("tile", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, n, size)
		})
	case "concat", "concat_grad":
		if !allF32 || spec.Axis < 0 || spec.Axis >= len(out) {
			break
		}
		full := out
		if spec.Kind == "concat_grad" {
			full = p.shapes[ins[0]]
		}
		outer, inner := nd.Prod(full[:spec.Axis]), nd.Prod(full[spec.Axis+1:])
		row := full[spec.Axis] * inner
		if spec.Kind == "concat" {
			return done("copy2d", func() error {
				off := 0
				for _, j := range ins {
					n := p.shapes[j][spec.Axis] * inner
					if err := e.g.launch("copy2d", grid(outer*n), 256, at(buf(i), off, 4), row, buf(j).ptr, n, outer, n); err != nil {
						return err
					}
					off += n
				}
				return nil
			})
		}
		off := 0
		for _, j := range ins[1 : 1+spec.Part] {
			off += p.shapes[j][spec.Axis] * inner
		}
		n := out[spec.Axis] * inner
		return done("copy2d", func() error {
			return e.g.launch("copy2d", grid(outer*n), 256, buf(i).ptr, n, at(buf(ins[0]), off, 4), row, outer, n)
		})
	case "slice_last", "slice_last_grad":
		if !allF32 || len(out) == 0 {
			break
		}
		n := spec.Stop - spec.Start
		if spec.Kind == "slice_last" {
			x := p.shapes[ins[0]]
			m, rows := x[len(x)-1], nd.Prod(x[:len(x)-1])
			return done("copy2d", func() error {
				return e.g.launch("copy2d", grid(rows*n), 256, buf(i).ptr, n, at(buf(ins[0]), spec.Start, 4), m, rows, n)
			})
		}
		m, rows := out[len(out)-1], nd.Prod(out[:len(out)-1])
		return done("cuMemsetD32, copy2d", func() error {
			if err := cu.MemsetD32Async(buf(i).ptr, 0, int64(size), e.g.stream); err != nil {
				return err
			}
			return e.g.launch("copy2d", grid(rows*n), 256, at(buf(i), spec.Start, 4), m, buf(ins[1]).ptr, n, rows, n)
		})
	case "place":
		if !allF32 || spec.Offset == nil {
			break
		}
		inShapes := make([][]int, len(ins))
		for k, j := range ins {
			inShapes[k] = p.shapes[j]
		}
		off, n := spec.Offset(inShapes), nd.Prod(p.shapes[ins[0]])
		if off < 0 || off+n > size {
			break
		}
		return done("cuMemsetD32, cuMemcpyDtoD", func() error {
			if err := cu.MemsetD32Async(buf(i).ptr, 0, int64(size), e.g.stream); err != nil {
				return err
			}
			return cu.MemcpyDtoDAsync(at(buf(i), off, 4), buf(ins[0]).ptr, int64(n)*4, e.g.stream)
		})
	case "dot_nd":
		x, w := p.shapes[ins[0]], p.shapes[ins[1]]
		if !allF32 || len(w) != 2 || len(x) == 0 {
			break
		}
		k, n := x[len(x)-1], w[1]
		m := nd.Prod(x[:len(x)-1])
		return done(e.gemmName(), func() error {
			return e.gemm(false, false, m, n, k, buf(ins[0]).ptr, buf(ins[1]).ptr, buf(i).ptr)
		})
	case "shape_value":
		// The value depends on the shapes only: computed now, on the
		// host, by its CPU kernel (which reads no data), and uploaded
		// once for this plan.
		in := make([]*nd.Array, len(ins))
		for k, j := range ins {
			in[k] = &nd.Array{Shape: p.shapes[j]}
		}
		h := nd.New(v.DType(), out...)
		if err := cpu.RunOp(v.Op(), h, in); err != nil {
			return st, false, err
		}
		if err := e.g.upload(buf(i), h); err != nil {
			return st, false, err
		}
		return done("shape, uploaded when planned", func() error { return nil })
	case "lstm_seq", "lstm_seq_grad", "gru_seq", "gru_seq_grad":
		if !allF32 {
			break
		}
		return e.rnnStep(p, st, spec.Kind, spec.Reverse, spec.Mask)
	case "maxout", "maxout_grad":
		if !allF32 || spec.Pieces < 1 {
			break
		}
		k := spec.Pieces
		if spec.Kind == "maxout" {
			return done("maxout", func() error {
				return e.g.launch("maxout", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, k, size)
			})
		}
		n := size / k
		return done("maxout_grad", func() error {
			return e.g.launch("maxout_grad", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, buf(ins[1]).ptr, buf(ins[2]).ptr, k, n)
		})
	case "arg":
		x := p.shapes[ins[0]]
		if v.DType() != nd.Int64 || dt(ins[0]) != nd.Float32 {
			break
		}
		outer, n, inner := argGeometry(x, spec.Axis, spec.Flat)
		isMax := int64(0)
		if spec.ArgMax {
			isMax = 1
		}
		return done("arg_reduce", func() error {
			return e.g.launch("arg_reduce", grid(outer*inner), 256, buf(i).ptr, buf(ins[0]).ptr, outer, n, inner, isMax)
		})
	case "subtensor", "subtensor_grad":
		if !allF32 || spec.Ranges == nil {
			break
		}
		x := p.shapes[ins[0]]
		rs, err := spec.Ranges(x)
		if err != nil {
			return st, false, err
		}
		base, counts, strides := subtensorMeta(x, rs)
		m, err := e.upMeta(p, append(append([]int64{int64(len(counts))}, counts...), strides...))
		if err != nil {
			return st, false, err
		}
		n := nd.Prod(p.shapes[ins[len(ins)-1]])
		if spec.Kind == "subtensor" {
			// ew_strided's meta: the shape, the source's strides, then
			// (unused) b's strides.
			m2, err := e.upMeta(p, append(append(append([]int64{int64(len(counts))}, counts...), strides...), make([]int64, len(counts))...))
			if err != nil {
				return st, false, err
			}
			return done("ew_strided(copy)", func() error {
				return e.g.launch("ew_strided", grid(size), 256, buf(i).ptr, at(buf(ins[0]), base, 4), cu.DevicePtr(0), size, int64(eCopy), m2.ptr)
			})
		}
		return done("cuMemsetD32, strided_scatter", func() error {
			if err := cu.MemsetD32Async(buf(i).ptr, 0, int64(size), e.g.stream); err != nil {
				return err
			}
			return e.g.launch("strided_scatter", grid(n), 256, at(buf(i), base, 4), buf(ins[1]).ptr, n, m.ptr)
		})
	case "bias_relu":
		if !allF32 || len(out) == 0 {
			break
		}
		n := out[len(out)-1]
		if nd.SameShape(p.shapes[ins[1]], out) {
			n = size
		}
		return done("bias_relu", func() error {
			return e.g.launch("bias_relu", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, buf(ins[1]).ptr, size, n)
		})
	case "scaled_sub":
		if !allF32 || nd.Prod(p.shapes[ins[1]]) != 1 {
			break
		}
		return done("scaled_sub", func() error {
			return e.g.launch("scaled_sub", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, buf(ins[1]).ptr, buf(ins[2]).ptr, size)
		})
	default:
		if why, ok := cpuKinds[spec.Kind]; ok {
			st.what = "on the CPU: " + why
			return st, false, nil
		}
		if spec.Kind == "" {
			st.what = fmt.Sprintf("on the CPU: %s has no description (core.Spec)", v.Op())
			return st, false, nil
		}
	}
	return st, false, nil
}
