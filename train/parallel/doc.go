// Package parallel is data parallelism over MPI: a thin cgo binding to
// MPI's C API (Open MPI from Debian's libopenmpi-dev) and the reduction
// that makes a training step's gradient the same bits on any number of
// processes.
//
// The step's global batch is cut into K microbatches. The gradient (and
// every other data-dependent value of the step) is the sum of the K
// microbatch values in one canonical order: a binary tree over the
// microbatch index in which the node [lo, hi) splits at lo plus the largest
// power of two below hi-lo (see Tree). With N processes, process r
// computes the contiguous block of microbatches [r*K/N, (r+1)*K/N), which
// must be a node of that tree (K a multiple of N, the block a subtree:
// Plan checks it). It sums its block along the tree, then the processes
// exchange chunks of their partial sums (MPI_Alltoall), each reduces its
// chunk over the processes along the upper levels of the same tree and
// the chunks are gathered back (MPI_Allgather). Floating-point addition is
// elementwise, so cutting the vectors into chunks changes no bit: one
// process computing the K microbatches in sequence, two processes or four
// all add the same numbers in the same order.
//
// A Comm is the set of processes. World returns MPI's world when the
// process was started by mpirun or srun (and Single otherwise: without
// MPI in the environment nothing changes); NewLocalGroup makes an
// in-process group of goroutines that behaves like N processes, for tests.
package parallel
