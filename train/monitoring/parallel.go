package monitoring

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/parallel"
)

// SetComm makes Evaluate share the batches among the processes of comm
// (data-parallel training, docs/distributed.md): every process reads the
// stream, process r computes the batches i with i mod N = r, the values
// the aggregators need are gathered, and every process aggregates all of
// them in batch order, so the results are those of one process, bit for
// bit. An evaluator with updates or random draws (every process then
// draws the same numbers in the same order), or nil or a one-process
// comm, computes every batch itself.
func (e *DatasetEvaluator) SetComm(comm parallel.Comm) { e.comm = comm }

func (e *DatasetEvaluator) split() bool {
	return e.comm != nil && e.comm.Size() > 1 && len(e.updates) == 0 && !e.random && e.fn != nil
}

// evaluateSplit is Evaluate with the batches shared among processes.
func (e *DatasetEvaluator) evaluateSplit(stream fuel.Stream) (map[string]*nd.Array, error) {
	e.InitializeAggregators()
	it, err := stream.GetEpochIterator()
	if err != nil {
		return nil, err
	}
	fuel.Lend(it) // each batch is released once evaluated
	sources := stream.Sources()
	n, rank := e.comm.Size(), e.comm.Rank()
	var mine []byte
	batches := 0
	for ; ; batches++ {
		data, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if batches%n == rank {
			batch, err := BatchMap(sources, data)
			if err != nil {
				return nil, err
			}
			args, err := algorithms.MatchSources(e.inputs, batch, algorithms.UnusedSourcesIgnore, "monitoring", e.args, nil)
			if err != nil {
				return nil, err
			}
			e.args = args
			vals, err := e.fn.CallView(args)
			if err != nil {
				return nil, algorithms.ExplainInputError(err, e.inputs, args)
			}
			mine = binary.LittleEndian.AppendUint64(mine, uint64(batches))
			if mine, err = parallel.AppendArrays(mine, vals); err != nil {
				return nil, fmt.Errorf("monitoring: %w", err)
			}
		}
		for _, a := range data {
			a.Release()
		}
	}
	all, err := parallel.GatherBytes(e.comm, mine)
	if err != nil {
		return nil, fmt.Errorf("monitoring: %w", err)
	}
	values := make([][]*nd.Array, batches)
	for r, b := range all {
		for len(b) > 0 {
			if len(b) < 8 {
				return nil, fmt.Errorf("monitoring: a truncated message from process %d", r)
			}
			i := int(binary.LittleEndian.Uint64(b))
			vals, rest, err := parallel.ReadArrays(b[8:])
			if err != nil {
				return nil, fmt.Errorf("monitoring: from process %d: %w", r, err)
			}
			if i >= batches || values[i] != nil {
				return nil, fmt.Errorf("monitoring: process %d read batch %d of an epoch of %d batches here: the processes read different data", r, i, batches)
			}
			values[i] = vals
			b = rest
		}
	}
	for i, v := range values {
		if v == nil {
			return nil, fmt.Errorf("monitoring: no process computed batch %d: the processes read different data", i)
		}
		if err := e.buffer.Aggregate(v); err != nil {
			return nil, err
		}
	}
	return e.GetAggregatedValues()
}
