// Package transformers holds Fuel's transformers: streams that wrap a
// stream and change its items on the fly, with Fuel's semantics, argument
// order and defaults:
//
//   - per source: Flatten, ScaleAndShift, Cast, ForceFloatX;
//   - per item: Mapping (with SortMapping), Filter, FilterSources, Rename,
//     Padding (adds <source>_mask);
//   - regrouping: Batch (strictness 0/1/2), Unpack, Cache;
//   - several streams: Merge; prefetching: MultiProcessing (a goroutine);
//   - fuel.transformers.image: ImagesFromBytes, MinimumImageDimensions,
//     RandomFixedSizeCrop, Random2DRotation;
//   - fuel.transformers.sequences: Window, NGrams.
//
// Every constructor returns a *Transformer (Merge a *MergeStream), which
// implements fuel.Stream and fuel.ResumableStream. A sourcewise
// transformer's whichSources selects the sources it changes: nil means
// every source (Fuel's which_sources=None), an empty non-nil slice none,
// and names the stream does not provide are ignored, as in Fuel. Axis
// labels follow Fuel: each transformer copies, adapts or drops the wrapped
// stream's. A sourcewise transformer given a ragged batch (an object
// array, see nd.Objects) applies to each of its examples.
//
// Results are new arrays, except Flatten's reshapes, which share the
// input's data; no transformer modifies its input.
//
// Dtypes follow numpy: see ScaleAndShift for how a uint8 source becomes
// float64 before Cast('floatX') makes it float32, as in Fuel's MNIST
// pipeline. A Cast over a ScaleAndShift does both in one pass with the
// same results (see fuseCast).
//
// Resuming: every iterator is a fuel.StatefulIterator whose state holds
// what the transformer needs beyond its child's state: a batch-size
// position (Batch, Cache), buffered examples (Unpack, Cache, Window), the
// generator of a random transformer (RandomFixedSizeCrop,
// Random2DRotation). ResumeEpochIterator, on a freshly built pipeline,
// continues with bit-identical items; the generators are restored too, so
// later epochs agree as well.
//
// Spec and Apply describe transformers as data, for datasets' default
// transformers (Fuel's default_transformers).
package transformers
