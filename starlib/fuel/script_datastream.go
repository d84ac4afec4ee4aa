package fuel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// scriptDataStream is Fuel's DataStream over a dataset whose class a
// script defines with its own state (a Dataset subclass, or an
// IndexableDataset or IterableDataset subclass that defines open,
// get_data, next_epoch, reset or close): as Fuel's DataStream it calls
// open() when made and keeps what it returns (data_state), gives it to
// get_data(state, request) with each request of the scheme (None without
// one: the dataset decides when the epoch ends), and moves it on with
// next_epoch(state) when an epoch starts after the first (reset(state)
// and close(state) when the script calls the stream's). An epoch ends
// when the scheme's requests do, or when get_data returns StopIteration.
// Its position in an epoch is the scheme's and the state, encoded as a
// checkpoint encodes script objects' attributes (starlib.EncodeData), so a
// checkpoint taken mid-epoch resumes bit for bit when the state is data.
type scriptDataStream struct {
	thread *starlark.Thread
	ds     *Dataset
	// scheme is the index scheme, sizes the batch-size scheme
	// (ConstantScheme, a BatchSizeScheme subclass): at most one is set.
	scheme schemes.Scheme
	sizes  schemes.BatchSizeScheme
	state  starlark.Value // data_state
	fresh  bool
	// schemeValue is the iteration_scheme as the script gave it.
	schemeValue starlark.Value
	labels      map[string][]string
}

var (
	_ fuel.ResumableStream = (*scriptDataStream)(nil)
	_ fuel.Composite       = (*scriptDataStream)(nil)
	_ fuel.Stateful        = (*scriptDataStream)(nil)
)

// hasOwnState reports whether a script dataset's stream is a
// scriptDataStream: a Dataset subclass, or a subclass of a built-in
// dataset that defines one of the state methods.
func (d *Dataset) hasOwnState() bool {
	if d.st == nil {
		return false
	}
	if _, ok := d.D.(*scriptDataset); ok {
		return true
	}
	for _, n := range []string{"open", "get_data", "next_epoch", "reset", "close"} {
		if v, _ := d.st.Class.Lookup(n); v != nil {
			return true
		}
	}
	return false
}

// newScriptDataStream is DataStream(dataset, iteration_scheme=scheme) for
// such a dataset: scheme is None, an index scheme or a batch-size scheme.
func newScriptDataStream(thread *starlark.Thread, name string, ds *Dataset, scheme starlark.Value) (*Stream, error) {
	if ds.D == nil {
		// A subclass whose __init__ did not call its base's (Fuel's
		// test_data_driven_epochs): a Dataset of its own attributes
		// (sources, axis_labels, num_examples).
		ds.D = &scriptDataset{thread: thread, self: ds}
	}
	s := &scriptDataStream{thread: thread, ds: ds, fresh: true, schemeValue: scheme}
	switch sv := scheme.(type) {
	case starlark.NoneType:
	case *ConstantSchemeValue:
		s.sizes = sv.S
	case *SchemeValue:
		if bs, ok := sv.S.(schemes.BatchSizeScheme); ok {
			s.sizes = bs
		} else {
			s.scheme = sv.S
		}
	default:
		return nil, fmt.Errorf("%s: iteration_scheme must be a scheme from fuel.schemes, got %s", name, scheme.Type())
	}
	if labels := ds.D.AxisLabels(); len(labels) > 0 {
		s.labels = make(map[string][]string, len(labels))
		for src, l := range labels {
			if s.ProducesExamples() && l != nil {
				l = slices.DeleteFunc(slices.Clone(l), func(x string) bool { return x == "batch" })
			}
			s.labels[src] = l
		}
	}
	st, err := s.call("open")
	if err != nil {
		return nil, err
	}
	s.state = st
	return &Stream{S: s, Name: "DataStream"}, nil
}

func (s *scriptDataStream) Sources() []string { return s.ds.D.Sources() }
func (s *scriptDataStream) AxisLabels() map[string][]string {
	return fuel.CloneAxisLabels(s.labels)
}

// ProducesExamples is true without a scheme (Fuel's DataStream), else the
// scheme's.
func (s *scriptDataStream) ProducesExamples() bool {
	switch {
	case s.scheme != nil:
		return s.scheme.RequestsExamples()
	case s.sizes != nil:
		return s.sizes.RequestsExamples()
	}
	return true
}

// Components are the scheme and the dataset (fuel.Composite: a
// checkpoint finds a shuffled scheme's generator).
func (s *scriptDataStream) Components() []any {
	if s.scheme != nil {
		return []any{s.scheme, s.ds.D}
	}
	return []any{s.sizes, s.ds.D}
}

// call calls the dataset's method name with args (its own override, else
// its base's), on the stream's thread.
func (s *scriptDataStream) call(name string, args ...starlark.Value) (starlark.Value, error) {
	m, err := s.ds.Attr(name)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%s has no %s", s.ds.name, name)
	}
	return starlark.Call(callThread(s.thread, s.ds.name+"."+name), m, starlark.Tuple(args), nil)
}

// advance is Fuel's DataStream.next_epoch, reset and close: the state
// becomes what the dataset's method returns; reset makes the stream fresh
// (its next epoch takes the state as it is).
func (s *scriptDataStream) advance(name string) error {
	st, err := s.call(name, s.state)
	if err != nil {
		return err
	}
	s.state = st
	if name == "reset" {
		s.fresh = true
	}
	return nil
}

// GetEpochIterator moves the state to the next epoch (not for the first
// epoch, nor after reset) and starts the scheme's epoch.
func (s *scriptDataStream) GetEpochIterator() (fuel.EpochIterator, error) {
	if !s.fresh {
		if err := s.advance("next_epoch"); err != nil {
			return nil, err
		}
	}
	s.fresh = false
	it := &scriptDataIter{s: s}
	var err error
	switch {
	case s.scheme != nil:
		it.requests, err = s.scheme.GetRequestIterator()
	case s.sizes != nil:
		it.sizes, err = s.sizes.GetBatchSizeIterator()
	}
	if err != nil {
		return nil, err
	}
	return it, nil
}

// ResumeEpochIterator continues the epoch at state: the scheme's position
// and the data state as they were.
func (s *scriptDataStream) ResumeEpochIterator(state fuel.IteratorState) (fuel.EpochIterator, error) {
	if state.Requests == nil || state.Data == nil {
		return nil, fmt.Errorf("DataStream over %s: the saved position is not this stream's (no request position or no data state)", s.ds.name)
	}
	st, err := starlib.DecodeData(state.Data, s.ds.name+" data state")
	if err != nil {
		return nil, err
	}
	it := &scriptDataIter{s: s, served: state.Requests.Next}
	switch {
	case s.scheme != nil:
		it.requests, err = s.scheme.RestoreRequestIterator(*state.Requests)
	case s.sizes != nil:
		it.sizes, err = s.sizes.RestoreBatchSizeIterator(*state.Requests)
	}
	if err != nil {
		return nil, err
	}
	s.state, s.fresh = st, false
	return it, nil
}

// savedStream is a scriptDataStream's state between epochs.
type savedStream struct {
	State json.RawMessage `json:"state"`
	Fresh bool            `json:"fresh"`
}

// SaveState is the data state and whether the next epoch takes it as it
// is (fuel.Stateful: a checkpoint between epochs saves it).
func (s *scriptDataStream) SaveState() (json.RawMessage, error) {
	st, err := starlib.EncodeData(s.state, fmt.Sprintf("the state %s.open() returned", s.ds.name))
	if err != nil {
		return nil, err
	}
	return json.Marshal(savedStream{State: st, Fresh: s.fresh})
}

// RestoreState decodes what SaveState saved.
func (s *scriptDataStream) RestoreState(saved json.RawMessage) (func(), error) {
	var sv savedStream
	if err := json.Unmarshal(saved, &sv); err != nil {
		return nil, fmt.Errorf("DataStream over %s: %v", s.ds.name, err)
	}
	st, err := starlib.DecodeData(sv.State, s.ds.name+" data state")
	if err != nil {
		return nil, err
	}
	return func() { s.state, s.fresh = st, sv.Fresh }, nil
}

// scriptDataIter is one epoch of a scriptDataStream.
type scriptDataIter struct {
	s        *scriptDataStream
	requests schemes.RequestIterator
	sizes    schemes.BatchSizeIterator
	served   int
	done     bool
}

var _ fuel.StatefulIterator = (*scriptDataIter)(nil)

// Next asks get_data(state, request) for the next item.
func (it *scriptDataIter) Next() ([]*nd.Array, error) {
	if it.done {
		return nil, io.EOF
	}
	var req starlark.Value = starlark.None
	switch {
	case it.requests != nil:
		r, err := it.requests.Next()
		if errors.Is(err, io.EOF) {
			it.done = true
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		req = requestValue(r)
	case it.sizes != nil:
		n, err := it.sizes.Next()
		if errors.Is(err, io.EOF) {
			it.done = true
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		req = starlark.MakeInt(n)
	}
	v, err := it.s.call("get_data", it.s.state, req)
	if err != nil {
		return nil, err
	}
	if starlib.IsStopIteration(v) {
		it.done = true
		return nil, io.EOF
	}
	it.served++
	out, err := itemArrays(it.s.ds.name, v, len(it.s.Sources()))
	if err != nil {
		if f, ok := lookupFunction(it.s.ds, "get_data"); ok {
			return nil, fmt.Errorf("%w (get_data is defined at %s)", err, f.Position())
		}
	}
	return out, err
}

// lookupFunction is the function the dataset's class defines as name.
func lookupFunction(d *Dataset, name string) (*starlark.Function, bool) {
	if d.st == nil {
		return nil, false
	}
	v, _ := d.st.Class.Lookup(name)
	f, ok := v.(*starlark.Function)
	return f, ok
}

// State is the scheme's position (the number of items given, without a
// scheme) and the data state.
func (it *scriptDataIter) State() (fuel.IteratorState, error) {
	pos := fuel.RequestPosition{Next: it.served}
	switch {
	case it.requests != nil:
		pos = it.requests.Position()
	case it.sizes != nil:
		pos = it.sizes.Position()
	}
	data, err := starlib.EncodeData(it.s.state, fmt.Sprintf("the state %s.open() returned", it.s.ds.name))
	if err != nil {
		return fuel.IteratorState{}, err
	}
	return fuel.IteratorState{Requests: &pos, Data: data}, nil
}

// itemArrays is what get_data returned: one value per source (n).
func itemArrays(cls string, v starlark.Value, n int) ([]*nd.Array, error) {
	seq, ok := v.(starlark.Indexable)
	if !ok || seq.Len() != n {
		return nil, fmt.Errorf("%s.get_data returned %s, want a tuple with one value per source (%d), or StopIteration", cls, v.Type(), n)
	}
	out := make([]*nd.Array, n)
	for i := range out {
		var err error
		if out[i], err = valueData(seq.Index(i)); err != nil {
			return nil, fmt.Errorf("%s.get_data: value %d: %v", cls, i, err)
		}
	}
	return out, nil
}

// reopen is Fuel's Dataset.reset(state) for a script subclass of a
// built-in dataset: close(state), then open(), each the subclass's own
// where it defines them.
func (d *Dataset) reopen(thread *starlark.Thread, state starlark.Value) (starlark.Value, error) {
	for _, name := range []string{"close", "open"} {
		m, err := d.Attr(name)
		if err != nil {
			return nil, err
		}
		var args starlark.Tuple
		if name == "close" {
			args = starlark.Tuple{state}
		}
		v, err := starlark.Call(thread, m, args, nil)
		if err != nil {
			return nil, err
		}
		if name == "open" {
			return v, nil
		}
	}
	return starlark.None, nil
}
