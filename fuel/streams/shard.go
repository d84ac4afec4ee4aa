package streams

import (
	"fmt"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

var _ fuel.Sharder = (*DatasetStream)(nil)

// shardState is what a shard of a DataStream reads, and whether it has
// read its first batch.
type shardState struct {
	spec      fuel.Shard
	firstDone bool
}

// Shard is a copy of s that asks the dataset for the rows shard.Rows(n)
// of each batch of n examples the scheme requests (see fuel.Sharder). The
// copy walks the same scheme: its iterator states, its epochs and its
// shuffled orders are s's. An example stream cannot be sharded.
func (s *DatasetStream) Shard(shard *fuel.Shard) (fuel.Stream, bool) {
	if shard == nil || shard.Rows == nil || s.ProducesExamples() {
		return nil, false
	}
	c := *s
	c.shard = &shardState{spec: *shard}
	return &c, true
}

// read gets the data of req: all of it, or on a shard the shard's rows.
func (s *DatasetStream) read(req fuel.Request) ([]*nd.Array, error) {
	sh := s.shard
	if sh == nil || req.Single {
		return s.dataset.GetData(req)
	}
	n := req.Len()
	if sh.spec.Batch != nil {
		sh.spec.Batch(n)
	}
	lo, hi := sh.spec.Rows(n)
	if lo < 0 || hi < lo || hi > n {
		return nil, fmt.Errorf("streams: rows [%d, %d) of a batch of %d examples", lo, hi, n)
	}
	if !sh.firstDone && sh.spec.First != nil {
		whole, err := s.dataset.GetData(req)
		if err != nil {
			return nil, err
		}
		if err := sh.spec.First(whole); err != nil {
			return nil, err
		}
		sh.firstDone = true
		out := make([]*nd.Array, len(whole))
		for i, a := range whole {
			if a.NDim() == 0 || a.Shape[0] != n {
				return nil, fmt.Errorf("streams: source %q has shape %v for a batch of %d examples: a shard cuts the first axis", s.sources[i], a.Shape, n)
			}
			out[i] = a.Slice(lo, hi)
		}
		return out, nil
	}
	sub := fuel.Request{Start: req.Start + lo, Stop: req.Start + hi}
	if req.Indices != nil {
		sub = fuel.Request{Indices: req.Indices[lo:hi:hi]}
	}
	return s.dataset.GetData(sub)
}
