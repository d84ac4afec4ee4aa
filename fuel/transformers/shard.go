package transformers

import "github.com/blocks-go/blocks/fuel"

// rowwise are the transformers whose result on a batch is, row for row,
// their result on any set of its rows, to the bit: elementwise arithmetic
// and conversions done one element at a time, reshapes of each row, and
// choices or renamings of sources.
var rowwise = map[string]bool{
	"Flatten":       true,
	"ScaleAndShift": true,
	"Cast":          true,
	"ForceFloatX":   true,
	"FilterSources": true,
	"Rename":        true,
}

var _ fuel.Sharder = (*Transformer)(nil)

// Shard is a copy of t over the shard of the stream it reads (see
// fuel.Sharder), when t transforms batches row by row without random
// draws and that stream can be sharded. The copy reports the same
// iterator states and resumes from them as t does.
func (t *Transformer) Shard(shard *fuel.Shard) (fuel.Stream, bool) {
	if !rowwise[t.name] || t.producesExamples || t.open != nil || t.rng != nil {
		return nil, false
	}
	sub, ok := fuel.ShardStream(t.input(), shard)
	if !ok {
		return nil, false
	}
	c := *t
	if t.iterated != nil {
		c.iterated = sub
	} else {
		c.child = sub
	}
	return &c, true
}
