// Package schemes holds Fuel's iteration schemes: what a data stream asks
// its dataset for, request after request, in one epoch.
//
// A Scheme gives a new RequestIterator per epoch (Fuel's
// get_request_iterator). Batch schemes (SequentialScheme, ShuffledScheme)
// give batch requests: consecutive chunks of batch_size examples of the
// epoch's order, the last one shorter when batch_size does not divide the
// number of examples (Fuel's partition_all). Example schemes
// (SequentialExampleScheme, ShuffledExampleScheme) give Single requests,
// one example each. ConstantScheme gives batch sizes, not examples, so it
// has its own iterator type (BatchSizeIterator): it drives transformers
// that batch a stream of examples, not an indexable dataset.
//
// `examples` is Fuel's argument of the same name: Range(n) for range(n),
// or List(indices) for explicit indices.
//
// Shuffled schemes draw the epoch's order with rng.shuffle(list(indices))
// at the start of each epoch, with numpy's RandomState (numpyrand), so the
// orders are Fuel's; without an rng they get Fuel's default,
// RandomState(config.default_seed = 1). See Shuffler and DefaultRNG.
//
// ConcatenatedScheme chains schemes; CrossValidation is Fuel's
// cross_validation.
//
// Every request iterator reports its position (fuel.RequestPosition: the
// epoch's order when it was drawn, the number of requests given, and the
// generator's state right after the draw) and the scheme that made it
// rebuilds it from that position with RestoreRequestIterator, drawing
// nothing and setting its generator to the saved state, so that the next
// epoch's shuffle is the one the uninterrupted run draws.
package schemes
