// Package transformers holds Fuel's transformers: streams that wrap a
// stream and change each batch (or example) on the fly — Flatten,
// ScaleAndShift, Cast, ForceFloatX, Mapping, FilterSources and Rename —
// with Fuel's semantics, argument order and defaults.
//
// Every constructor returns a *Transformer, which implements fuel.Stream
// and fuel.ResumableStream. A sourcewise transformer's whichSources
// selects the sources it changes: nil means every source (Fuel's
// which_sources=None), an empty non-nil slice none, and names the stream
// does not provide are ignored, as in Fuel. Axis labels follow Fuel: each
// transformer copies, adapts or (Mapping) drops the wrapped stream's.
//
// Results are new arrays, except Flatten's reshapes, which share the
// input's data; no transformer modifies its input.
//
// Dtypes follow numpy: see ScaleAndShift for how a uint8 source becomes
// float64 before Cast('floatX') makes it float32, as in Fuel's MNIST
// pipeline.
//
// Spec and Apply describe transformers as data, for datasets' default
// transformers (Fuel's default_transformers).
package transformers
