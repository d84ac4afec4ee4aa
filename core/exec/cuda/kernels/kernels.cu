// Kernels of the CUDA backend (core/exec/cuda), compiled to PTX at build
// time (make build-cuda: nvcc -ptx) and embedded in the binary, so that the
// driver JITs them for whatever GPU runs them.
//
// Conventions, fixed by gorgonia.org/cu's Launch, which copies every
// kernel argument as 8 bytes: every parameter is a pointer, a long long or
// a double. Tensors are float32, contiguous, row-major; an index tensor is
// int64. Every reduction has a fixed order (one block per output, 256
// threads striding, then a fixed tree in shared memory; sums accumulate in
// double as the CPU backend's do), so two runs give the same bits.

#include <math.h>

#define T 256 // threads per block of the reductions

// ---- elementwise -------------------------------------------------------

// The elementwise functions, numbered as core's elemKind (elemwise.go):
// binary 0..12, unary 13..25; 100.. are the backend's own.
enum {
	E_ADD = 0, E_SUB, E_MUL, E_DIV, E_MAXIMUM, E_MINIMUM, E_POW,
	E_LT, E_LE, E_GT, E_GE, E_EQ, E_NEQ,
	E_NEG, E_EXP, E_LOG, E_TANH, E_SIGMOID, E_SOFTPLUS, E_SQR, E_SQRT,
	E_ABS, E_RELU, E_SIGN, E_LOG1P, E_INV,
	E_COPY = 100, E_RELU_GRAD = 101
};

__device__ __forceinline__ float binop(long long op, float a, float b) {
	switch (op) {
	case E_ADD: return a + b;
	case E_SUB: return a - b;
	case E_MUL: return a * b;
	case E_DIV: return a / b;
	case E_MAXIMUM: return (a != a || b != b) ? a + b : fmaxf(a, b);
	case E_MINIMUM: return (a != a || b != b) ? a + b : fminf(a, b);
	case E_POW: return (float)pow((double)a, (double)b);
	case E_LT: return a < b;
	case E_LE: return a <= b;
	case E_GT: return a > b;
	case E_GE: return a >= b;
	case E_EQ: return a == b;
	case E_NEQ: return a != b;
	case E_RELU_GRAD: return a > 0 ? b : 0.0f; // a: the ReLU's output, b: the gradient
	}
	return 0;
}

__device__ __forceinline__ float unop(long long op, float x) {
	switch (op) {
	case E_NEG: return -x;
	case E_EXP: return (float)exp((double)x);
	case E_LOG: return (float)log((double)x);
	case E_TANH: return (float)tanh((double)x);
	case E_SIGMOID: return (float)(1.0 / (1.0 + exp(-(double)x)));
	case E_SOFTPLUS: {
		double d = x;
		return (float)(d > 30 ? d : log1p(exp(d)));
	}
	case E_SQR: return x * x;
	case E_SQRT: return sqrtf(x);
	case E_ABS: return fabsf(x);
	case E_RELU: return x > 0 ? x : 0.0f * x; // NaN stays NaN
	case E_SIGN: return x > 0 ? 1.0f : (x < 0 ? -1.0f : x);
	case E_LOG1P: return (float)log1p((double)x);
	case E_INV: return 1.0f / x;
	case E_COPY: return x;
	}
	return 0;
}

// ew_contig: out[i] = f(a[i*sa], b[i*sb]) for i < n, sa and sb 0 (a
// broadcast scalar) or 1; b is ignored by unary functions.
extern "C" __global__ void ew_contig(float *out, const float *a, long long sa, const float *b, long long sb, long long n, long long op) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		out[i] = op < E_NEG || op == E_RELU_GRAD ? binop(op, a[i * sa], b[i * sb]) : unop(op, a[i * sa]);
	}
}

// ew_strided: the same for any broadcast: meta holds ndim, then the
// output's shape, then a's strides, then b's strides (0 on broadcast axes;
// elements, not bytes).
extern "C" __global__ void ew_strided(float *out, const float *a, const float *b, long long n, long long op, const long long *meta) {
	int nd = (int)meta[0];
	const long long *shape = meta + 1, *stA = meta + 1 + nd, *stB = meta + 1 + 2 * nd;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		long long r = i, ia = 0, ib = 0;
		for (int d = nd - 1; d >= 0; d--) {
			long long c = r % shape[d];
			r /= shape[d];
			ia += c * stA[d];
			ib += c * stB[d];
		}
		out[i] = op < E_NEG || op == E_RELU_GRAD ? binop(op, a[ia], b ? b[ib] : 0.0f) : unop(op, a[ia]);
	}
}

// ew_cmp: a comparison (E_LT .. E_NEQ) written as 0 or 1 bytes (core's
// uint8 truth values), broadcast as ew_strided.
extern "C" __global__ void ew_cmp(unsigned char *out, const float *a, const float *b, long long n, long long op, const long long *meta) {
	int nd = (int)meta[0];
	const long long *shape = meta + 1, *stA = meta + 1 + nd, *stB = meta + 1 + 2 * nd;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		long long r = i, ia = 0, ib = 0;
		for (int d = nd - 1; d >= 0; d--) {
			long long c = r % shape[d];
			r /= shape[d];
			ia += c * stA[d];
			ib += c * stB[d];
		}
		out[i] = binop(op, a[ia], b[ib]) != 0.0f;
	}
}

// ew_switch: out = c ? a : b, c uint8; meta holds ndim, the output's
// shape, then c's, a's and b's strides.
extern "C" __global__ void ew_switch(float *out, const unsigned char *c, const float *a, const float *b, long long n, const long long *meta) {
	int nd = (int)meta[0];
	const long long *shape = meta + 1, *stC = meta + 1 + nd, *stA = meta + 1 + 2 * nd, *stB = meta + 1 + 3 * nd;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		long long r = i, ic = 0, ia = 0, ib = 0;
		for (int d = nd - 1; d >= 0; d--) {
			long long q = r % shape[d];
			r /= shape[d];
			ic += q * stC[d];
			ia += q * stA[d];
			ib += q * stB[d];
		}
		out[i] = c[ic] ? a[ia] : b[ib];
	}
}

// bias_relu: out = relu(x + b), b a row of n broadcast over the rows.
extern "C" __global__ void bias_relu(float *out, const float *x, const float *b, long long size, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < size; i += (long long)gridDim.x * blockDim.x) {
		float v = x[i] + b[i % n];
		out[i] = v > 0 ? v : 0.0f * v;
	}
}

// scaled_sub: out = p - s*g, s a device scalar (SGD's Scale step).
extern "C" __global__ void scaled_sub(float *out, const float *p, const float *s, const float *g, long long n) {
	float k = s[0];
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		out[i] = p[i] - k * g[i];
	}
}

// cast_i64: out = (float)x for int64 x; cast_u8: for uint8 or bool x.
extern "C" __global__ void cast_i64(float *out, const long long *x, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) out[i] = (float)x[i];
}
extern "C" __global__ void cast_u8(float *out, const unsigned char *x, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) out[i] = (float)x[i];
}

// ---- reductions (fixed order) -----------------------------------------

enum { R_SUM = 0, R_MEAN, R_MAX, R_MIN, R_PROD };

__device__ __forceinline__ double rcombine(long long kind, double a, double b) {
	switch (kind) {
	case R_MAX: return (a != a || b != b) ? a + b : fmax(a, b);
	case R_MIN: return (a != a || b != b) ? a + b : fmin(a, b);
	case R_PROD: return a * b;
	}
	return a + b;
}

__device__ __forceinline__ double rinit(long long kind) {
	switch (kind) {
	case R_MAX: return -INFINITY;
	case R_MIN: return INFINITY;
	case R_PROD: return 1;
	}
	return 0;
}

// reduce_strided: one block per output element o. meta: ndo, the kept
// axes' sizes, their strides in x, ndr, the reduced axes' sizes, their
// strides in x. count is the number of reduced elements (the mean divides
// by it). Thread t folds the reduced elements t, t+T, ... in order; the
// block's partial results then combine in a fixed tree.
extern "C" __global__ void reduce_strided(float *out, const float *x, long long kind, long long count, const long long *meta) {
	__shared__ double part[T];
	int ndo = (int)meta[0];
	const long long *oshape = meta + 1, *ostride = meta + 1 + ndo;
	int ndr = (int)meta[1 + 2 * ndo];
	const long long *rshape = meta + 2 + 2 * ndo, *rstride = meta + 2 + 2 * ndo + ndr;
	long long o = blockIdx.x, base = 0, r = o;
	for (int d = ndo - 1; d >= 0; d--) {
		base += (r % oshape[d]) * ostride[d];
		r /= oshape[d];
	}
	double acc = rinit(kind);
	for (long long j = threadIdx.x; j < count; j += T) {
		long long q = j, off = base;
		for (int d = ndr - 1; d >= 0; d--) {
			off += (q % rshape[d]) * rstride[d];
			q /= rshape[d];
		}
		acc = rcombine(kind, acc, (double)x[off]);
	}
	part[threadIdx.x] = acc;
	__syncthreads();
	for (int s = T / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) part[threadIdx.x] = rcombine(kind, part[threadIdx.x], part[threadIdx.x + s]);
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		double v = part[0];
		if (kind == R_MEAN) v /= (double)count;
		out[o] = (float)v;
	}
}

// ---- softmax and the cross-entropy's pick ------------------------------

// softmax_rows: one block per row of n; logsm != 0 for the log-softmax.
extern "C" __global__ void softmax_rows(float *out, const float *x, long long n, long long logsm) {
	__shared__ double part[T];
	const float *xr = x + blockIdx.x * n;
	float *yr = out + blockIdx.x * n;
	double m = -INFINITY;
	for (long long j = threadIdx.x; j < n; j += T) m = fmax(m, (double)xr[j]);
	part[threadIdx.x] = m;
	__syncthreads();
	for (int s = T / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) part[threadIdx.x] = fmax(part[threadIdx.x], part[threadIdx.x + s]);
		__syncthreads();
	}
	m = part[0];
	__syncthreads();
	double sum = 0;
	for (long long j = threadIdx.x; j < n; j += T) sum += exp((double)xr[j] - m);
	part[threadIdx.x] = sum;
	__syncthreads();
	for (int s = T / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
		__syncthreads();
	}
	sum = part[0];
	for (long long j = threadIdx.x; j < n; j += T) {
		double d = (double)xr[j] - m;
		yr[j] = logsm ? (float)(d - log(sum)) : (float)(exp(d) / sum);
	}
}

// softmax_grad_rows: the gradient through a softmax (s its output) or a
// log-softmax, g the incoming gradient; one block per row.
extern "C" __global__ void softmax_grad_rows(float *out, const float *s, const float *g, long long n, long long logsm) {
	__shared__ double part[T];
	const float *sr = s + blockIdx.x * n, *gr = g + blockIdx.x * n;
	float *o = out + blockIdx.x * n;
	double acc = 0;
	for (long long j = threadIdx.x; j < n; j += T) acc += logsm ? (double)gr[j] : (double)gr[j] * (double)sr[j];
	part[threadIdx.x] = acc;
	__syncthreads();
	for (int k = T / 2; k > 0; k >>= 1) {
		if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
		__syncthreads();
	}
	acc = part[0];
	for (long long j = threadIdx.x; j < n; j += T) {
		o[j] = logsm ? gr[j] - (float)(exp((double)sr[j]) * acc) : sr[j] * (gr[j] - (float)acc);
	}
}

// pick: out[i] = x[i, y[i]] (NaN for an index out of range, which the
// CPU backend's check reports); pick_grad: zeros but g[i] at (i, y[i]).
extern "C" __global__ void pick(float *out, const float *x, const long long *y, long long rows, long long k) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows; i += (long long)gridDim.x * blockDim.x) {
		long long j = y[i];
		out[i] = (j < 0 || j >= k) ? NAN : x[i * k + j];
	}
}
extern "C" __global__ void pick_grad(float *out, const long long *y, const float *g, long long rows, long long k) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * k; i += (long long)gridDim.x * blockDim.x) {
		long long r = i / k, j = y[r];
		out[i] = (i % k == j) ? g[r] : 0.0f;
	}
}

// ---- products -----------------------------------------------------------

// gemm_tiled: row-major C (m x n) = op(A) op(B), 16x16 tiles, each
// element summed in k order (float, as BLAS): the backend's product when
// the machine has no cuBLAS.
#define TILE 16
extern "C" __global__ void gemm_tiled(float *c, const float *a, const float *b, long long m, long long n, long long k, long long ta, long long tb) {
	__shared__ float as[TILE][TILE + 1], bs[TILE][TILE + 1];
	long long row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0;
	for (long long t0 = 0; t0 < k; t0 += TILE) {
		long long ka = t0 + threadIdx.x, kb = t0 + threadIdx.y;
		as[threadIdx.y][threadIdx.x] = (row < m && ka < k) ? (ta ? a[ka * m + row] : a[row * k + ka]) : 0.0f;
		bs[threadIdx.y][threadIdx.x] = (kb < k && col < n) ? (tb ? b[col * k + kb] : b[kb * n + col]) : 0.0f;
		__syncthreads();
		for (int q = 0; q < TILE; q++) acc = fmaf(as[threadIdx.y][q], bs[q][threadIdx.x], acc);
		__syncthreads();
	}
	if (row < m && col < n) c[row * n + col] = acc;
}


// ---- convolution and pooling -------------------------------------------
//
// A convolution runs as the CPU backend's does (core/conv_kernels.go): a
// group of m images is unfolded by im2col into k = c·kh·kw rows of m·p
// columns (p = oh·ow, the images side by side), one product with the
// filters (f × k) gives f rows of m·p, and conv_scatter writes them into
// the NCHW output (plus the tied biases). The gradients: conv_gather puts
// gz's (f, p) blocks side by side, a product with the filters' transpose
// gives the columns' gradient, col2im sums it back into the images; and
// the filters' gradient is gz's columns times the images' columns,
// transposed. geom holds c, h, w, kh, kw, sh, sw, ph, pw, oh, ow, flip.

enum { G_C = 0, G_H, G_W, G_KH, G_KW, G_SH, G_SW, G_PH, G_PW, G_OH, G_OW, G_FLIP };

// im2col: col[r, i·p + q] for r = (ci, a, b) and output position q =
// (oy, ox) of image i is the pixel filter entry (a, b) of channel ci meets
// there (entry (kh-1-a, kw-1-b) of the window when the filters are
// flipped); padding reads as zeros. x points at the group's first image.
extern "C" __global__ void im2col(float *col, const float *x, long long m, const long long *geom) {
	long long c = geom[G_C], h = geom[G_H], w = geom[G_W], kh = geom[G_KH], kw = geom[G_KW];
	long long oh = geom[G_OH], ow = geom[G_OW], p = oh * ow, ld = m * p, total = c * kh * kw * ld;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
		long long r = i / ld, rem = i % ld, img = rem / p, q = rem % p;
		long long b = r % kw, a = (r / kw) % kh, ci = r / (kw * kh);
		long long rr = geom[G_FLIP] ? kh - 1 - a : a, ss = geom[G_FLIP] ? kw - 1 - b : b;
		long long y = (q / ow) * geom[G_SH] + rr - geom[G_PH], xx = (q % ow) * geom[G_SW] + ss - geom[G_PW];
		col[i] = (y >= 0 && y < h && xx >= 0 && xx < w) ? x[((img * c + ci) * h + y) * w + xx] : 0.0f;
	}
}

// col2im: the adjoint of im2col for a group of m images: each pixel sums
// the column entries that read it, in the order (a, b) of the filter
// entries (the CPU backend's order), from zero.
extern "C" __global__ void col2im(float *gx, const float *col, long long m, const long long *geom) {
	long long c = geom[G_C], h = geom[G_H], w = geom[G_W], kh = geom[G_KH], kw = geom[G_KW];
	long long sh = geom[G_SH], sw = geom[G_SW], oh = geom[G_OH], ow = geom[G_OW], p = oh * ow, ld = m * p;
	long long total = m * c * h * w;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
		long long xx = i % w, y = (i / w) % h, ci = (i / (w * h)) % c, img = i / (w * h * c);
		float s = 0.0f;
		for (long long a = 0; a < kh; a++) {
			long long rr = geom[G_FLIP] ? kh - 1 - a : a;
			long long ty = y + geom[G_PH] - rr; // = oy·sh
			if (ty < 0 || ty % sh != 0 || ty / sh >= oh) continue;
			long long oy = ty / sh;
			for (long long b = 0; b < kw; b++) {
				long long ss = geom[G_FLIP] ? kw - 1 - b : b;
				long long tx = xx + geom[G_PW] - ss;
				if (tx < 0 || tx % sw != 0 || tx / sw >= ow) continue;
				s += col[((ci * kh + a) * kw + b) * ld + img * p + oy * ow + tx / sw];
			}
		}
		gx[i] = s;
	}
}

// conv_scatter: y (m, f, p), the group's NCHW output, from the product
// tmp (f, m·p), plus bias[f] when bias is not null.
extern "C" __global__ void conv_scatter(float *y, const float *tmp, const float *bias, long long m, long long f, long long p) {
	long long ld = m * p;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m * f * p; i += (long long)gridDim.x * blockDim.x) {
		long long q = i % p, fi = (i / p) % f, img = i / (p * f);
		float v = tmp[fi * ld + img * p + q];
		y[i] = bias ? v + bias[fi] : v;
	}
}

// conv_gather: dst (f, m·p) from the group's gz (m, f, p).
extern "C" __global__ void conv_gather(float *dst, const float *gz, long long m, long long f, long long p) {
	long long ld = m * p;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m * f * p; i += (long long)gridDim.x * blockDim.x) {
		long long q = i % p, fi = (i / p) % f, img = i / (p * f);
		dst[fi * ld + img * p + q] = gz[i];
	}
}

// Pooling (core/pool.go): planes of h × w pooled to oh × ow; geom holds
// h, w, oh, ow, the window (rows, cols), the stride, the padding and the
// mode (0 max, 1 sum, 2 average_inc_pad, 3 average_exc_pad). A window
// along an axis of length n: a = i·stride, b = min(a + size, n + 2·pad),
// image coordinates [max(a, pad) − pad, min(b, n + pad) − pad), and b − a
// the length counting the padding.
enum { P_H = 0, P_W, P_OH, P_OW, P_SZ0, P_SZ1, P_ST0, P_ST1, P_PAD0, P_PAD1, P_MODE };
enum { PM_MAX = 0, PM_SUM, PM_AVG_INC, PM_AVG_EXC };

__device__ __forceinline__ void pspan(long long i, long long n, long long size, long long step, long long pad, long long *lo, long long *hi, long long *inc) {
	long long a = i * step, b = min(a + size, n + 2 * pad);
	*lo = max(a, pad) - pad;
	*hi = min(b, n + pad) - pad;
	*inc = b - a;
}

__device__ __forceinline__ long long pcount(const long long *g, long long rlo, long long rhi, long long rinc, long long clo, long long chi, long long cinc) {
	if (g[P_MODE] == PM_AVG_INC) return rinc * cinc;
	return max(0LL, rhi - rlo) * max(0LL, chi - clo);
}

// pool2d: each output folds its window row by row as the CPU backend does
// (max: the first larger value; sum and averages: float sums in order).
extern "C" __global__ void pool2d(float *out, const float *x, long long planes, const long long *g) {
	long long h = g[P_H], w = g[P_W], oh = g[P_OH], ow = g[P_OW];
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < planes * oh * ow; i += (long long)gridDim.x * blockDim.x) {
		long long pl = i / (oh * ow), oy = (i / ow) % oh, ox = i % ow;
		long long rlo, rhi, rinc, clo, chi, cinc;
		pspan(oy, h, g[P_SZ0], g[P_ST0], g[P_PAD0], &rlo, &rhi, &rinc);
		pspan(ox, w, g[P_SZ1], g[P_ST1], g[P_PAD1], &clo, &chi, &cinc);
		const float *xp = x + pl * h * w;
		float s = g[P_MODE] == PM_MAX ? -INFINITY : 0.0f;
		for (long long r = rlo; r < rhi; r++)
			for (long long cc = clo; cc < chi; cc++) {
				float e = xp[r * w + cc];
				if (g[P_MODE] == PM_MAX) {
					if (e > s) s = e;
				} else {
					s += e;
				}
			}
		if (g[P_MODE] != PM_MAX && g[P_MODE] != PM_SUM) {
			long long n = pcount(g, rlo, rhi, rinc, clo, chi, cinc);
			if (n > 0) s /= (float)n;
		}
		out[i] = s;
	}
}

// pool2d_grad: each input element sums, over the windows holding it in
// the CPU backend's order (rows of windows, then columns), gz where it
// equals the window's maximum (max pooling) or gz over the window's count.
// y is the pooled output (max pooling only).
extern "C" __global__ void pool2d_grad(float *gx, const float *x, const float *y, const float *gz, long long planes, const long long *g) {
	long long h = g[P_H], w = g[P_W], oh = g[P_OH], ow = g[P_OW];
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < planes * h * w; i += (long long)gridDim.x * blockDim.x) {
		long long pl = i / (h * w), r = (i / w) % h, c = i % w;
		// the windows whose padded span [i·step, i·step + size) holds r + pad
		long long r0 = r + g[P_PAD0] - g[P_SZ0] + 1, c0 = c + g[P_PAD1] - g[P_SZ1] + 1;
		r0 = r0 <= 0 ? 0 : (r0 + g[P_ST0] - 1) / g[P_ST0];
		c0 = c0 <= 0 ? 0 : (c0 + g[P_ST1] - 1) / g[P_ST1];
		long long r1 = min(oh - 1, (r + g[P_PAD0]) / g[P_ST0]), c1 = min(ow - 1, (c + g[P_PAD1]) / g[P_ST1]);
		float s = 0.0f;
		for (long long oy = r0; oy <= r1; oy++) {
			long long rlo, rhi, rinc;
			pspan(oy, h, g[P_SZ0], g[P_ST0], g[P_PAD0], &rlo, &rhi, &rinc);
			if (r < rlo || r >= rhi) continue;
			for (long long ox = c0; ox <= c1; ox++) {
				long long clo, chi, cinc;
				pspan(ox, w, g[P_SZ1], g[P_ST1], g[P_PAD1], &clo, &chi, &cinc);
				if (c < clo || c >= chi) continue;
				long long o = (pl * oh + oy) * ow + ox;
				if (g[P_MODE] == PM_MAX) {
					if (x[i] == y[o]) s += gz[o];
				} else {
					float d = gz[o];
					long long n = pcount(g, rlo, rhi, rinc, clo, chi, cinc);
					if (g[P_MODE] != PM_SUM && n > 0) d /= (float)n;
					s += d;
				}
			}
		}
		gx[i] = s;
	}
}

// ---- lookups, copies ----------------------------------------------------

// take: out[i, :] = w[idx[i], :] (rows of row elements); the indices were
// checked on the host.
extern "C" __global__ void take(float *out, const float *w, const long long *idx, long long n, long long row) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n * row; i += (long long)gridDim.x * blockDim.x) {
		out[i] = w[idx[i / row] * row + i % row];
	}
}

// take_grad: gw[j, :] = Σ gz[i, :] over the positions i with idx[i] = j,
// in increasing i (the CPU backend's order): perm lists the positions
// grouped by row, start[j] .. start[j+1] those of row j (made on the host).
extern "C" __global__ void take_grad(float *gw, const float *gz, const long long *perm, const long long *start, long long rows, long long row) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * row; i += (long long)gridDim.x * blockDim.x) {
		long long j = i / row, c = i % row;
		float s = 0.0f;
		for (long long q = start[j]; q < start[j + 1]; q++) s += gz[perm[q] * row + c];
		gw[i] = s;
	}
}

// tile: out[i] = x[i mod n] (RepeatLike).
extern "C" __global__ void tile(float *out, const float *x, long long n, long long total) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) out[i] = x[i % n];
}

// copy2d: rows × cols elements from src (rows ld_src apart) to dst (ld_dst
// apart): concatenation, slices of the last axis and their gradients.
extern "C" __global__ void copy2d(float *dst, long long ldd, const float *src, long long lds, long long rows, long long cols) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * cols; i += (long long)gridDim.x * blockDim.x) {
		long long r = i / cols, c = i % cols;
		dst[r * ldd + c] = src[r * lds + c];
	}
}

// ---- step rules' fused updates ------------------------------------------
//
// The loops of train/algorithms/kernels.go, one thread per element, in
// float arithmetic in the Go loops' order (the PTX is compiled with
// -fmad=false: no product is fused into an addition, as Go does not on
// amd64), the square roots in double as math.Sqrt. out holds the parts
// (n each); f0..f2 the full inputs; s0..s3 the 0-d scalars, each a float
// or, where bit k of dbl is set, a double.

enum { FR_MOMENTUM = 0, FR_ADADELTA, FR_RMSPROP, FR_ADAGRAD, FR_ADAM };

__device__ __forceinline__ float scal(const void *p, long long dbl, int k) {
	if (!p) return 0.0f;
	return (dbl >> k) & 1 ? (float)*(const double *)p : *(const float *)p;
}

__device__ __forceinline__ float gomax(float a, float b) {
	if (a != a || b != b) return NAN;
	return a > b ? a : b;
}

extern "C" __global__ void fused_rule(float *out, const float *f0, const float *f1, const float *f2, const float *s0, const float *s1, const float *s2, const float *s3, long long dbl, long long n, long long rule, double c0) {
	float a = scal(s0, dbl, 0), b = scal(s1, dbl, 1), c = scal(s2, dbl, 2), d = scal(s3, dbl, 3);
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		float g = f0[i];
		switch (rule) {
		case FR_MOMENTUM: // step = m·velocity + previous
			out[i] = a * f1[i] + g;
			break;
		case FR_ADADELTA: { // decay a, eps b
			float ms = a * f1[i] + (1 - a) * g * g;
			float dx = (float)sqrt((double)(f2[i] + b)) / (float)sqrt((double)(ms + b)) * g;
			out[i] = dx;
			out[n + i] = ms;
			out[2 * n + i] = a * f2[i] + (1 - a) * dx * dx;
			break;
		}
		case FR_RMSPROP: { // decay a, eps c0
			float m = a * f1[i] + (1 - a) * g * g;
			out[n + i] = m;
			out[i] = g / gomax((float)sqrt((double)m), (float)c0);
			break;
		}
		case FR_ADAGRAD: { // lr a, eps b
			float q = g * g + f1[i];
			out[n + i] = q;
			out[i] = a * g / ((float)sqrt((double)q) + b);
			break;
		}
		case FR_ADAM: { // lr a, b1 b, b2 c, eps d
			float m = b * f1[i] + (1 - b) * g;
			float v = c * f2[i] + (1 - c) * g * g;
			out[n + i] = m;
			out[2 * n + i] = v;
			out[i] = a * m / ((float)sqrt((double)v) + d);
			break;
		}
		}
	}
}

// ---- fused recurrent sequences (the scan step) -----------------------
//
// core/rnn.go's LSTM and GRU sequences, one launch per time step for the
// elementwise work (core/rnn_kernels.go's expressions, in their order)
// between the steps' products; one thread per (row b, unit j) of the B × d
// state. The packed buffers are laid out as rnn.go's (core.RNNLayout,
// core.RNNGradLayout). mask (T × B) is null without a mask; t is the step's
// input time (iteration step s, or T-1-s for a reversed sequence).

__device__ __forceinline__ float sigmf_(float x) { return (float)(1.0 / (1.0 + exp(-(double)x))); }
__device__ __forceinline__ float tanhf_(float x) { return (float)tanh((double)x); }

// lstm_fwd_step: on entry g (B × 4d) holds h(t-1)·W; x the step's inputs
// (B × 4d), cp and hp the previous cell and state. Writes the activated
// gates [i f c̃ o] into g, the new cell c and state h, tc = tanh(c) before
// the mask.
extern "C" __global__ void lstm_fwd_step(float *g, const float *x, const float *cp, const float *hp, const float *wci, const float *wcf, const float *wco, const float *mask, float *c, float *h, float *tc, long long B, long long d) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < B * d; i += (long long)gridDim.x * blockDim.x) {
		long long b = i / d, j = i % d;
		float *gr = g + b * 4 * d;
		const float *xr = x + b * 4 * d;
		float cpv = cp[i];
		float ai = gr[j] + xr[j], af = gr[d + j] + xr[d + j], ag = gr[2 * d + j] + xr[2 * d + j], ao = gr[3 * d + j] + xr[3 * d + j];
		ai += cpv * wci[j];
		af += cpv * wcf[j];
		float ig = sigmf_(ai), fg = sigmf_(af), cc = tanhf_(ag);
		float cn = fg * cpv;
		cn += ig * cc;
		ao += cn * wco[j];
		float og = sigmf_(ao);
		float t = tanhf_(cn);
		float hn = og * t;
		gr[j] = ig;
		gr[d + j] = fg;
		gr[2 * d + j] = cc;
		gr[3 * d + j] = og;
		tc[i] = t;
		if (mask) {
			float mb = mask[b];
			hn = mb * hn + (1 - mb) * hp[i];
			cn = mb * cn + (1 - mb) * cpv;
		}
		c[i] = cn;
		h[i] = hn;
	}
}

// lstm_bwd_step: dh = dH + carryH and dc = dC + carryC are the gradients
// of the step's (masked) outputs; g, c, tc, cp the forward step's gates,
// new cell, tanh of the unmasked cell, previous cell. Writes the
// pre-activations' gradient da (B × 4d), the previous cell's gradient
// into carryC, the part of the previous state's gradient that does not go
// through W into keep, and the peepholes' terms of each row into pe
// (B × 3d: wci's, wcf's, wco's), which colsum_add sums in row order.
extern "C" __global__ void lstm_bwd_step(float *da, const float *dH, const float *dC, const float *carryH, float *carryC, float *keep, float *pe, const float *g, const float *c, const float *tc, const float *cp, const float *wci, const float *wcf, const float *wco, const float *mask, long long B, long long d) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < B * d; i += (long long)gridDim.x * blockDim.x) {
		long long b = i / d, j = i % d;
		const float *gr = g + b * 4 * d;
		float *dar = da + b * 4 * d;
		float dhn = dH[i] + carryH[i], dcn = dC[i] + carryC[i];
		float keepH = 0, keepC = 0, cn = c[i], cpv = cp[i];
		if (mask) {
			float mb = mask[b];
			keepH = (1 - mb) * dhn;
			keepC = (1 - mb) * dcn;
			dhn = mb * dhn;
			dcn = mb * dcn;
			if (mb != 1) cn = gr[d + j] * cpv + gr[j] * gr[2 * d + j];
		}
		float ig = gr[j], fg = gr[d + j], cc = gr[2 * d + j], og = gr[3 * d + j];
		float t = tc[i];
		float dO = dhn * t;
		float dct = dcn + dhn * og * (1 - t * t);
		float dao = dO * og * (1 - og);
		dct += dao * wco[j];
		float dai = dct * cc * ig * (1 - ig);
		float daf = dct * cpv * fg * (1 - fg);
		float dag = dct * ig * (1 - cc * cc);
		dar[j] = dai;
		dar[d + j] = daf;
		dar[2 * d + j] = dag;
		dar[3 * d + j] = dao;
		carryC[i] = dct * fg + dai * wci[j] + daf * wcf[j] + keepC;
		keep[i] = keepH;
		pe[b * 3 * d + j] = dai * cpv;
		pe[b * 3 * d + d + j] = daf * cpv;
		pe[b * 3 * d + 2 * d + j] = dao * cn;
	}
}

// colsum_add: sums[j] += x[0, j] + x[1, j] + ... (rows × cols, added one
// row after the other, as the CPU backend accumulates).
extern "C" __global__ void colsum_add(float *sums, const float *x, long long rows, long long cols) {
	for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < cols; j += (long long)gridDim.x * blockDim.x) {
		float s = sums[j];
		for (long long r = 0; r < rows; r++) s += x[r * cols + j];
		sums[j] = s;
	}
}

// gru_gates: on entry g (B × 2d) holds h(t-1)·W_g; adds the gate inputs
// xg, applies the sigmoid (update, reset) and writes hr = h(t-1)·r.
extern "C" __global__ void gru_gates(float *g, const float *xg, const float *hp, float *hr, long long B, long long d) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < B * d; i += (long long)gridDim.x * blockDim.x) {
		long long b = i / d, j = i % d;
		float *gr = g + b * 2 * d;
		const float *xr = xg + b * 2 * d;
		float u = sigmf_(gr[j] + xr[j]), r = sigmf_(gr[d + j] + xr[d + j]);
		gr[j] = u;
		gr[d + j] = r;
		hr[i] = hp[i] * r;
	}
}

// gru_fwd_step: on entry n holds (h(t-1)·r)·U; adds the inputs x,
// applies tanh and writes h = n·u + h(t-1)·(1-u), masked.
extern "C" __global__ void gru_fwd_step(float *n, const float *x, const float *g, const float *hp, const float *mask, float *h, long long B, long long d) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < B * d; i += (long long)gridDim.x * blockDim.x) {
		long long b = i / d, j = i % d;
		float nv = tanhf_(n[i] + x[i]);
		n[i] = nv;
		float u = g[b * 2 * d + j];
		float hv = nv * u + hp[i] * (1 - u);
		if (mask) {
			float mb = mask[b];
			hv = mb * hv + (1 - mb) * hp[i];
		}
		h[i] = hv;
	}
}

// gru_bwd_n: from dh = dH + carry (the masked new state's gradient) writes
// the candidate's pre-activation gradient dan, the update gate's
// gradient (first half of dg's rows) and the direct part of the previous
// state's gradient into carry.
extern "C" __global__ void gru_bwd_n(float *dan, float *dg, const float *dH, float *carry, const float *g, const float *n, const float *hp, const float *mask, long long B, long long d) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < B * d; i += (long long)gridDim.x * blockDim.x) {
		long long b = i / d, j = i % d;
		float dn = dH[i] + carry[i], keep = 0;
		if (mask) {
			float mb = mask[b];
			keep = (1 - mb) * dn;
			dn = mb * dn;
		}
		float u = g[b * 2 * d + j], nr = n[i];
		dan[i] = dn * u * (1 - nr * nr);
		dg[b * 2 * d + j] = (dn * nr - dn * hp[i]) * u * (1 - u);
		carry[i] = dn * (1 - u) + keep;
	}
}

// gru_bwd_r: dhr is the gradient of h(t-1)·r; adds its share to carry and
// writes the reset gate's gradient (second half of dg's rows).
extern "C" __global__ void gru_bwd_r(float *dg, const float *dhr, float *carry, const float *g, const float *hp, long long B, long long d) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < B * d; i += (long long)gridDim.x * blockDim.x) {
		long long b = i / d, j = i % d;
		float r = g[b * 2 * d + d + j];
		carry[i] += dhr[i] * r;
		dg[b * 2 * d + d + j] = dhr[i] * hp[i] * r * (1 - r);
	}
}

// reverse_steps: swaps step s's block (size elements) with step
// steps-1-s's: per-step gradients computed in iteration order put back in
// time order after a reversed sequence.
extern "C" __global__ void reverse_steps(float *x, long long steps, long long size) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < steps / 2 * size; i += (long long)gridDim.x * blockDim.x) {
		long long s = i / size, j = i % size;
		float *a = x + s * size + j, *b = x + (steps - 1 - s) * size + j;
		float v = *a;
		*a = *b;
		*b = v;
	}
}

// ---- maxout, argmax, subtensors, integer comparisons -------------------

// maxout: y[i] = the largest of x[i·k .. i·k+k) (the first, then any
// larger: core's order); maxout_grad: gz[i] to every piece equal to it.
extern "C" __global__ void maxout(float *y, const float *x, long long k, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		float m = x[i * k];
		for (long long p = i * k + 1; p < (i + 1) * k; p++)
			if (x[p] > m) m = x[p];
		y[i] = m;
	}
}
extern "C" __global__ void maxout_grad(float *gx, const float *x, const float *y, const float *gz, long long k, long long n) {
	for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n * k; p += (long long)gridDim.x * blockDim.x) {
		long long i = p / k;
		gx[p] = x[p] == y[i] ? gz[i] : 0.0f;
	}
}

// arg_reduce: the index (int64) of the largest (ismax) or smallest element
// along the middle axis of x viewed as (outer, n, inner), ties to the
// first, as core's Argmax; one thread per output.
extern "C" __global__ void arg_reduce(long long *out, const float *x, long long outer, long long n, long long inner, long long ismax) {
	for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < outer * inner; o += (long long)gridDim.x * blockDim.x) {
		long long a = o / inner, c = o % inner, bi = 0;
		double best = 0;
		for (long long i = 0; i < n; i++) {
			double v = x[(a * n + i) * inner + c];
			if (i == 0 || (ismax && v > best) || (!ismax && v < best)) {
				best = v;
				bi = i;
			}
		}
		out[o] = bi;
	}
}

// strided_scatter: dst[Σ c_d·st_d] = src[i] for the i-th position c of
// shape (meta: ndim, the shape, dst's strides): a subtensor's gradient
// (the positions are distinct; dst was cleared).
extern "C" __global__ void strided_scatter(float *dst, const float *src, long long n, const long long *meta) {
	int nd = (int)meta[0];
	const long long *shape = meta + 1, *st = meta + 1 + nd;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		long long r = i, off = 0;
		for (int d = nd - 1; d >= 0; d--) {
			off += (r % shape[d]) * st[d];
			r /= shape[d];
		}
		dst[off] = src[i];
	}
}

// ew_cmp_i64: a comparison (E_LT .. E_NEQ) of int64 arrays, broadcast as
// ew_strided, written as 0 or 1 bytes.
extern "C" __global__ void ew_cmp_i64(unsigned char *out, const long long *a, const long long *b, long long n, long long op, const long long *meta) {
	int nd = (int)meta[0];
	const long long *shape = meta + 1, *stA = meta + 1 + nd, *stB = meta + 1 + 2 * nd;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		long long r = i, ia = 0, ib = 0;
		for (int d = nd - 1; d >= 0; d--) {
			long long c = r % shape[d];
			r /= shape[d];
			ia += c * stA[d];
			ib += c * stB[d];
		}
		long long x = a[ia], y = b[ib];
		unsigned char v = 0;
		switch (op) {
		case E_LT: v = x < y; break;
		case E_LE: v = x <= y; break;
		case E_GT: v = x > y; break;
		case E_GE: v = x >= y; break;
		case E_EQ: v = x == y; break;
		case E_NEQ: v = x != y; break;
		}
		out[i] = v;
	}
}
