package fuel

import "github.com/blocks-go/blocks/nd"

// Shard describes the part of every batch one process of a data-parallel
// job reads (docs/distributed.md): the stream still walks the whole
// scheme (its iteration state is the job's, the same on every process),
// but asks the dataset only for some rows of each batch.
type Shard struct {
	// Rows gives the rows [lo, hi) of a batch of n examples to read.
	Rows func(n int) (lo, hi int)
	// Batch, when set, is told the size n of every batch before its rows
	// are read (when the batch is read: a stream that reads ahead, such
	// as MultiProcessing, is not sharded).
	Batch func(n int)
	// First, when set, receives the whole first batch the stream reads
	// (the dataset's arrays, before any transformer), once: the stream
	// reads that batch whole, so that the processes can compare it, and
	// gives its rows. An error stops the reading.
	First func(whole []*nd.Array) error
}

// Sharder is a batch stream that can read only some rows of each batch:
// a DataStream over an indexable dataset with a batch scheme, and the
// transformers that transform a batch row by row (row i of the result
// depends on row i of the input only, with the same bits whichever rows
// are read together: Flatten, ScaleAndShift, Cast, ForceFloatX,
// FilterSources, Rename) over one.
type Sharder interface {
	// Shard returns a stream whose batches are rows shard.Rows(n) of
	// this stream's batches of n examples, with the same sources, and
	// the same iteration state and resumption as this stream's. It
	// returns false when the stream cannot (an example stream, a
	// transformer that is not row by row or that draws random numbers,
	// a stream below that cannot).
	Shard(shard *Shard) (Stream, bool)
}

// ShardStream is s.Shard(shard) when s is a Sharder, else (s, false).
func ShardStream(s Stream, shard *Shard) (Stream, bool) {
	if sh, ok := s.(Sharder); ok {
		if out, ok := sh.Shard(shard); ok {
			return out, true
		}
	}
	return s, false
}
