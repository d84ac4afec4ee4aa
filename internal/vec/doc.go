// Package vec holds inner loops that the Go compiler does not vectorize,
// written with AVX2 on amd64 and in portable Go everywhere else. Each
// kernel computes exactly what its portable version computes, bit for bit
// (no fused multiply-add where the portable code rounds in between), so a
// result never depends on the machine that produced it.
package vec
