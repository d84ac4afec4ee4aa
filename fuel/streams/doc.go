// Package streams holds Fuel's DataStream: the stream of batches (or
// examples) an iteration scheme requests from a dataset, epoch after
// epoch, and DefaultStream, the same with the dataset's default
// transformers applied (Fuel's DataStream.default_stream).
//
// Each GetEpochIterator call starts a new epoch (a shuffled scheme draws a
// new order); the iterator's Next returns one array per source, in the
// stream's Sources order, and io.EOF at the end of the epoch. With no
// scheme the stream gives the dataset's examples one at a time, in order
// (Fuel's example iteration scheme of an IndexableDataset), and its axis
// labels lose their "batch" axis, as in Fuel.
//
// Streams and their iterators can save and restore their position (see
// fuel.ResumableStream and fuel.StatefulIterator): a DataStream iterator's
// state is its scheme iterator's position. A DataStream over an
// IterableDataset takes no scheme, as in Fuel.
package streams
