package transformers

import (
	"errors"
	"fmt"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// WindowOptions are Window's arguments after data_stream.
type WindowOptions struct {
	Offset, SourceWindow, TargetWindow int
	Overlapping                        bool
	StepSize                           int    // 0: 1
	TargetSource                       string // "": "targets"
}

// Window is Fuel's Window(offset, source_window, target_window,
// overlapping, data_stream, step_size=1, target_source='targets') over an
// example stream with one source of sequences: it yields (source window,
// target window) pairs sliding along each sequence by step_size. The
// target window starts offset after the source window's start
// (overlapping) or after its end (not overlapping); a sequence too short
// for both windows is skipped. The current sequence and the position in
// it are part of the iterator's state.
func Window(stream fuel.Stream, o WindowOptions) (*Transformer, error) {
	return window("Window", stream, o, false)
}

// NGrams is Fuel's NGrams(ngram_order, data_stream,
// target_source='targets'): Window(0, ngram_order, 1, False) whose target
// is the single element following each n-gram (0-d for 1-d sequences).
func NGrams(stream fuel.Stream, ngramOrder int, targetSource string) (*Transformer, error) {
	return window("NGrams", stream, WindowOptions{SourceWindow: ngramOrder, TargetWindow: 1, TargetSource: targetSource}, true)
}

func window(name string, stream fuel.Stream, o WindowOptions, ngrams bool) (*Transformer, error) {
	if err := needExamples(name, stream, true); err != nil {
		return nil, err
	}
	in := stream.Sources()
	if len(in) != 1 {
		return nil, fmt.Errorf("transformers: %s expects only one source, the stream has %d", name, len(in))
	}
	if o.StepSize == 0 {
		o.StepSize = 1
	}
	if o.TargetSource == "" {
		o.TargetSource = "targets"
	}
	if o.SourceWindow < 1 || o.TargetWindow < 1 || o.StepSize < 1 {
		return nil, fmt.Errorf("transformers: %s: source_window, target_window and step_size must be positive, got %d, %d, %d", name, o.SourceWindow, o.TargetWindow, o.StepSize)
	}
	t := &Transformer{name: name, child: stream, sources: []string{in[0], o.TargetSource}, producesExamples: true, numChildSources: 1}
	t.open = func(child fuel.EpochIterator, saved *fuel.IteratorState) (fuel.EpochIterator, error) {
		it := &windowIter{t: t, child: child, o: o, ngrams: ngrams}
		it.setIndex()
		if saved != nil && len(saved.Buffer) > 0 {
			if len(saved.Buffer) != 1 || len(saved.Buffer[0]) != 1 {
				return nil, fmt.Errorf("transformers: %s: the saved state holds %d items, want one sequence", name, len(saved.Buffer))
			}
			seq, err := saved.Buffer[0][0].Array()
			if err != nil {
				return nil, fmt.Errorf("transformers: %s: %w", name, err)
			}
			it.seq, it.index = seq, saved.Index
		}
		return it, nil
	}
	return t, nil
}

type windowIter struct {
	t      *Transformer
	child  fuel.EpochIterator
	o      WindowOptions
	ngrams bool
	seq    *nd.Array // the current sequence; nil before the first
	index  int       // where the next source window starts
}

func (it *windowIter) targetIndex() int {
	i := it.index + it.o.Offset
	if !it.o.Overlapping {
		i += it.o.SourceWindow
	}
	return i
}

func (it *windowIter) endIndex() int {
	return max(it.index+it.o.SourceWindow, it.targetIndex()+it.o.TargetWindow)
}

func (it *windowIter) setIndex() {
	it.index = 0
	it.index = -min(0, it.targetIndex())
}

func (it *windowIter) seqLen() int {
	if it.seq == nil {
		return 0
	}
	return it.seq.Shape[0]
}

func (it *windowIter) Next() ([]*nd.Array, error) {
	for it.endIndex() > it.seqLen() {
		d, err := nextItem(it.t.name, it.child, 1)
		if err != nil {
			return nil, err
		}
		if d[0].NDim() == 0 {
			return nil, errors.New("transformers: " + it.t.name + ": an example is a scalar, not a sequence")
		}
		it.seq = d[0]
		it.setIndex()
	}
	src := it.seq.Slice(it.index, it.index+it.o.SourceWindow).Copy()
	ti := it.targetIndex()
	tgt := it.seq.Slice(ti, ti+it.o.TargetWindow).Copy()
	if it.ngrams {
		tgt = it.seq.Slice(ti, ti+1).Copy()
		tgt.Shape = tgt.Shape[1:]
	}
	it.index += it.o.StepSize
	return []*nd.Array{src, tgt}, nil
}

func (it *windowIter) State() (fuel.IteratorState, error) {
	st, err := it.t.wrapState(it.child)
	if it.seq != nil {
		st.Buffer = []fuel.SavedItem{fuel.SaveItem([]*nd.Array{it.seq})}
		st.Index = it.index
	}
	return st, err
}
