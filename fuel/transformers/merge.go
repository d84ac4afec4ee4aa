package transformers

import (
	"errors"
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// MergeStream is Fuel's Merge: the items of several streams side by side.
type MergeStream struct {
	streams    []fuel.Stream
	sources    []string
	axisLabels map[string][]string
	examples   bool
}

var _ fuel.ResumableStream = (*MergeStream)(nil)

// Components are the merged streams (fuel.Composite).
func (m *MergeStream) Components() []any {
	out := make([]any, len(m.streams))
	for i, s := range m.streams {
		out[i] = s
	}
	return out
}

// Merge is Fuel's Merge(data_streams, sources, axis_labels=None): each
// item is the concatenation of one item of every stream, named by
// sources (as many as the streams' sources together). The streams must
// all produce examples or all batches; the epoch ends when one of them
// ends.
func Merge(streams []fuel.Stream, sources []string, axisLabels map[string][]string) (*MergeStream, error) {
	if len(streams) == 0 {
		return nil, errors.New("transformers: Merge: no data streams")
	}
	total := 0
	for i, s := range streams {
		if s == nil {
			return nil, fmt.Errorf("transformers: Merge: data stream %d is None", i)
		}
		if s.ProducesExamples() != streams[0].ProducesExamples() {
			return nil, errors.New("transformers: Merge: all data streams must produce the same type of outputs (batches or examples)")
		}
		total += len(s.Sources())
	}
	if total != len(sources) {
		return nil, fmt.Errorf("transformers: Merge: wrong number of sources given: %d for streams with %d sources", len(sources), total)
	}
	return &MergeStream{streams: slices.Clone(streams), sources: slices.Clone(sources),
		axisLabels: fuel.CloneAxisLabels(axisLabels), examples: streams[0].ProducesExamples()}, nil
}

// Sources are the names given to Merge.
func (m *MergeStream) Sources() []string { return slices.Clone(m.sources) }

// AxisLabels are those given to Merge.
func (m *MergeStream) AxisLabels() map[string][]string { return fuel.CloneAxisLabels(m.axisLabels) }

// ProducesExamples is that of the merged streams.
func (m *MergeStream) ProducesExamples() bool { return m.examples }

// GetEpochIterator starts an epoch of every stream.
func (m *MergeStream) GetEpochIterator() (fuel.EpochIterator, error) {
	its := make([]fuel.EpochIterator, len(m.streams))
	for i, s := range m.streams {
		var err error
		if its[i], err = s.GetEpochIterator(); err != nil {
			return nil, fmt.Errorf("transformers: Merge: stream %d: %w", i, err)
		}
	}
	return &mergeIter{m: m, its: its}, nil
}

// ResumeEpochIterator resumes every stream at its saved state.
func (m *MergeStream) ResumeEpochIterator(state fuel.IteratorState) (fuel.EpochIterator, error) {
	if len(state.Children) != len(m.streams) {
		return nil, fmt.Errorf("transformers: Merge: the saved state has %d stream states, the Merge %d streams", len(state.Children), len(m.streams))
	}
	its := make([]fuel.EpochIterator, len(m.streams))
	for i, s := range m.streams {
		rs, ok := s.(fuel.ResumableStream)
		if !ok {
			return nil, fmt.Errorf("transformers: Merge: stream %d (%T) cannot resume an epoch", i, s)
		}
		var err error
		if its[i], err = rs.ResumeEpochIterator(state.Children[i]); err != nil {
			return nil, fmt.Errorf("transformers: Merge: stream %d: %w", i, err)
		}
	}
	return &mergeIter{m: m, its: its}, nil
}

type mergeIter struct {
	m   *MergeStream
	its []fuel.EpochIterator
}

func (it *mergeIter) Next() ([]*nd.Array, error) {
	var out []*nd.Array
	for i, c := range it.its {
		d, err := nextItem("Merge", c, len(it.m.streams[i].Sources()))
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	return out, nil
}

func (it *mergeIter) State() (fuel.IteratorState, error) {
	st := fuel.IteratorState{Children: make([]fuel.IteratorState, len(it.its))}
	for i, c := range it.its {
		si, ok := c.(fuel.StatefulIterator)
		if !ok {
			return fuel.IteratorState{}, fmt.Errorf("transformers: Merge: stream %d's iterator (%T) cannot report its position", i, c)
		}
		var err error
		if st.Children[i], err = si.State(); err != nil {
			return fuel.IteratorState{}, err
		}
	}
	return st, nil
}
