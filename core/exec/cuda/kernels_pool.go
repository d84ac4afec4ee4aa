//go:build cuda

package cuda

import (
	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/nd"
)

// The kernels of the poolings and of the step rules' fused updates.

// poolPlan is a pooling's mode and geometry (Pool) for x, uploaded; ok
// is false when the kernels do not apply.
func poolPlan(s *opStep) (mode int64, g poolGeom, geom devBuf, ok bool, err error) {
	mode, ok = poolModes[s.spec.Pool.Mode]
	x := s.p.shapes[s.st.in[0]]
	if !s.allF32 || !ok || len(x) < 2 {
		return 0, g, geom, false, nil
	}
	g = poolGeometry(x, s.spec.Pool)
	geom, err = s.e.upMeta(s.p, g.meta(mode))
	return mode, g, geom, err == nil, err
}

// pool2dKernel is "pool2d" (input x).
func pool2dKernel(s *opStep) (bool, error) {
	e, i, ins, size := s.e, s.st.node, s.st.in, s.size
	buf := s.dev
	_, g, geom, ok, err := poolPlan(s)
	if !ok {
		return false, err
	}
	return s.done("pool2d", func() error {
		return e.g.launch("pool2d", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, g.planes, geom.ptr)
	})
}

// pool2dGradKernel is "pool2d_grad" (inputs x, the pooled output, gz for
// max pooling; x, gz otherwise).
func pool2dGradKernel(s *opStep) (bool, error) {
	e, i, ins, size := s.e, s.st.node, s.st.in, s.size
	buf := s.dev
	mode, g, geom, ok, err := poolPlan(s)
	if !ok {
		return false, err
	}
	return s.done("pool2d_grad", func() error {
		y, gz := cu.DevicePtr(0), buf(ins[1]).ptr
		if mode == poolModes["max"] {
			y, gz = buf(ins[1]).ptr, buf(ins[2]).ptr
		}
		return e.g.launch("pool2d_grad", grid(size), 256, buf(i).ptr, buf(ins[0]).ptr, y, gz, g.planes, geom.ptr)
	})
}

// fusedKernel is "fused": a step rule's fused update (Func, one of
// fusedRules) of FullInputs float32 arrays and float32 or float64
// scalars, with its constants Consts, over each of its Parts.
func fusedKernel(s *opStep) (bool, error) {
	e, i, ins, size, spec := s.e, s.st.node, s.st.in, s.size, s.spec
	buf, dt := s.dev, s.dt
	code, ok := fusedRules[spec.Func]
	arity := fusedArity[spec.Func]
	if !ok || s.dtype != nd.Float32 || spec.FullInputs != arity[0] || len(ins) != arity[0]+arity[1] {
		return false, nil
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
				return false, nil
			}
			full[k] = j
			continue
		}
		sc := k - spec.FullInputs
		switch dt(j) {
		case nd.Float32:
		case nd.Float64:
			dbl |= 1 << sc
		default:
			return false, nil
		}
		scalars[sc] = j
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
	return s.done("fused_rule("+spec.Func+")", func() error {
		return e.g.launch("fused_rule", grid(n), 256, buf(i).ptr, ptr(full[0]), ptr(full[1]), ptr(full[2]),
			ptr(scalars[0]), ptr(scalars[1]), ptr(scalars[2]), ptr(scalars[3]), dbl, n, code, c0)
	})
}
