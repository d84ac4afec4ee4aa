// Package bench holds the Go benchmarks of whole training steps (go test
// -bench . ./bench/): the models that make bench compares with PyTorch,
// built from the project's bricks, timed per step with their allocations;
// the matrix-multiply limit of every table model's step (BenchmarkProducts), the
// MLP over batch and hidden sizes (BenchmarkMLPScaling) and the recurrent
// models' warm-up (BenchmarkRecurrentWarmup). The command bench/report
// runs them interleaved with PyTorch and writes make bench's tables.
package bench
