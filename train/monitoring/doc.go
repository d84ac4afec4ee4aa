// Package monitoring computes monitored quantities over batches (Blocks'
// blocks/monitoring): aggregation schemes (Mean, Perplexity, TakeLast,
// Minimum, Maximum, Concatenate) and the helpers that tag a variable with
// one (MeanOf, TakeLastOf, ...), the AggregationBuffer that aggregates the
// values of named variables, and the DatasetEvaluator that computes them
// over an epoch of a Fuel stream.
//
// A variable monitored without a scheme is, when it depends on data,
// averaged over batches without weights (Blocks' Mean(v, 1)): with batches
// of 2, 2 and 1 examples the three batch values count equally. Use MeanOf
// with a batch-size denominator for a per-example mean.
//
// Per-batch values are computed by one compiled core.Function (the
// evaluator's, or the training function through a hook); aggregation
// happens on the host, in the dtype Theano's accumulators would have
// (float32 values are summed in float32).
package monitoring
