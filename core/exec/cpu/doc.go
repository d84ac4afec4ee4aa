// Package cpu is the CPU backend: the one every build has and every other
// backend is checked against. Importing it registers Backend as the
// backend of device.CPU (core.Compile runs there).
//
// The executor plans a graph once per input-shape signature (shapes from
// the graph's own inference, every buffer allocated once, views aliasing
// their source, elementwise chains fused, updates made in place where
// safe), then runs the plan's steps: each op's CPU kernel (kernel.go: one
// per op type of core, made per node when it keeps scratch), over
// the numeric kernels of core/exec/cpu/kernels (OpenBLAS products, or
// gonum's Go BLAS in the pure-Go build; AVX2 loops each with a portable
// twin computing the same bits; large kernels split across cores with a
// partition that depends on sizes only, so that results are the same bits
// on any machine and under any load).
//
// It sees a function only as core's lowered graph (core.Lowered: numbered
// nodes, each op with its kernel), never core's variables. Its settings
// (Settings, ConfigureFromEnv) are the process's, given by the program.
package cpu
