//go:build cuda

package cuda

import (
	"slices"

	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/nd"
)

// The elementwise kinds' kernels: functions with numpy broadcasting,
// comparisons, switch, casts, copies under another layout, and the CPU
// planner's fused bias_relu and scaled_sub.

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

// elemwiseKernel is "elemwise": a comparison (uint8 out), switch, or a
// float32 function.
func elemwiseKernel(s *opStep) (bool, error) {
	e, p, i, ins, out, size, spec := s.e, s.p, s.st.node, s.st.in, s.out, s.size, s.spec
	buf, dt := s.buf, s.dt
	if c, ok := cmpCodes[spec.Func]; ok && s.dtype == nd.Uint8 && dt(ins[0]) == dt(ins[1]) && cmpKernel(dt(ins[0])) != "" {
		name := cmpKernel(dt(ins[0]))
		stA, okA := broadcastStrides(p.shapes[ins[0]], out)
		stB, okB := broadcastStrides(p.shapes[ins[1]], out)
		if !okA || !okB {
			return false, nil
		}
		meta, err := e.meta(p, out, stA, stB)
		if err != nil {
			return false, err
		}
		return s.done(name, func() error {
			return e.g.launch(name, grid(size), 256, buf(i), buf(ins[0]), buf(ins[1]), size, c, meta.ptr)
		})
	}
	if spec.Func == "switch" && s.dtype == nd.Float32 && dt(ins[0]) == nd.Uint8 && dt(ins[1]) == nd.Float32 && dt(ins[2]) == nd.Float32 {
		var sts [3][]int64
		for k := range 3 {
			var ok bool
			if sts[k], ok = broadcastStrides(p.shapes[ins[k]], out); !ok {
				break
			}
		}
		if sts[2] == nil {
			return false, nil
		}
		meta, err := e.meta(p, out, sts[0], append(append([]int64(nil), sts[1]...), sts[2]...))
		if err != nil {
			return false, err
		}
		return s.done("ew_switch", func() error {
			return e.g.launch("ew_switch", grid(size), 256, buf(i), buf(ins[0]), buf(ins[1]), buf(ins[2]), size, meta.ptr)
		})
	}
	code, ok := elemCodes[spec.Func]
	if !ok || !s.allF32 {
		return false, nil
	}
	return e.elemwise(s, code, ins, out)
}

// reluGradKernel is "relu_grad" (inputs y, gz).
func reluGradKernel(s *opStep) (bool, error) {
	if !s.allF32 {
		return false, nil
	}
	return s.e.elemwise(s, eReluGrad, s.st.in, s.out)
}

// broadcastToKernel is "broadcast_to": a copy under the output's shape.
func broadcastToKernel(s *opStep) (bool, error) {
	// the second input gives the shape only (any dtype)
	ins := s.st.in
	if s.dtype == nd.Float32 && s.dt(ins[0]) == nd.Float32 {
		return s.e.elemwise(s, eCopy, ins[:1], s.out)
	}
	return false, nil
}

// dimshuffleKernel is a "dimshuffle" that moves data (one that does not
// runs as a view): a strided copy.
func dimshuffleKernel(s *opStep) (bool, error) {
	e, p, i, ins, out, size, spec := s.e, s.p, s.st.node, s.st.in, s.out, s.size, s.spec
	buf := s.buf
	if !s.allF32 {
		return false, nil
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
		return false, err
	}
	return s.done("ew_strided(copy)", func() error {
		return e.g.launch("ew_strided", grid(size), 256, buf(i), buf(ins[0]), cu.DevicePtr(0), size, int64(eCopy), meta.ptr)
	})
}

// castKernel is "cast" to float32 from float32, int64, uint8 or bool.
func castKernel(s *opStep) (bool, error) {
	e, i, ins, size := s.e, s.st.node, s.st.in, s.size
	buf, dt := s.buf, s.dt
	if s.dtype != nd.Float32 {
		return false, nil
	}
	switch dt(ins[0]) {
	case nd.Float32:
		return s.done("ew_contig(copy)", func() error {
			return e.g.launch("ew_contig", grid(size), 256, buf(i), buf(ins[0]), int64(1), cu.DevicePtr(0), int64(0), size, int64(eCopy))
		})
	case nd.Int64:
		return s.done("cast_i64", func() error { return e.g.launch("cast_i64", grid(size), 256, buf(i), buf(ins[0]), size) })
	case nd.Uint8, nd.Bool:
		return s.done("cast_u8", func() error { return e.g.launch("cast_u8", grid(size), 256, buf(i), buf(ins[0]), size) })
	}
	return false, nil
}

// biasReluKernel is the CPU planner's fused "bias_relu" (inputs x, b).
func biasReluKernel(s *opStep) (bool, error) {
	e, p, i, ins, out, size := s.e, s.p, s.st.node, s.st.in, s.out, s.size
	buf := s.dev
	if !s.allF32 || len(out) == 0 {
		return false, nil
	}
	n := out[len(out)-1]
	if nd.SameShape(p.shapes[ins[1]], out) {
		n = size
	}
	return s.done("bias_relu", func() error {
		return e.g.launch("bias_relu", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, buf(ins[1]).ptr, size, n)
	})
}

// scaledSubKernel is the CPU planner's fused "scaled_sub" (inputs p, a
// 0-d s, g).
func scaledSubKernel(s *opStep) (bool, error) {
	e, p, i, ins, size := s.e, s.p, s.st.node, s.st.in, s.size
	buf := s.dev
	if !s.allF32 || nd.Prod(p.shapes[ins[1]]) != 1 {
		return false, nil
	}
	return s.done("scaled_sub", func() error {
		return e.g.launch("scaled_sub", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, buf(ins[1]).ptr, buf(ins[2]).ptr, size)
	})
}

// elemwise launches function code over out's shape with numpy
// broadcasting of the inputs (one or two).
func (e *executor) elemwise(s *opStep, code int64, ins []int, out []int) (bool, error) {
	p := s.p
	size := nd.Prod(out)
	i := s.st.node
	buf := func(j int) cu.DevicePtr { return p.bufs[j].ptr }
	// The contiguous case: each input the output's shape or one element.
	flag := func(j int) (int64, bool) {
		sh := p.shapes[j]
		switch {
		case nd.Prod(sh) == 1:
			return 0, true
		case slices.Equal(sh, out):
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
		return s.done("ew_contig", func() error {
			return e.g.launch("ew_contig", grid(size), 256, buf(i), buf(a), sa, buf(b), sb, size, code)
		})
	}
	stA, okA := broadcastStrides(p.shapes[a], out)
	stB, okB := broadcastStrides(p.shapes[b], out)
	if !okA || !okB {
		s.st.what = "on the CPU: shapes that do not broadcast"
		return false, nil
	}
	meta, err := e.meta(p, out, stA, stB)
	if err != nil {
		return false, err
	}
	return s.done("ew_strided", func() error {
		return e.g.launch("ew_strided", grid(size), 256, buf(i), buf(a), buf(b), size, code, meta.ptr)
	})
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

// scratch allocates a buffer the plan owns (freed with it).
func (e *executor) scratch(p *plan, bytes int64) (devBuf, error) {
	b, err := e.g.alloc(bytes)
	if err == nil && b.bytes > 0 {
		p.metas = append(p.metas, b)
	}
	return b, err
}
