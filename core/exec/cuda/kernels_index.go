//go:build cuda

package cuda

import (
	"slices"

	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/nd"
)

// The kernels of the kinds that index and copy: picks and lookups (with
// their checks of the indices on the host), tiles, concatenations,
// slices, placements, subtensors, and the values computed from shapes.

// hostValue is node j's value on the host (indices the ops check): the
// batch as the run uploaded it when j is an input (no copy back), else a
// download.
func (e *executor) hostValue(p *plan, j int) (*nd.Array, error) {
	// Through views (a flattened batch of targets) to an input.
	src := j
	for e.lw.Nodes[src].Kind != core.NodeInput {
		v := e.lw.Nodes[src]
		if v.Kind != core.NodeComputed || len(v.Inputs) == 0 {
			break
		}
		k := e.specs[src].Kind
		if k != "view" && k != "rows" {
			break
		}
		src = v.Inputs[0]
	}
	if v := e.lw.Nodes[src]; v.Kind == core.NodeInput {
		if k := v.Arg; k < len(p.args) && p.args[k] != nil && p.args[k].Size() == nd.Prod(p.shapes[j]) {
			return &nd.Array{Shape: p.shapes[j], Data: p.args[k].Data}, nil
		}
	}
	h := p.host[j]
	if h == nil || !slices.Equal(h.Shape, p.shapes[j]) {
		h = nd.New(e.lw.Nodes[j].DType, p.shapes[j]...)
		p.host[j] = h
	}
	return h, e.g.download(h, p.bufs[j])
}

// pickKernel is "pick": x[i, y[i]] for float32 x and int64 targets y,
// which the op checks (on the host) when it has a check.
func pickKernel(s *opStep) (bool, error) {
	e, p, i, ins := s.e, s.p, s.st.node, s.st.in
	buf, dt := s.buf, s.dt
	if s.dtype != nd.Float32 || dt(ins[0]) != nd.Float32 || dt(ins[1]) != nd.Int64 {
		return false, nil
	}
	x := p.shapes[ins[0]]
	check, hasCheck := s.op.(core.Checker)
	return s.done("pick", func() error {
		if hasCheck {
			// The op refuses targets outside the classes: it reads
			// only the targets (a batch of int64) and x's shape.
			y, err := e.hostValue(p, ins[1])
			if err != nil {
				return err
			}
			if err := check.Check([]*nd.Array{{Shape: x}, y}); err != nil {
				return err
			}
		}
		return e.g.launch("pick", grid(x[0]), 256, buf(i), buf(ins[0]), buf(ins[1]), x[0], x[1])
	})
}

// pickGradKernel is "pick_grad" (inputs x, y, g).
func pickGradKernel(s *opStep) (bool, error) {
	e, i, ins, out, size := s.e, s.st.node, s.st.in, s.out, s.size
	buf, dt := s.buf, s.dt
	if s.dtype != nd.Float32 || dt(ins[1]) != nd.Int64 || dt(ins[2]) != nd.Float32 || len(out) != 2 {
		return false, nil
	}
	return s.done("pick_grad", func() error {
		return e.g.launch("pick_grad", grid(size), 256, buf(i), buf(ins[1]), buf(ins[2]), out[0], out[1])
	})
}

// takeKernel is "take": W[indices], the indices checked on the host when
// the op has a check.
func takeKernel(s *opStep) (bool, error) {
	e, p, i, ins, size := s.e, s.p, s.st.node, s.st.in, s.size
	buf, dt := s.dev, s.dt
	if s.dtype != nd.Float32 || dt(ins[0]) != nd.Float32 || dt(ins[1]) != nd.Int64 {
		return false, nil
	}
	check, hasCheck := s.op.(core.Checker)
	ws, nIdx := p.shapes[ins[0]], nd.Prod(p.shapes[ins[1]])
	row := nd.Prod(ws[1:])
	return s.done("take", func() error {
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
}

// takeGradKernel is "take_grad" (inputs W, indices, gz): gz's rows summed
// into zeros shaped like W, grouped by row on the host (groupRows) so
// that every sum runs in a fixed order.
func takeGradKernel(s *opStep) (bool, error) {
	e, p, i, ins, out, size := s.e, s.p, s.st.node, s.st.in, s.out, s.size
	buf, dt := s.dev, s.dt
	if s.dtype != nd.Float32 || dt(ins[1]) != nd.Int64 || dt(ins[2]) != nd.Float32 {
		return false, nil
	}
	rows, nIdx := out[0], nd.Prod(p.shapes[ins[1]])
	row := nd.Prod(out[1:])
	perm, err := e.scratch(p, int64(max(nIdx, 1))*8)
	if err != nil {
		return false, err
	}
	start, err := e.scratch(p, int64(rows+1)*8)
	if err != nil {
		return false, err
	}
	permH, startH := nd.New(nd.Int64, max(nIdx, 1)), nd.New(nd.Int64, rows+1)
	return s.done("take_grad", func() error {
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
}

// repeatKernel is "repeat": x stacked along a new first axis.
func repeatKernel(s *opStep) (bool, error) {
	e, p, i, ins, size := s.e, s.p, s.st.node, s.st.in, s.size
	buf, dt := s.dev, s.dt
	// the second input gives the count only (any dtype)
	if s.dtype != nd.Float32 || dt(ins[0]) != nd.Float32 {
		return false, nil
	}
	n := nd.Prod(p.shapes[ins[0]])
	return s.done("tile", func() error {
		return e.g.launch("tile", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, n, size)
	})
}

// concatRows is a concatenation's rows along Axis of full, the
// concatenated shape: outer rows of row elements, inner elements per
// index of the axis. ok is false when the kernels do not apply.
func concatRows(s *opStep, full []int) (outer, inner, row int, ok bool) {
	axis := s.spec.Axis
	if !s.allF32 || axis < 0 || axis >= len(s.out) {
		return 0, 0, 0, false
	}
	outer, inner = nd.Prod(full[:axis]), nd.Prod(full[axis+1:])
	return outer, inner, full[axis] * inner, true
}

// concatKernel is "concat" along Axis: each input's rows copied into
// their columns of the output's.
func concatKernel(s *opStep) (bool, error) {
	e, p, i, ins, spec := s.e, s.p, s.st.node, s.st.in, s.spec
	buf := s.dev
	outer, inner, row, ok := concatRows(s, s.out)
	if !ok {
		return false, nil
	}
	return s.done("copy2d", func() error {
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

// concatGradKernel is "concat_grad" (inputs the full gradient, then the
// concatenation's inputs): input Part's columns of the full gradient.
func concatGradKernel(s *opStep) (bool, error) {
	e, p, i, ins, out, spec := s.e, s.p, s.st.node, s.st.in, s.out, s.spec
	buf := s.dev
	outer, inner, row, ok := concatRows(s, p.shapes[ins[0]])
	if !ok {
		return false, nil
	}
	off := 0
	for _, j := range ins[1 : 1+spec.Part] {
		off += p.shapes[j][spec.Axis] * inner
	}
	n := out[spec.Axis] * inner
	return s.done("copy2d", func() error {
		return e.g.launch("copy2d", grid(outer*n), 256, buf(i).ptr, n, at(buf(ins[0]), off, 4), row, outer, n)
	})
}

// sliceLastKernel is "slice_last": x[..., Start:Stop].
func sliceLastKernel(s *opStep) (bool, error) {
	e, p, i, ins, out, spec := s.e, s.p, s.st.node, s.st.in, s.out, s.spec
	buf := s.dev
	if !s.allF32 || len(out) == 0 {
		return false, nil
	}
	n := spec.Stop - spec.Start
	x := p.shapes[ins[0]]
	m, rows := x[len(x)-1], nd.Prod(x[:len(x)-1])
	return s.done("copy2d", func() error {
		return e.g.launch("copy2d", grid(rows*n), 256, buf(i).ptr, n, at(buf(ins[0]), spec.Start, 4), m, rows, n)
	})
}

// sliceLastGradKernel is "slice_last_grad" (inputs x, gz): gz placed at
// [..., Start:Stop] of zeros.
func sliceLastGradKernel(s *opStep) (bool, error) {
	e, i, ins, out, size, spec := s.e, s.st.node, s.st.in, s.out, s.size, s.spec
	buf := s.dev
	if !s.allF32 || len(out) == 0 {
		return false, nil
	}
	n := spec.Stop - spec.Start
	m, rows := out[len(out)-1], nd.Prod(out[:len(out)-1])
	return s.done("cuMemsetD32, copy2d", func() error {
		if err := cu.MemsetD32Async(buf(i).ptr, 0, int64(size), e.g.stream); err != nil {
			return err
		}
		return e.g.launch("copy2d", grid(rows*n), 256, at(buf(i), spec.Start, 4), m, buf(ins[1]).ptr, n, rows, n)
	})
}

// placeKernel is "place": zeros shaped like the output with the first
// input copied at element Offset.
func placeKernel(s *opStep) (bool, error) {
	e, p, i, ins, size, spec := s.e, s.p, s.st.node, s.st.in, s.size, s.spec
	buf := s.dev
	if !s.allF32 || spec.Offset == nil {
		return false, nil
	}
	off, n := spec.Offset(e.inShapes(p, i)), nd.Prod(p.shapes[ins[0]])
	if off < 0 || off+n > size {
		return false, nil
	}
	return s.done("cuMemsetD32, cuMemcpyDtoD", func() error {
		if err := cu.MemsetD32Async(buf(i).ptr, 0, int64(size), e.g.stream); err != nil {
			return err
		}
		return cu.MemcpyDtoDAsync(at(buf(i), off, 4), buf(ins[0]).ptr, int64(n)*4, e.g.stream)
	})
}

// subtensorPlan is a subtensor's Ranges of x as a base offset, counts
// and strides, with the strided scatter's meta uploaded. ok is false when
// the kernels do not apply.
func subtensorPlan(s *opStep) (base int, counts, strides []int64, m devBuf, ok bool, err error) {
	e, p, ins, spec := s.e, s.p, s.st.in, s.spec
	if !s.allF32 || spec.Ranges == nil {
		return 0, nil, nil, m, false, nil
	}
	x := p.shapes[ins[0]]
	rs, err := spec.Ranges(x)
	if err != nil {
		return 0, nil, nil, m, false, err
	}
	base, counts, strides = subtensorMeta(x, rs)
	m, err = e.upMeta(p, append(append([]int64{int64(len(counts))}, counts...), strides...))
	return base, counts, strides, m, err == nil, err
}

// subtensorKernel is "subtensor": a strided copy of x's Ranges.
func subtensorKernel(s *opStep) (bool, error) {
	e, p, i, ins, size := s.e, s.p, s.st.node, s.st.in, s.size
	buf := s.dev
	base, counts, strides, _, ok, err := subtensorPlan(s)
	if !ok {
		return false, err
	}
	// ew_strided's meta: the shape, the source's strides, then
	// (unused) b's strides.
	m2, err := e.upMeta(p, append(append(append([]int64{int64(len(counts))}, counts...), strides...), make([]int64, len(counts))...))
	if err != nil {
		return false, err
	}
	return s.done("ew_strided(copy)", func() error {
		return e.g.launch("ew_strided", grid(size), 256, buf(i).ptr, at(buf(ins[0]), base, 4), cu.DevicePtr(0), size, int64(eCopy), m2.ptr)
	})
}

// subtensorGradKernel is "subtensor_grad" (inputs x, gz): gz scattered
// into zeros at x's Ranges.
func subtensorGradKernel(s *opStep) (bool, error) {
	e, p, i, ins, size := s.e, s.p, s.st.node, s.st.in, s.size
	buf := s.dev
	base, _, _, m, ok, err := subtensorPlan(s)
	if !ok {
		return false, err
	}
	n := nd.Prod(p.shapes[ins[len(ins)-1]])
	return s.done("cuMemsetD32, strided_scatter", func() error {
		if err := cu.MemsetD32Async(buf(i).ptr, 0, int64(size), e.g.stream); err != nil {
			return err
		}
		return e.g.launch("strided_scatter", grid(n), 256, at(buf(i), base, 4), buf(ins[1]).ptr, n, m.ptr)
	})
}

// shapeValueKernel is "shape_value": the value depends on the shapes
// only, so it is computed now, on the host, by its CPU kernel (which
// reads no data), and uploaded once for this plan.
func shapeValueKernel(s *opStep) (bool, error) {
	e, p, i, ins, out := s.e, s.p, s.st.node, s.st.in, s.out
	buf := s.dev
	in := make([]*nd.Array, len(ins))
	for k, j := range ins {
		in[k] = &nd.Array{Shape: p.shapes[j]}
	}
	h := nd.New(s.dtype, out...)
	if err := cpu.RunOp(s.op, h, in); err != nil {
		return false, err
	}
	if err := e.g.upload(buf(i), h); err != nil {
		return false, err
	}
	return s.done("shape, uploaded when planned", func() error { return nil })
}
