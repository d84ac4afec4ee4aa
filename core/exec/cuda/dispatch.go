//go:build cuda

package cuda

import (
	"fmt"
	"slices"

	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// The elementwise functions kernels.cu knows, numbered as there.
var elemCodes = map[string]int64{
	"add": 0, "sub": 1, "mul": 2, "true_div": 3, "maximum": 4, "minimum": 5, "pow": 6,
	"neg": 13, "exp": 14, "log": 15, "tanh": 16, "sigmoid": 17, "softplus": 18, "sqr": 19,
	"sqrt": 20, "abs": 21, "relu": 22, "sgn": 23, "log1p": 24, "inv": 25,
}

// The comparisons, written as uint8 truth values by ew_cmp.
var cmpCodes = map[string]int64{"lt": 7, "le": 8, "gt": 9, "ge": 10, "eq": 11, "neq": 12}

// cmpKernel is the comparison kernel for operands of dtype d ("" for
// none: the CPU compares them).
func cmpKernel(d nd.DType) string {
	switch d {
	case nd.Float32:
		return "ew_cmp"
	case nd.Int64:
		return "ew_cmp_i64"
	}
	return ""
}

const (
	eCopy     = 100
	eReluGrad = 101
)

var reduceCodes = map[string]int64{"sum": 0, "mean": 1, "max": 2, "min": 3, "prod": 4}

// makeStep chooses the kernel of node i, or the CPU fallback.
func (e *executor) makeStep(p *plan, i int, v *core.Variable, ins []int) (step, error) {
	st := step{node: i, in: ins, op: v.Op()}
	spec := core.Spec(v.Op())
	dt := func(j int) nd.DType { return e.graph.Nodes[j].DType() }
	allF32 := v.DType() == nd.Float32
	for _, j := range ins {
		allF32 = allF32 && dt(j) == nd.Float32
	}
	out := p.shapes[i]
	buf := func(j int) cu.DevicePtr { return p.bufs[j].ptr }
	size := nd.Prod(out)
	inShapes := make([][]int, len(ins))
	for k, j := range ins {
		inShapes[k] = p.shapes[j]
	}
	if isView(v.Op(), inShapes, out) {
		st.what = "view"
		off, bytes := 0, int64(size)*int64(v.DType().Size())
		if spec.Offset != nil {
			off = spec.Offset(inShapes)
			st.what = fmt.Sprintf("view at %d", off)
		}
		esz := v.DType().Size()
		st.run = func() error {
			b := p.bufs[ins[0]]
			if int64(off*esz)+bytes > b.bytes {
				return fmt.Errorf("a view of %d bytes at element %d of a buffer of %d bytes", bytes, off, b.bytes)
			}
			p.bufs[i] = devBuf{b.ptr + cu.DevicePtr(off*esz), bytes}
			return nil
		}
		return st, nil
	}
	kernel := func(what string, run func() error) (step, error) {
		st.what, st.run = what, run
		return st, nil
	}
	if size == 0 {
		return kernel("empty", func() error { return nil })
	}
	switch spec.Kind {
	case "elemwise":
		if c, ok := cmpCodes[spec.Func]; ok && v.DType() == nd.Uint8 && dt(ins[0]) == dt(ins[1]) && cmpKernel(dt(ins[0])) != "" {
			name := cmpKernel(dt(ins[0]))
			stA, okA := broadcastStrides(p.shapes[ins[0]], out)
			stB, okB := broadcastStrides(p.shapes[ins[1]], out)
			if !okA || !okB {
				break
			}
			meta, err := e.meta(p, out, stA, stB)
			if err != nil {
				return st, err
			}
			return kernel(name, func() error {
				return e.g.launch(name, grid(size), 256, buf(i), buf(ins[0]), buf(ins[1]), size, c, meta.ptr)
			})
		}
		if spec.Func == "switch" && v.DType() == nd.Float32 && dt(ins[0]) == nd.Uint8 && dt(ins[1]) == nd.Float32 && dt(ins[2]) == nd.Float32 {
			var sts [3][]int64
			for k := range 3 {
				var ok bool
				if sts[k], ok = broadcastStrides(p.shapes[ins[k]], out); !ok {
					break
				}
			}
			if sts[2] == nil {
				break
			}
			meta, err := e.meta(p, out, sts[0], append(append([]int64(nil), sts[1]...), sts[2]...))
			if err != nil {
				return st, err
			}
			return kernel("ew_switch", func() error {
				return e.g.launch("ew_switch", grid(size), 256, buf(i), buf(ins[0]), buf(ins[1]), buf(ins[2]), size, meta.ptr)
			})
		}
		code, ok := elemCodes[spec.Func]
		if !ok || !allF32 {
			break
		}
		return e.elemwise(p, st, code, ins, out)
	case "relu_grad":
		if allF32 {
			return e.elemwise(p, st, eReluGrad, ins, out)
		}
	case "broadcast_to":
		// the second input gives the shape only (any dtype)
		if v.DType() == nd.Float32 && dt(ins[0]) == nd.Float32 {
			return e.elemwise(p, st, eCopy, ins[:1], out)
		}
	case "dimshuffle":
		if !allF32 {
			break
		}
		xs := p.shapes[ins[0]]
		xst := contiguousStrides(xs)
		st2 := make([]int64, len(spec.Pattern))
		for k, q := range spec.Pattern {
			if q >= 0 {
				st2[k] = xst[q]
			}
		}
		meta, err := e.meta(p, out, st2, make([]int64, len(out)))
		if err != nil {
			return st, err
		}
		return kernel("ew_strided(copy)", func() error {
			return e.g.launch("ew_strided", grid(size), 256, buf(i), buf(ins[0]), cu.DevicePtr(0), size, int64(eCopy), meta.ptr)
		})
	case "cast":
		if v.DType() != nd.Float32 {
			break
		}
		switch dt(ins[0]) {
		case nd.Float32:
			return kernel("ew_contig(copy)", func() error {
				return e.g.launch("ew_contig", grid(size), 256, buf(i), buf(ins[0]), int64(1), cu.DevicePtr(0), int64(0), size, int64(eCopy))
			})
		case nd.Int64:
			return kernel("cast_i64", func() error { return e.g.launch("cast_i64", grid(size), 256, buf(i), buf(ins[0]), size) })
		case nd.Uint8, nd.Bool:
			return kernel("cast_u8", func() error { return e.g.launch("cast_u8", grid(size), 256, buf(i), buf(ins[0]), size) })
		}
	case "reduce", "sum_to":
		// A reduction of uint8, bool or int64 data to float32 (a mean of
		// truth values: the misclassification rate) reads a float32 copy.
		cast := ""
		if spec.Kind == "reduce" && v.DType() == nd.Float32 {
			switch dt(ins[0]) {
			case nd.Uint8, nd.Bool:
				cast = "cast_u8"
			case nd.Int64:
				cast = "cast_i64"
			}
		}
		if !allF32 && cast == "" {
			break
		}
		x := p.shapes[ins[0]]
		var kept, red []int // axes of x
		if spec.Kind == "reduce" {
			for a := range x {
				if spec.Axes == nil || slices.Contains(spec.Axes, a) {
					red = append(red, a)
				} else {
					kept = append(kept, a)
				}
			}
		} else {
			lead := len(x) - len(out)
			for a := range x {
				if a < lead || out[a-lead] == 1 && x[a] != 1 {
					red = append(red, a)
				} else {
					kept = append(kept, a)
				}
			}
		}
		code := int64(0)
		if spec.Kind == "reduce" {
			code = reduceCodes[spec.Func]
		}
		xst := contiguousStrides(x)
		meta := []int64{int64(len(kept))}
		for _, a := range kept {
			meta = append(meta, int64(x[a]))
		}
		for _, a := range kept {
			meta = append(meta, xst[a])
		}
		meta = append(meta, int64(len(red)))
		count := int64(1)
		for _, a := range red {
			meta = append(meta, int64(x[a]))
			count *= int64(x[a])
		}
		for _, a := range red {
			meta = append(meta, xst[a])
		}
		m, err := e.upMeta(p, meta)
		if err != nil {
			return st, err
		}
		if cast != "" {
			nx := nd.Prod(x)
			tmp, err := e.scratch(p, int64(max(nx, 1))*4)
			if err != nil {
				return st, err
			}
			return kernel(cast+", reduce_strided", func() error {
				if err := e.g.launch(cast, grid(nx), 256, tmp.ptr, buf(ins[0]), nx); err != nil {
					return err
				}
				return e.g.launch("reduce_strided", size, 256, buf(i), tmp.ptr, code, count, m.ptr)
			})
		}
		return kernel("reduce_strided", func() error {
			return e.g.launch("reduce_strided", size, 256, buf(i), buf(ins[0]), code, count, m.ptr)
		})
	case "softmax", "softmax_grad":
		if !allF32 || len(out) == 0 {
			break
		}
		n := out[len(out)-1]
		rows := size / max(n, 1)
		lg := int64(0)
		if spec.Log {
			lg = 1
		}
		if spec.Kind == "softmax" {
			return kernel("softmax_rows", func() error {
				return e.g.launch("softmax_rows", rows, 256, buf(i), buf(ins[0]), n, lg)
			})
		}
		return kernel("softmax_grad_rows", func() error {
			return e.g.launch("softmax_grad_rows", rows, 256, buf(i), buf(ins[0]), buf(ins[1]), n, lg)
		})
	case "pick":
		if v.DType() != nd.Float32 || dt(ins[0]) != nd.Float32 || dt(ins[1]) != nd.Int64 {
			break
		}
		x := p.shapes[ins[0]]
		check, hasCheck := v.Op().(interface{ Check([]*nd.Array) error })
		return kernel("pick", func() error {
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
	case "pick_grad":
		if v.DType() != nd.Float32 || dt(ins[1]) != nd.Int64 || dt(ins[2]) != nd.Float32 || len(out) != 2 {
			break
		}
		return kernel("pick_grad", func() error {
			return e.g.launch("pick_grad", grid(size), 256, buf(i), buf(ins[1]), buf(ins[2]), out[0], out[1])
		})
	case "dot":
		if !allF32 {
			break
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
			break // zeros: the CPU op clears its output
		}
		if e.g.cublas != "" {
			return kernel("cublasSgemm", func() error { return sgemm(tA, tB, m, n, k, buf(ins[0]), lda, buf(ins[1]), ldb, buf(i)) })
		}
		return kernel("gemm_tiled", func() error {
			return e.g.launch2("gemm_tiled", (n+15)/16, (m+15)/16, 16, 16, buf(i), buf(ins[0]), buf(ins[1]), m, n, k, tA, tB)
		})
	}
	st2, ok, err := e.makeStepExt(p, st, v, spec, allF32)
	if err != nil || ok {
		return st2, err
	}
	st = st2
	if st.what == "" {
		st.what = "on the CPU: " + notFloat32
		if allF32 {
			st.what = fmt.Sprintf("on the CPU: no kernel for %s of these shapes", v.Op())
		}
	}
	st.fallback = true
	if e.g.strict {
		return st, fmt.Errorf("BLOCKS_CUDA_STRICT is set and this step would run %s", st.what)
	}
	return st, nil
}

// elemwise launches function code over out's shape with numpy
// broadcasting of the inputs (one or two).
func (e *executor) elemwise(p *plan, st step, code int64, ins []int, out []int) (step, error) {
	size := nd.Prod(out)
	i := st.node
	buf := func(j int) cu.DevicePtr { return p.bufs[j].ptr }
	// The contiguous case: each input the output's shape or one element.
	flag := func(j int) (int64, bool) {
		s := p.shapes[j]
		switch {
		case nd.Prod(s) == 1:
			return 0, true
		case slices.Equal(s, out):
			return 1, true
		}
		return 0, false
	}
	a := ins[0]
	b := ins[0]
	if len(ins) > 1 {
		b = ins[1]
	}
	sa, okA := flag(a)
	sb, okB := flag(b)
	if okA && okB {
		st.what = "ew_contig"
		st.run = func() error {
			return e.g.launch("ew_contig", grid(size), 256, buf(i), buf(a), sa, buf(b), sb, size, code)
		}
		return st, nil
	}
	stA, okA := broadcastStrides(p.shapes[a], out)
	stB, okB := broadcastStrides(p.shapes[b], out)
	if !okA || !okB {
		st.what, st.fallback = "on the CPU: shapes that do not broadcast", true
		if e.g.strict {
			return st, fmt.Errorf("BLOCKS_CUDA_STRICT is set and this step would run %s", st.what)
		}
		return st, nil
	}
	meta, err := e.meta(p, out, stA, stB)
	if err != nil {
		return st, err
	}
	st.what = "ew_strided"
	st.run = func() error {
		return e.g.launch("ew_strided", grid(size), 256, buf(i), buf(a), buf(b), size, code, meta.ptr)
	}
	return st, nil
}

// meta uploads ndim, the shape and two stride lists for ew_strided.
func (e *executor) meta(p *plan, shape []int, stA, stB []int64) (devBuf, error) {
	m := []int64{int64(len(shape))}
	for _, d := range shape {
		m = append(m, int64(d))
	}
	m = append(m, stA...)
	m = append(m, stB...)
	return e.upMeta(p, m)
}

func (e *executor) upMeta(p *plan, m []int64) (devBuf, error) {
	b, err := e.g.alloc(int64(len(m)) * 8)
	if err != nil {
		return b, err
	}
	a := nd.New(nd.Int64, len(m))
	copy(a.Data.([]int64), m)
	if err := e.g.upload(b, a); err != nil {
		return b, err
	}
	p.metas = append(p.metas, b)
	return b, nil
}
