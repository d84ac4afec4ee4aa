// Package cpu is the CPU executor: the backend every build has and every
// other backend is checked against (core.CPUBackend runs a function's
// graph here).
//
// The executor plans a graph once per input-shape signature (shapes from
// the graph's own inference, every buffer allocated once, views aliasing
// their source, elementwise chains fused, updates made in place where
// safe), then runs the plan's steps: each op's CPU kernel (Op.Run), over
// the numeric kernels of core/exec/cpu/kernels (OpenBLAS products, or
// gonum's Go BLAS in the pure-Go build; AVX2 loops each with a portable
// twin computing the same bits; large kernels split across cores with a
// partition that depends on sizes only, so that results are the same bits
// on any machine and under any load).
//
// It knows nothing of core's variables: core describes a function to it
// as a Graph of numbered nodes, each op with its kernel. Its settings
// (Settings, ConfigureFromEnv) are the process's, given by the program.
package cpu
