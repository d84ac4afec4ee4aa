package cuda

import (
	"fmt"
	"sort"
	"strings"
)

// The backend's routes, built (and tested) without the cuda tag: for every
// kind of op core.Spec describes, the CUDA kernels its registered kernel
// (opKernels, opkernel.go) launches, or the declared CPU route: why its
// ops run their CPU kernel on host copies of their inputs (runOnCPU).
// make gpu-check prints this table (RouteTable); a step run on the CPU is
// marked so in Function.Program with its reason, and BLOCKS_CUDA_STRICT=1
// makes it an error instead. TestEveryOpHasACUDARoute checks that every
// op of core has one or the other.

// gpuRoutes are the kinds run on the GPU (float32 data) and their kernels:
// the kinds of opKernels.
var gpuRoutes = map[string][]string{
	"elemwise":            {"ew_contig", "ew_strided", "ew_cmp", "ew_cmp_i64", "ew_switch"},
	"relu_grad":           {"ew_contig", "ew_strided"},
	"broadcast_to":        {"ew_contig", "ew_strided"},
	"dimshuffle":          {"ew_strided"},
	"cast":                {"ew_contig", "cast_i64", "cast_u8"},
	"reduce":              {"reduce_strided", "cast_u8", "cast_i64"},
	"sum_to":              {"reduce_strided"},
	"map_sum":             {"reduce_strided"},
	"softmax":             {"softmax_rows"},
	"softmax_grad":        {"softmax_grad_rows"},
	"pick":                {"pick"},
	"pick_grad":           {"pick_grad"},
	"dot":                 {"cublasSgemm", "gemm_tiled"},
	"dot_nd":              {"cublasSgemm", "gemm_tiled"},
	"view":                {"(a view: no kernel)"},
	"rows":                {"(a view: no kernel)"},
	"view_at":             {"(a view at an offset: no kernel)"},
	"place":               {"cuMemsetD32", "cuMemcpyDtoD"},
	"shape_value":         {"(computed from the shapes when planned, uploaded once)"},
	"conv2d":              {"im2col", "cublasSgemm", "gemm_tiled", "conv_scatter"},
	"conv2d_grad_input":   {"conv_gather", "cublasSgemm", "gemm_tiled", "col2im"},
	"conv2d_grad_weights": {"im2col", "conv_gather", "cublasSgemm", "gemm_tiled", "ew_contig"},
	"pool2d":              {"pool2d"},
	"pool2d_grad":         {"pool2d_grad"},
	"fused":               {"fused_rule"},
	"take":                {"take"},
	"take_grad":           {"take_grad"},
	"repeat":              {"tile"},
	"concat":              {"copy2d"},
	"concat_grad":         {"copy2d"},
	"slice_last":          {"copy2d"},
	"slice_last_grad":     {"cuMemsetD32", "copy2d"},
	"lstm_seq":            {"cuMemcpyDtoD", "cublasSgemm", "gemm_tiled", "lstm_fwd_step"},
	"lstm_seq_grad":       {"cuMemsetD32", "lstm_bwd_step", "colsum_add", "cublasSgemm", "gemm_tiled", "ew_contig", "reverse_steps"},
	"gru_seq":             {"cuMemcpyDtoD", "cublasSgemm", "gemm_tiled", "gru_gates", "gru_fwd_step"},
	"gru_seq_grad":        {"cuMemsetD32", "gru_bwd_n", "gru_bwd_r", "cublasSgemm", "gemm_tiled", "ew_contig", "reverse_steps"},
	"maxout":              {"maxout"},
	"maxout_grad":         {"maxout_grad"},
	"arg":                 {"arg_reduce"},
	"subtensor":           {"ew_strided"},
	"subtensor_grad":      {"cuMemsetD32", "strided_scatter"},
	"bias_relu":           {"bias_relu"},
	"scaled_sub":          {"scaled_sub"},
}

// cpuKinds are the kinds the backend runs on host copies of their inputs
// (their CPU kernel), and why: the declared CPU route. An op core.Spec
// does not describe (kind "", named in Spec's case for such ops) takes
// the same route, for the reason undescribed.
var cpuKinds = map[string]string{
	"scan":      "a generic Scan runs its step function per time step on the CPU (the bricks' LSTM and GRU use the fused sequences)",
	"scan_grad": "a generic Scan's gradient runs on the CPU",
	"random":    "random draws come from the CPU's numpy-exact generator (bit-identical across devices)",
}

// fusedRules are the step rules' fused kernels fused_rule runs, by the
// kernel's name (train/algorithms/kernels.go), with their code.
var fusedRules = map[string]int64{"momentum": 0, "adadelta": 1, "rmsprop": 2, "adagrad": 3, "adam": 4}

// poolModes are core's pooling modes, numbered as kernels.cu's.
var poolModes = map[string]int64{"max": 0, "sum": 1, "average_inc_pad": 2, "average_exc_pad": 3}

// undescribed is why an op core.Spec does not describe runs on the CPU.
const undescribed = "an op core.Spec does not describe"

// notFloat32 is why an op on other dtypes runs on the CPU: the kernels
// are float32 (int64 indices, uint8 truth values).
const notFloat32 = "the kernels are float32 (float64 and integer arithmetic run on the CPU)"

// OnGPU reports whether ops of kind run on the GPU (for float32 data),
// and otherwise why not.
func OnGPU(kind string) (bool, string) {
	if _, ok := gpuRoutes[kind]; ok {
		return true, ""
	}
	if why, ok := cpuKinds[kind]; ok {
		return false, why
	}
	return false, undescribed
}

// RouteTable lists every kind of op with its kernels or "CPU: why", one
// line each, sorted by kind.
func RouteTable() []string {
	var lines []string
	for k, ks := range gpuRoutes {
		lines = append(lines, fmt.Sprintf("%-20s GPU: %s", k, strings.Join(ks, ", ")))
	}
	for k, why := range cpuKinds {
		lines = append(lines, fmt.Sprintf("%-20s CPU: %s", k, why))
	}
	sort.Strings(lines)
	return append(lines, fmt.Sprintf("%-20s CPU: %s", "(no kind)", undescribed), fmt.Sprintf("%-20s CPU: %s", "(any kind)", notFloat32))
}
