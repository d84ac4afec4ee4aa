//go:build cuda

package cuda

import (
	"slices"

	"github.com/blocks-go/blocks/nd"
)

// The kernels of the kinds that reduce: sums, means and extrema over
// axes, softmax rows, argmax and argmin, maxout.

var reduceCodes = map[string]int64{"sum": 0, "mean": 1, "max": 2, "min": 3, "prod": 4}

// reduceKernel is "reduce" (Func over Axes, nil for all). A reduction
// of uint8, bool or int64 data to float32 (a mean of truth values: the
// misclassification rate) reads a float32 copy.
func reduceKernel(s *opStep) (bool, error) {
	ins, spec := s.st.in, s.spec
	cast := ""
	if s.dtype == nd.Float32 {
		switch s.dt(ins[0]) {
		case nd.Uint8, nd.Bool:
			cast = "cast_u8"
		case nd.Int64:
			cast = "cast_i64"
		}
	}
	if !s.allF32 && cast == "" {
		return false, nil
	}
	x := s.p.shapes[ins[0]]
	var kept, red []int // axes of x
	for a := range x {
		if spec.Axes == nil || slices.Contains(spec.Axes, a) {
			red = append(red, a)
		} else {
			kept = append(kept, a)
		}
	}
	return reduceStrided(s, reduceCodes[spec.Func], kept, red, cast)
}

// sumToKernel is "sum_to": the first input summed down to the output's
// shape (a broadcast's gradient).
func sumToKernel(s *opStep) (bool, error) {
	if !s.allF32 {
		return false, nil
	}
	x, out := s.p.shapes[s.st.in[0]], s.out
	var kept, red []int // axes of x
	lead := len(x) - len(out)
	for a := range x {
		if a < lead || out[a-lead] == 1 && x[a] != 1 {
			red = append(red, a)
		} else {
			kept = append(kept, a)
		}
	}
	return reduceStrided(s, 0, kept, red, "")
}

// reduceStrided launches reduce_strided (function code) over the axes red
// of the first input, one block per output element (the axes kept), on a
// float32 copy made by the kernel cast when cast is not "".
func reduceStrided(s *opStep, code int64, kept, red []int, cast string) (bool, error) {
	e, p, i, ins, size := s.e, s.p, s.st.node, s.st.in, s.size
	buf := s.buf
	x := p.shapes[ins[0]]
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
		return false, err
	}
	if cast != "" {
		nx := nd.Prod(x)
		tmp, err := e.scratch(p, int64(max(nx, 1))*4)
		if err != nil {
			return false, err
		}
		return s.done(cast+", reduce_strided", func() error {
			if err := e.g.launch(cast, grid(nx), 256, tmp.ptr, buf(ins[0]), nx); err != nil {
				return err
			}
			return e.g.launch("reduce_strided", size, 256, buf(i), tmp.ptr, code, count, m.ptr)
		})
	}
	return s.done("reduce_strided", func() error {
		return e.g.launch("reduce_strided", size, 256, buf(i), buf(ins[0]), code, count, m.ptr)
	})
}

// mapSumKernel is "map_sum": the tied biases' gradient, a 4-d (n, f, h,
// w) summed to (f,).
func mapSumKernel(s *opStep) (bool, error) {
	e, p, i, ins, size := s.e, s.p, s.st.node, s.st.in, s.size
	buf := s.dev
	x := p.shapes[ins[0]]
	if !s.allF32 || len(x) != 4 {
		return false, nil
	}
	xst := contiguousStrides(x)
	meta := []int64{1, int64(x[1]), xst[1], 3, int64(x[0]), int64(x[2]), int64(x[3]), xst[0], xst[2], xst[3]}
	m, err := e.upMeta(p, meta)
	if err != nil {
		return false, err
	}
	count := int64(x[0] * x[2] * x[3])
	return s.done("reduce_strided", func() error {
		return e.g.launch("reduce_strided", size, 256, buf(i).ptr, buf(ins[0]).ptr, int64(0), count, m.ptr)
	})
}

// softmaxRows is the number of rows and the row length of a softmax's
// output, and its Log flag as the kernels take it; ok is false when the
// kernels do not apply.
func softmaxRows(s *opStep) (rows, n int, lg int64, ok bool) {
	out := s.out
	if !s.allF32 || len(out) == 0 {
		return 0, 0, 0, false
	}
	n = out[len(out)-1]
	rows = s.size / max(n, 1)
	if s.spec.Log {
		lg = 1
	}
	return rows, n, lg, true
}

// softmaxKernel is "softmax" over the last axis (Log: the log-softmax).
func softmaxKernel(s *opStep) (bool, error) {
	e, i, ins := s.e, s.st.node, s.st.in
	buf := s.buf
	rows, n, lg, ok := softmaxRows(s)
	if !ok {
		return false, nil
	}
	return s.done("softmax_rows", func() error {
		return e.g.launch("softmax_rows", rows, 256, buf(i), buf(ins[0]), n, lg)
	})
}

// softmaxGradKernel is "softmax_grad" (inputs the softmax's output, gz).
func softmaxGradKernel(s *opStep) (bool, error) {
	e, i, ins := s.e, s.st.node, s.st.in
	buf := s.buf
	rows, n, lg, ok := softmaxRows(s)
	if !ok {
		return false, nil
	}
	return s.done("softmax_grad_rows", func() error {
		return e.g.launch("softmax_grad_rows", rows, 256, buf(i), buf(ins[0]), buf(ins[1]), n, lg)
	})
}

// argKernel is "arg": an int64 argmax or argmin of float32 data.
func argKernel(s *opStep) (bool, error) {
	e, p, i, ins, spec := s.e, s.p, s.st.node, s.st.in, s.spec
	buf, dt := s.dev, s.dt
	x := p.shapes[ins[0]]
	if s.dtype != nd.Int64 || dt(ins[0]) != nd.Float32 {
		return false, nil
	}
	outer, n, inner := argGeometry(x, spec.Axis, spec.Flat)
	isMax := int64(0)
	if spec.ArgMax {
		isMax = 1
	}
	return s.done("arg_reduce", func() error {
		return e.g.launch("arg_reduce", grid(outer*inner), 256, buf(i).ptr, buf(ins[0]).ptr, outer, n, inner, isMax)
	})
}

// maxoutKernel is "maxout" (Pieces).
func maxoutKernel(s *opStep) (bool, error) {
	e, i, ins, size, spec := s.e, s.st.node, s.st.in, s.size, s.spec
	buf := s.dev
	if !s.allF32 || spec.Pieces < 1 {
		return false, nil
	}
	k := spec.Pieces
	return s.done("maxout", func() error {
		return e.g.launch("maxout", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, k, size)
	})
}

// maxoutGradKernel is "maxout_grad" (inputs x, the output, gz).
func maxoutGradKernel(s *opStep) (bool, error) {
	e, i, ins, size, spec := s.e, s.st.node, s.st.in, s.size, s.spec
	buf := s.dev
	if !s.allF32 || spec.Pieces < 1 {
		return false, nil
	}
	k := spec.Pieces
	n := size / k
	return s.done("maxout_grad", func() error {
		return e.g.launch("maxout_grad", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, buf(ins[1]).ptr, buf(ins[2]).ptr, k, n)
	})
}
