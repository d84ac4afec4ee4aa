//go:build cuda

package cuda

import (
	"fmt"

	"gorgonia.org/cu"

	"github.com/blocks-go/blocks/nd"
)

// gpuSeq runs rnn_launch.go's launch sequences on the GPU: bufs are the
// op's buffers (its inputs, its output, scratch) for this call.
type gpuSeq struct {
	e    *executor
	bufs []cu.DevicePtr
}

func (s gpuSeq) ptr(r ref) cu.DevicePtr {
	if r.buf < 0 {
		return 0
	}
	return s.bufs[r.buf] + cu.DevicePtr(r.off*4)
}

func (s gpuSeq) gemm(tA, tB bool, m, n, k int, a, b, c ref) error {
	return s.e.gemm(tA, tB, m, n, k, s.ptr(a), s.ptr(b), s.ptr(c))
}

func (s gpuSeq) kernel(name string, n int, args ...any) error {
	conv := make([]any, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case ref:
			conv[i] = s.ptr(a)
		case int:
			conv[i] = int64(a)
		default:
			return fmt.Errorf("cuda: kernel %s: argument %d of type %T", name, i, a)
		}
	}
	return s.e.g.launch(name, grid(n), 256, conv...)
}

func (s gpuSeq) copy(dst, src ref, n int) error {
	return cu.MemcpyDtoDAsync(s.ptr(dst), s.ptr(src), int64(n)*4, s.e.g.stream)
}

func (s gpuSeq) add(dst, src ref, n int) error {
	return s.e.g.launch("ew_contig", grid(n), 256, s.ptr(dst), s.ptr(dst), int64(1), s.ptr(src), int64(1), int64(n), int64(0))
}

func (s gpuSeq) zero(dst ref, n int) error {
	return cu.MemsetD32Async(s.ptr(dst), 0, int64(n), s.e.g.stream)
}

// lstmSeqKernel is "lstm_seq" (Reverse, Mask; inputs x, h0, ...).
func lstmSeqKernel(s *opStep) (bool, error) { return rnnKernel(s, 1, 0, rnnSeq.lstmForward) }

// lstmSeqGradKernel is "lstm_seq_grad", with a scratch of B·3·d floats.
func lstmSeqGradKernel(s *opStep) (bool, error) { return rnnKernel(s, 1, 3, rnnSeq.lstmBackward) }

// gruSeqKernel is "gru_seq" (Reverse, Mask; inputs x, xg, h0, ...).
func gruSeqKernel(s *opStep) (bool, error) { return rnnKernel(s, 2, 0, rnnSeq.gruForward) }

// gruSeqGradKernel is "gru_seq_grad".
func gruSeqGradKernel(s *opStep) (bool, error) { return rnnKernel(s, 2, 0, rnnSeq.gruBackward) }

// rnnKernel is the step of a fused LSTM or GRU sequence or its gradient
// (its input number h0In the initial state; run its launch sequence,
// rnn_launch.go, with a scratch of B·scratch·d floats when scratch > 0):
// the sizes from the shapes, the launches at run time on the buffers of
// the call.
func rnnKernel(s *opStep, h0In, scratch int, run func(rnnSeq, seqDevice) error) (bool, error) {
	if !s.allF32 {
		return false, nil
	}
	e, p, i, ins, kind := s.e, s.p, s.st.node, s.st.in, s.spec.Kind
	x := p.shapes[ins[0]]
	h0 := ins[h0In]
	if len(x) != 3 || len(p.shapes[h0]) != 2 {
		return false, nil
	}
	r := rnnSeq{T: x[0], B: x[1], d: p.shapes[h0][1], reverse: s.spec.Reverse, mask: s.spec.Mask}
	var extra []devBuf
	if scratch > 0 {
		pe, err := e.scratch(p, int64(max(1, r.B*scratch*r.d))*4)
		if err != nil {
			return false, err
		}
		extra = append(extra, pe)
	}
	what := fmt.Sprintf("%s: %d steps of products and kernels", kind, r.T)
	if nd.Prod(p.shapes[i]) == 0 {
		return s.done(what, func() error { return nil })
	}
	return s.done(what, func() error {
		bufs := make([]cu.DevicePtr, 0, len(ins)+1+len(extra))
		for _, j := range ins {
			bufs = append(bufs, p.bufs[j].ptr)
		}
		bufs = append(bufs, p.bufs[i].ptr)
		for _, b := range extra {
			bufs = append(bufs, b.ptr)
		}
		return run(r, gpuSeq{e, bufs})
	})
}
