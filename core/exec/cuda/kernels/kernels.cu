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

// im2col: the (c*kh*kw) x (oh*ow) patch matrix of image img (c x h x w)
// for a valid convolution with strides (sh, sw); a product with the
// filters (f x c*kh*kw) then gives the f x oh x ow output.
extern "C" __global__ void im2col(float *col, const float *img, long long c, long long h, long long w, long long kh, long long kw, long long sh, long long sw, long long oh, long long ow) {
	long long total = c * kh * kw * oh * ow;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
		long long p = i % (oh * ow), r = i / (oh * ow);
		long long oy = p / ow, ox = p % ow;
		long long kx = r % kw, ky = (r / kw) % kh, ch = r / (kw * kh);
		col[i] = img[(ch * h + oy * sh + ky) * w + ox * sw + kx];
	}
}

// maxpool2d: non-overlapping (ph x pw) max pooling of n planes of h x w
// (ignore_border: the last partial window is dropped); maxpool2d_grad
// routes each gradient to the first maximum of its window, as the CPU
// backend does.
extern "C" __global__ void maxpool2d(float *out, const float *x, long long planes, long long h, long long w, long long ph, long long pw, long long oh, long long ow) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < planes * oh * ow; i += (long long)gridDim.x * blockDim.x) {
		long long pl = i / (oh * ow), oy = (i / ow) % oh, ox = i % ow;
		const float *p = x + pl * h * w;
		float m = -INFINITY;
		for (long long dy = 0; dy < ph; dy++)
			for (long long dx = 0; dx < pw; dx++) {
				long long y = oy * ph + dy, xx = ox * pw + dx;
				if (y < h && xx < w) {
					float v = p[y * w + xx];
					if (v > m || v != v) m = v;
				}
			}
		out[i] = m;
	}
}
extern "C" __global__ void maxpool2d_grad(float *gx, const float *x, const float *y, const float *gy, long long planes, long long h, long long w, long long ph, long long pw, long long oh, long long ow) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < planes * h * w; i += (long long)gridDim.x * blockDim.x) {
		long long pl = i / (h * w), yy = (i / w) % h, xx = i % w;
		long long oy = yy / ph, ox = xx / pw;
		float g = 0;
		if (oy < oh && ox < ow) {
			long long o = (pl * oh + oy) * ow + ox;
			const float *p = x + pl * h * w;
			// the first position of the window holding the maximum
			long long first = -1;
			for (long long dy = 0; dy < ph && first < 0; dy++)
				for (long long dx = 0; dx < pw; dx++) {
					long long y2 = oy * ph + dy, x2 = ox * pw + dx;
					if (y2 < h && x2 < w && p[y2 * w + x2] == y[o]) { first = y2 * w + x2; break; }
				}
			if (first == yy * w + xx) g = gy[o];
		}
		gx[i] = g;
	}
}

// ---- recurrent steps ----------------------------------------------------

__device__ __forceinline__ float sigm(float x) { return (float)(1.0 / (1.0 + exp(-(double)x))); }

// lstm_cell: one LSTM step for a batch: pre (b x 4n) holds the gate
// pre-activations in Blocks' order (input, forget, cell, output); c0 the
// previous cells; writes the new cells c and hidden states h.
extern "C" __global__ void lstm_cell(float *h, float *c, const float *pre, const float *c0, long long batch, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < batch * n; i += (long long)gridDim.x * blockDim.x) {
		long long r = i / n, j = i % n;
		const float *p = pre + r * 4 * n;
		float ig = sigm(p[j]), fg = sigm(p[n + j]), cc = (float)tanh((double)p[2 * n + j]), og = sigm(p[3 * n + j]);
		float cn = fg * c0[i] + ig * cc;
		c[i] = cn;
		h[i] = og * (float)tanh((double)cn);
	}
}

// gru_cell: one GRU step: zr (b x 2n) the update and reset gates'
// pre-activations, hc (b x n) the candidate's pre-activation, h0 the
// previous state.
extern "C" __global__ void gru_cell(float *h, const float *zr, const float *hc, const float *h0, long long batch, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < batch * n; i += (long long)gridDim.x * blockDim.x) {
		long long r = i / n, j = i % n;
		float z = sigm(zr[r * 2 * n + j]);
		float cand = (float)tanh((double)hc[i]);
		h[i] = z * cand + (1 - z) * h0[i];
	}
}

// ---- step rules' fused updates ------------------------------------------

// adam: Blocks' Adam step for one parameter (m, v updated in place; step
// written to out): lr the step's learning rate with its bias correction
// already applied.
extern "C" __global__ void adam(float *out, float *m, float *v, const float *g, long long n, double lr, double b1, double b2, double eps) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		float mi = (float)(b1 * m[i] + (1 - b1) * g[i]);
		float vi = (float)(b2 * v[i] + (1 - b2) * (double)g[i] * g[i]);
		m[i] = mi;
		v[i] = vi;
		out[i] = (float)(lr * mi / (sqrt((double)vi) + eps));
	}
}

// momentum: v = mom*v - lr*g (in place); out = v.
extern "C" __global__ void momentum(float *out, float *v, const float *g, long long n, double lr, double mom) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		float vi = (float)(mom * v[i] - lr * g[i]);
		v[i] = vi;
		out[i] = vi;
	}
}
