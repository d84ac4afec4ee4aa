// Package bench holds the Go benchmarks of whole training steps (go test
// -bench ./bench/): the models that make bench compares with PyTorch,
// built from the project's bricks, timed per step with their allocations.
package bench
