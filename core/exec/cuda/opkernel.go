//go:build cuda

package cuda

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// An opKernel plans one op's step on the GPU for a plan's shapes and
// dtypes: it sets the step's kernels and launches (opStep.done) and
// reports true, or reports false when it has none for these dtypes or
// shapes; the step then runs the op's CPU kernel on host copies
// (runOnCPU), and the kernel may say why in st.what.
type opKernel func(s *opStep) (bool, error)

// opKernels are the backend's kernels, by the kind core.Spec gives an op:
// adding an op to core means its description there (core.Spec) and its
// kernel here, or its kind in route.go's cpuKinds, the declared CPU route.
// route.go's gpuRoutes lists the same kinds with the CUDA kernels each
// launches (TestKernelTableMatchesRoutes, TestEveryOpHasACUDARoute).
var opKernels = map[string]opKernel{
	"elemwise":            elemwiseKernel,
	"relu_grad":           reluGradKernel,
	"broadcast_to":        broadcastToKernel,
	"dimshuffle":          dimshuffleKernel,
	"cast":                castKernel,
	"reduce":              reduceKernel,
	"sum_to":              sumToKernel,
	"map_sum":             mapSumKernel,
	"softmax":             softmaxKernel,
	"softmax_grad":        softmaxGradKernel,
	"pick":                pickKernel,
	"pick_grad":           pickGradKernel,
	"dot":                 dotKernel,
	"dot_nd":              dotNDKernel,
	"view":                viewKernel,
	"rows":                viewKernel,
	"view_at":             viewKernel,
	"place":               placeKernel,
	"shape_value":         shapeValueKernel,
	"conv2d":              conv2dKernel,
	"conv2d_grad_input":   conv2dGradInputKernel,
	"conv2d_grad_weights": conv2dGradWeightsKernel,
	"pool2d":              pool2dKernel,
	"pool2d_grad":         pool2dGradKernel,
	"fused":               fusedKernel,
	"take":                takeKernel,
	"take_grad":           takeGradKernel,
	"repeat":              repeatKernel,
	"concat":              concatKernel,
	"concat_grad":         concatGradKernel,
	"slice_last":          sliceLastKernel,
	"slice_last_grad":     sliceLastGradKernel,
	"lstm_seq":            lstmSeqKernel,
	"lstm_seq_grad":       lstmSeqGradKernel,
	"gru_seq":             gruSeqKernel,
	"gru_seq_grad":        gruSeqGradKernel,
	"maxout":              maxoutKernel,
	"maxout_grad":         maxoutGradKernel,
	"arg":                 argKernel,
	"subtensor":           subtensorKernel,
	"subtensor_grad":      subtensorGradKernel,
	"bias_relu":           biasReluKernel,
	"scaled_sub":          scaledSubKernel,
}

// kernelFor is the kernel of an op of kind (looked up once, when the
// function is lowered), or nil and the step's description on the CPU.
func kernelFor(kind string, op core.Op) (opKernel, string) {
	if k, ok := opKernels[kind]; ok {
		return k, ""
	}
	if why, ok := cpuKinds[kind]; ok {
		return nil, "on the CPU: " + why
	}
	if kind == "" {
		return nil, fmt.Sprintf("on the CPU: %s is %s", op, undescribed)
	}
	return nil, fmt.Sprintf("on the CPU: the backend has no kernel for kind %q", kind)
}

// opStep is one op's step as its kernel plans it.
type opStep struct {
	e      *executor
	p      *plan
	st     step
	spec   core.OpSpec
	op     core.Op
	dtype  nd.DType // the output's
	out    []int    // the output's shape
	size   int      // its number of elements
	allF32 bool     // the output and every input float32
}

// buf is node j's device pointer when called (a launch reads it at run
// time: shared variables and views are bound then).
func (s *opStep) buf(j int) cu.DevicePtr { return s.p.bufs[j].ptr }

// dev is node j's device buffer when called.
func (s *opStep) dev(j int) devBuf { return s.p.bufs[j] }

// dt is node j's dtype.
func (s *opStep) dt(j int) nd.DType { return s.e.lw.Nodes[j].DType }

// done sets the step's kernels (what) and launches (run).
func (s *opStep) done(what string, run func() error) (bool, error) {
	s.st.what, s.st.run = what, run
	return true, nil
}

// makeStep plans node i's step: a view of its input, nothing for an empty
// output, else its kernel, or the CPU route when it has none.
func (e *executor) makeStep(p *plan, i int) (step, error) {
	v := e.lw.Nodes[i]
	s := &opStep{e: e, p: p, st: step{node: i, in: v.Inputs, op: v.Op}, spec: e.specs[i], op: v.Op,
		dtype: v.DType, out: p.shapes[i], size: nd.Prod(p.shapes[i])}
	s.allF32 = v.DType == nd.Float32
	for _, j := range v.Inputs {
		s.allF32 = s.allF32 && s.dt(j) == nd.Float32
	}
	k := e.kernels[i]
	switch {
	case isView(v.Op, s.spec.Kind, e.inShapes(p, i), s.out):
		k = viewKernel
	case s.size == 0:
		s.done("empty", func() error { return nil })
		return s.st, nil
	}
	if k != nil {
		ok, err := k(s)
		if err != nil || ok {
			return s.st, err
		}
	}
	st := s.st
	switch {
	case k == nil:
		st.what = e.cpuWhy[i]
	case st.what == "" && s.allF32:
		st.what = fmt.Sprintf("on the CPU: no kernel for %s of these shapes", v.Op)
	case st.what == "":
		st.what = "on the CPU: " + notFloat32
	}
	st.fallback = true
	if e.g.strict {
		return st, fmt.Errorf("BLOCKS_CUDA_STRICT is set and this step would run %s", st.what)
	}
	return st, nil
}

// viewKernel is a view's step (route.go's "view", "rows", "view_at", and
// a dimshuffle or sum_to that moves no data): the output is the input's
// buffer, at the op's offset, bound when the step runs.
func viewKernel(s *opStep) (bool, error) {
	p, i, ins, spec, size := s.p, s.st.node, s.st.in, s.spec, s.size
	what := "view"
	off, bytes := 0, int64(size)*int64(s.dtype.Size())
	if spec.Offset != nil {
		off = spec.Offset(s.e.inShapes(p, i))
		what = fmt.Sprintf("view at %d", off)
	}
	esz := s.dtype.Size()
	return s.done(what, func() error {
		b := p.bufs[ins[0]]
		if int64(off*esz)+bytes > b.bytes {
			return fmt.Errorf("a view of %d bytes at element %d of a buffer of %d bytes", bytes, off, b.bytes)
		}
		p.bufs[i] = devBuf{b.ptr + cu.DevicePtr(off*esz), bytes}
		return nil
	})
}
