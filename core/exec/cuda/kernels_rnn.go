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

// rnnKernel is "lstm_seq", "lstm_seq_grad", "gru_seq" and
// "gru_seq_grad" (Reverse, Mask): the sizes from the shapes, the launches
// (rnn_launch.go) at run time on the buffers of the call.
func rnnKernel(s *opStep) (bool, error) {
	if !s.allF32 {
		return false, nil
	}
	e, p, i, ins, kind := s.e, s.p, s.st.node, s.st.in, s.spec.Kind
	x := p.shapes[ins[0]]
	h0 := ins[1]
	if kind == "gru_seq" || kind == "gru_seq_grad" {
		h0 = ins[2]
	}
	if len(x) != 3 || len(p.shapes[h0]) != 2 {
		return false, nil
	}
	r := rnnSeq{T: x[0], B: x[1], d: p.shapes[h0][1], reverse: s.spec.Reverse, mask: s.spec.Mask}
	var extra []devBuf
	if kind == "lstm_seq_grad" {
		pe, err := e.scratch(p, int64(max(1, r.B*3*r.d))*4)
		if err != nil {
			return false, err
		}
		extra = append(extra, pe)
	}
	run := map[string]func(seqDevice) error{
		"lstm_seq": r.lstmForward, "lstm_seq_grad": r.lstmBackward, "gru_seq": r.gruForward, "gru_seq_grad": r.gruBackward,
	}[kind]
	if nd.Prod(p.shapes[i]) == 0 {
		return s.done(fmt.Sprintf("%s: %d steps of products and kernels", kind, r.T), func() error { return nil })
	}
	return s.done(fmt.Sprintf("%s: %d steps of products and kernels", kind, r.T), func() error {
		bufs := make([]cu.DevicePtr, 0, len(ins)+1+len(extra))
		for _, j := range ins {
			bufs = append(bufs, p.bufs[j].ptr)
		}
		bufs = append(bufs, p.bufs[i].ptr)
		for _, b := range extra {
			bufs = append(bufs, b.ptr)
		}
		return run(gpuSeq{e, bufs})
	})
}
