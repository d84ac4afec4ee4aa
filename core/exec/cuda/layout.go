package cuda

// The pure parts of the backend, built (and tested) without the cuda tag:
// the kernels' names and the stride arithmetic of their launches.

// kernelNames are the kernels the backend loads (kernels/kernels.cu); the
// module must define each.
var kernelNames = []string{
	"ew_contig", "ew_strided", "ew_cmp", "ew_switch", "bias_relu", "scaled_sub", "cast_i64", "cast_u8",
	"reduce_strided", "softmax_rows", "softmax_grad_rows", "pick", "pick_grad", "gemm_tiled",
	"im2col", "col2im", "conv_scatter", "conv_gather", "pool2d", "pool2d_grad",
	"take", "take_grad", "tile", "copy2d", "fused_rule",
	"lstm_fwd_step", "lstm_bwd_step", "colsum_add", "gru_gates", "gru_fwd_step", "gru_bwd_n", "gru_bwd_r", "reverse_steps",
	"maxout", "maxout_grad", "arg_reduce", "strided_scatter", "ew_cmp_i64",
}

// contiguousStrides are a row-major array's strides in elements.
func contiguousStrides(s []int) []int64 {
	st := make([]int64, len(s))
	acc := int64(1)
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= int64(s[i])
	}
	return st
}

// broadcastStrides are the strides of an input of shape in read under the
// output shape out (numpy's rules: aligned on the right, 0 where the input
// has 1 or lacks the axis).
func broadcastStrides(in, out []int) ([]int64, bool) {
	cs := contiguousStrides(in)
	st := make([]int64, len(out))
	lead := len(out) - len(in)
	if lead < 0 {
		return nil, false
	}
	for a := range out {
		if a < lead {
			continue
		}
		if in[a-lead] != 1 {
			st[a] = cs[a-lead]
		}
	}
	return st, true
}
