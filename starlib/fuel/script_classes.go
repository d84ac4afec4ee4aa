package fuel

import (
	"fmt"
	"io"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Fuel's classes as bases of script classes (starlib/classes.go), as
// docs/extending_fuel.rst subclasses them:
//
//	IndexableDataset(indexables, start=None, stop=None, sources=None, axis_labels=None) (fuel.datasets)
//	    a subclass's __init__ computes the indexables and calls super(C, self).__init__(indexables, **kwargs)
//	IterationScheme, IndexScheme(examples), BatchScheme(examples, batch_size) (fuel.schemes)
//	    get_request_iterator(self) returns a list (or any iterable) of requests: an index, or a list of indices;
//	    self.indices and self.batch_size are set by the base's __init__
//	BatchSizeScheme() (fuel.schemes)
//	    get_request_iterator(self) returns a list (or any iterable) of batch sizes, for Batch and Cache
//	Transformer(data_stream, produces_examples=None) (fuel.transformers)  transform_example(self, example), transform_batch(self, batch)
//	AgnosticTransformer(...)                                              transform_any(self, data)
//	SourcewiseTransformer(data_stream, produces_examples, which_sources=None)
//	    transform_source_example(self, source, source_name), transform_source_batch(self, source, source_name)
//	AgnosticSourcewiseTransformer(...)                                    transform_any_source(self, source, source_name)
//	Dataset(sources=None, axis_labels=None) (fuel.datasets)   provides_sources, get_data(self, state=None, request=None)
//	    returning one value per source or StopIteration, open, next_epoch, reset, close (script_datastream.go)
//	DataStream(...), AbstractDataStream(iteration_scheme=None, axis_labels=None) (fuel.streams)   see script_streams.go
//
// The instance is the library's own value (a Dataset, a scheme, a
// stream), so it goes wherever a built-in one goes (DataStream(dataset,
// iteration_scheme=...), a transformer's data_stream, a MainLoop).
func scriptClassModules() []*starlarkstruct.Module {
	isScheme := func(v starlark.Value) bool { _, ok := v.(*SchemeValue); return ok }
	scheme := func(name string) *starlib.LibClass {
		return &starlib.LibClass{State: true, ClassName: name, IsInst: isScheme,
			New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
				s := &SchemeValue{name: st.Class.Name(), st: st}
				is := &scriptIterScheme{thread: thread, self: s, examples: name == "IndexScheme"}
				if name == "BatchSizeScheme" {
					s.S = &scriptSizeScheme{is}
				} else {
					s.S = is
				}
				return s, nil
			},
			Init: func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
				s := self.(*SchemeValue)
				switch name {
				case "IterationScheme", "BatchSizeScheme":
					return starlark.UnpackArgs(name+".__init__", args, kwargs)
				case "IndexScheme":
					var examples starlark.Value
					if err := starlark.UnpackArgs(name+".__init__", args, kwargs, "examples", &examples); err != nil {
						return err
					}
					idx, err := schemeIndices(name, examples)
					if err != nil {
						return err
					}
					s.st.Set("indices", idx)
				case "BatchScheme":
					var examples starlark.Value
					var bs int
					if err := starlark.UnpackArgs(name+".__init__", args, kwargs, "examples", &examples, "batch_size", &bs); err != nil {
						return err
					}
					idx, err := schemeIndices(name, examples)
					if err != nil {
						return err
					}
					s.st.Set("indices", idx)
					s.st.Set("batch_size", starlark.MakeInt(bs))
				}
				return nil
			}}
	}
	isStream := func(v starlark.Value) bool { _, ok := v.(*Stream); return ok }
	transformer := func(name string) *transformerClass {
		return &transformerClass{&starlib.LibClass{State: true, ClassName: name, IsInst: isStream,
			New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
				return &Stream{Name: st.Class.Name(), st: st}, nil
			},
			Init: func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
				s := self.(*Stream)
				var child *Stream
				var produces, which starlark.Value = starlark.None, starlark.None
				if err := starlark.UnpackArgs(name+".__init__", args, kwargs, "data_stream", &child, "produces_examples?", &produces, "which_sources?", &which); err != nil {
					return err
				}
				t := &scriptTransformer{thread: thread, self: s, inner: child.S, child: child, kind: name, produces: child.S.ProducesExamples()}
				if b, ok := produces.(starlark.Bool); ok {
					t.produces = bool(b)
				}
				if which != starlark.None {
					ws, err := stringList(name+": which_sources", which)
					if err != nil {
						return err
					}
					t.which = ws
				}
				s.S = t
				return nil
			},
			Super: func(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
				if t, ok := self.(*Stream).S.(*scriptTransformer); ok {
					return t.baseAttr(name), nil
				}
				return nil, nil
			}}}
	}
	return []*starlarkstruct.Module{
		{Name: "fuel.schemes", Members: starlark.StringDict{
			"IterationScheme": scheme("IterationScheme"),
			"IndexScheme":     scheme("IndexScheme"),
			"BatchScheme":     scheme("BatchScheme"),
			"BatchSizeScheme": scheme("BatchSizeScheme"),
		}},
		{Name: "fuel.datasets", Members: starlark.StringDict{
			"Dataset": datasetBase(),
		}},
		{Name: "fuel.streams", Members: starlark.StringDict{
			"AbstractDataStream": abstractDataStreamBase(),
		}},
		{Name: "fuel.transformers", Members: starlark.StringDict{
			"Transformer":                   transformer("Transformer"),
			"AgnosticTransformer":           transformer("AgnosticTransformer"),
			"SourcewiseTransformer":         transformer("SourcewiseTransformer"),
			"AgnosticSourcewiseTransformer": transformer("AgnosticSourcewiseTransformer"),
		}},
	}
}

// scriptIndexableDataset is fuel.datasets.IndexableDataset: the
// constructor, and the base of a script class.
func scriptIndexableDataset(fn starlark.Callable) starlark.Value {
	return scriptDatasetClass("IndexableDataset", fn)
}

// scriptDatasetClass is a dataset constructor (IndexableDataset,
// IterableDataset) that is also the base of script classes whose
// __init__ computes the data and calls super(C, self).__init__(data,
// **kwargs).
func scriptDatasetClass(name string, fn starlark.Callable) starlark.Value {
	isDataset := func(v starlark.Value) bool { _, ok := v.(*Dataset); return ok }
	return &starlib.CallableLibClass{Fn: fn, LibClass: &starlib.LibClass{State: true, ClassName: name, IsInst: isDataset,
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			return &Dataset{name: st.Class.Name(), st: st}, nil
		},
		Init: func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
			d := self.(*Dataset)
			v, err := starlark.Call(thread, fn, args, kwargs)
			if err != nil {
				return err
			}
			d.D = v.(*Dataset).D
			return nil
		}}}
}

// schemeIndices is IndexScheme's and BatchScheme's indices: range(n) for
// a number of examples, else the list of indices.
func schemeIndices(class string, examples starlark.Value) (starlark.Value, error) {
	var n int
	if starlark.AsInt(examples, &n) == nil {
		l := make([]starlark.Value, n)
		for i := range l {
			l[i] = starlark.MakeInt(i)
		}
		return starlark.NewList(l), nil
	}
	is, err := indexList(examples)
	if err != nil {
		return nil, fmt.Errorf("%s: examples must be a number of examples or a list of indices, got %s", class, examples.Type())
	}
	l := make([]starlark.Value, len(is))
	for i, x := range is {
		l[i] = starlark.MakeInt(x)
	}
	return starlark.NewList(l), nil
}

// ScriptState is a script dataset's state; nil for a built-in one.
func (d *Dataset) ScriptState() *starlib.ObjectState { return d.st }

// ScriptState is a script scheme's state; nil for a built-in one.
func (s *SchemeValue) ScriptState() *starlib.ObjectState { return s.st }

// ScriptState is a script transformer's state; nil for a built-in one.
func (s *Stream) ScriptState() *starlib.ObjectState { return s.st }

// scriptIterScheme is a script class's iteration scheme.
type scriptIterScheme struct {
	thread   *starlark.Thread
	self     *SchemeValue
	examples bool // IndexScheme: each request is one example
}

// RequestsExamples is IndexScheme's true, BatchScheme's false, or the
// class's requests_examples.
func (s *scriptIterScheme) RequestsExamples() bool {
	if v, found, err := starlib.ScriptAttr(s.self, s.self.st, "requests_examples"); found && err == nil {
		return bool(v.Truth())
	}
	return s.examples
}

// GetRequestIterator calls get_request_iterator().
func (s *scriptIterScheme) GetRequestIterator() (schemes.RequestIterator, error) {
	return s.requests(0)
}

// RestoreRequestIterator continues the saved epoch's requests (an older
// checkpoint without them: get_request_iterator() again, the requests
// already given skipped).
func (s *scriptIterScheme) RestoreRequestIterator(pos fuel.RequestPosition) (schemes.RequestIterator, error) {
	if pos.Requests == nil {
		return s.requests(pos.Next)
	}
	if pos.Singles != nil && len(pos.Singles) != len(pos.Requests) {
		return nil, fmt.Errorf("%s: the saved position has %d requests but %d example marks", s.self.st.Class.Name(), len(pos.Requests), len(pos.Singles))
	}
	reqs := make([]fuel.Request, len(pos.Requests))
	for i, is := range pos.Requests {
		single := pos.Singles != nil && pos.Singles[i]
		if single && len(is) != 1 {
			return nil, fmt.Errorf("%s: saved request %d asks for one example but holds %d indices", s.self.st.Class.Name(), i, len(is))
		}
		reqs[i] = fuel.Request{Indices: append([]int(nil), is...), Single: single}
	}
	if pos.Next < 0 || pos.Next > len(reqs) {
		return nil, fmt.Errorf("%s: the saved position %d is outside the epoch's %d requests", s.self.st.Class.Name(), pos.Next, len(reqs))
	}
	return &listRequests{reqs: reqs, next: pos.Next}, nil
}

func (s *scriptIterScheme) requests(skip int) (schemes.RequestIterator, error) {
	name := s.self.st.Class.Name()
	m, found, err := starlib.ScriptAttr(s.self, s.self.st, "get_request_iterator")
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: an IterationScheme subclass defines get_request_iterator(self)", name)
	}
	v, err := starlark.Call(callThread(s.thread, name+".get_request_iterator"), m, nil, nil)
	if err != nil {
		return nil, err
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s.get_request_iterator must return an iterable of requests, got %s", name, v.Type())
	}
	var reqs []fuel.Request
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	single := s.RequestsExamples()
	for i := 0; iter.Next(&x); i++ {
		var n int
		if starlark.AsInt(x, &n) == nil {
			reqs = append(reqs, fuel.Request{Indices: []int{n}, Single: single})
			continue
		}
		is, err := indexList(x)
		if err != nil {
			return nil, fmt.Errorf("%s.get_request_iterator: request %d: want an index or a list of indices, got %s", name, i, x.Type())
		}
		reqs = append(reqs, fuel.Request{Indices: is})
	}
	return &listRequests{reqs: reqs, next: min(skip, len(reqs))}, nil
}

// scriptSizeScheme is a script subclass of Fuel's BatchSizeScheme: its
// get_request_iterator gives batch sizes (ints), which Batch and Cache
// read; a DataStream, which wants indices, refuses it.
type scriptSizeScheme struct{ *scriptIterScheme }

var _ schemes.BatchSizeScheme = scriptSizeScheme{}

// RequestsExamples is false unless the class says otherwise (Fuel's
// BatchSizeScheme.requests_examples).
func (s scriptSizeScheme) RequestsExamples() bool { return s.scriptIterScheme.RequestsExamples() }

func (s scriptSizeScheme) refuse() error {
	return fmt.Errorf("%s is a BatchSizeScheme: its requests are batch sizes, for Batch(data_stream, iteration_scheme) or Cache, not indices for a DataStream", s.self.st.Class.Name())
}

// GetRequestIterator is refused: the requests are batch sizes.
func (s scriptSizeScheme) GetRequestIterator() (schemes.RequestIterator, error) {
	return nil, s.refuse()
}

// RestoreRequestIterator is refused: the requests are batch sizes.
func (s scriptSizeScheme) RestoreRequestIterator(fuel.RequestPosition) (schemes.RequestIterator, error) {
	return nil, s.refuse()
}

// GetBatchSizeIterator calls get_request_iterator(), whose items must be
// positive ints.
func (s scriptSizeScheme) GetBatchSizeIterator() (schemes.BatchSizeIterator, error) {
	name := s.self.st.Class.Name()
	m, found, err := starlib.ScriptAttr(s.self, s.self.st, "get_request_iterator")
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: a BatchSizeScheme subclass defines get_request_iterator(self)", name)
	}
	v, err := starlark.Call(callThread(s.thread, name+".get_request_iterator"), m, nil, nil)
	if err != nil {
		return nil, err
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s.get_request_iterator must return an iterable of batch sizes, got %s", name, v.Type())
	}
	var reqs []fuel.Request
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for i := 0; iter.Next(&x); i++ {
		var n int
		if _, isBool := x.(starlark.Bool); isBool || starlark.AsInt(x, &n) != nil || n <= 0 {
			return nil, fmt.Errorf("%s.get_request_iterator: request %d: want a positive batch size (an int), got %s", name, i, x.String())
		}
		reqs = append(reqs, fuel.Request{Indices: []int{n}})
	}
	return sizeRequests{&listRequests{reqs: reqs}}, nil
}

// RestoreBatchSizeIterator continues the saved epoch's batch sizes.
func (s scriptSizeScheme) RestoreBatchSizeIterator(pos fuel.RequestPosition) (schemes.BatchSizeIterator, error) {
	if pos.Requests == nil {
		it, err := s.GetBatchSizeIterator()
		if err != nil {
			return nil, err
		}
		l := it.(sizeRequests).l
		l.next = min(max(pos.Next, 0), len(l.reqs))
		return it, nil
	}
	it, err := s.scriptIterScheme.RestoreRequestIterator(pos)
	if err != nil {
		return nil, err
	}
	l := it.(*listRequests)
	for i, r := range l.reqs {
		if len(r.Indices) != 1 || r.Indices[0] <= 0 {
			return nil, fmt.Errorf("%s: saved request %d is not a batch size", s.self.st.Class.Name(), i)
		}
	}
	return sizeRequests{l}, nil
}

// sizeRequests walks a list of batch sizes, each held as a request of
// one index (so that the position saves as a request scheme's does).
type sizeRequests struct{ l *listRequests }

func (s sizeRequests) Next() (int, error) {
	r, err := s.l.Next()
	if err != nil {
		return 0, err
	}
	return r.Indices[0], nil
}

func (s sizeRequests) Position() fuel.RequestPosition { return s.l.Position() }

// listRequests walks a list of requests.
type listRequests struct {
	reqs []fuel.Request
	next int
}

func (l *listRequests) Next() (fuel.Request, error) {
	if l.next >= len(l.reqs) {
		return fuel.Request{}, io.EOF
	}
	l.next++
	return l.reqs[l.next-1], nil
}

// Position is the next request and the epoch's requests.
func (l *listRequests) Position() fuel.RequestPosition {
	reqs := make([][]int, len(l.reqs))
	var singles []bool
	for i, r := range l.reqs {
		reqs[i] = append([]int(nil), r.Indices...)
		if r.Single {
			if singles == nil {
				singles = make([]bool, len(l.reqs))
			}
			singles[i] = true
		}
	}
	return fuel.RequestPosition{Next: l.next, Requests: reqs, Singles: singles}
}

// scriptTransformer is a script class's transformer: each item of the
// wrapped stream goes through the class's transform methods.
type scriptTransformer struct {
	thread    *starlark.Thread
	self      *Stream
	inner     fuel.Stream
	child     *Stream            // the wrapped stream as the script gave it (its close, reset, next_epoch)
	childIter fuel.EpochIterator // get_data's epoch of the wrapped stream
	kind      string
	produces  bool
	which     []string // SourcewiseTransformer's which_sources; nil: all
}

func (t *scriptTransformer) Sources() []string               { return t.inner.Sources() }
func (t *scriptTransformer) AxisLabels() map[string][]string { return t.inner.AxisLabels() }
func (t *scriptTransformer) ProducesExamples() bool          { return t.produces }
func (t *scriptTransformer) DataStream() fuel.Stream         { return t.inner }
func (t *scriptTransformer) method(name string) (starlark.Value, error) {
	m, found, err := starlib.ScriptAttr(t.self, t.self.st, name)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: a %s subclass defines %s", t.self.st.Class.Name(), t.kind, name)
	}
	return m, nil
}

// GetEpochIterator wraps the inner stream's.
func (t *scriptTransformer) GetEpochIterator() (fuel.EpochIterator, error) {
	it, err := t.inner.GetEpochIterator()
	if err != nil {
		return nil, err
	}
	return &scriptTransformIter{t: t, it: it}, nil
}

type scriptTransformIter struct {
	t  *scriptTransformer
	it fuel.EpochIterator
}

// State is the wrapped iterator's: the transform keeps no state of its
// own between items but the instance's attributes, which checkpoints
// save with the script objects.
func (s *scriptTransformIter) State() (fuel.IteratorState, error) {
	si, ok := s.it.(fuel.StatefulIterator)
	if !ok {
		return fuel.IteratorState{}, fmt.Errorf("%s: the stream it transforms cannot report its position", s.t.self.st.Class.Name())
	}
	st, err := si.State()
	if err != nil {
		return fuel.IteratorState{}, err
	}
	return fuel.IteratorState{Child: &st}, nil
}

// ResumeEpochIterator resumes the wrapped stream's epoch.
func (t *scriptTransformer) ResumeEpochIterator(state fuel.IteratorState) (fuel.EpochIterator, error) {
	rs, ok := t.inner.(fuel.ResumableStream)
	if !ok || state.Child == nil {
		return nil, fmt.Errorf("%s: the stream it transforms cannot resume an epoch", t.self.st.Class.Name())
	}
	it, err := rs.ResumeEpochIterator(*state.Child)
	if err != nil {
		return nil, err
	}
	return &scriptTransformIter{t: t, it: it}, nil
}

func (s *scriptTransformIter) Next() ([]*nd.Array, error) {
	data, err := s.it.Next()
	if err != nil {
		return nil, err
	}
	return s.t.transform(data)
}

func (t *scriptTransformer) transform(data []*nd.Array) ([]*nd.Array, error) {
	cls := t.self.st.Class.Name()
	suffix := "batch"
	if t.produces {
		suffix = "example"
	}
	switch t.kind {
	case "Transformer", "AgnosticTransformer":
		name := "transform_" + suffix
		if t.kind == "AgnosticTransformer" {
			name = "transform_any"
		}
		m, err := t.method(name)
		if err != nil {
			return nil, err
		}
		item := make(starlark.Tuple, len(data))
		for i, a := range data {
			item[i] = dataValue(a)
		}
		v, err := starlark.Call(callThread(t.thread, cls+"."+name), m, starlark.Tuple{item}, nil)
		if err != nil {
			return nil, err
		}
		seq, ok := v.(starlark.Indexable)
		if !ok || seq.Len() != len(data) {
			return nil, fmt.Errorf("%s.%s returned %s, want a tuple with one value per source (%d)", cls, name, v.Type(), len(data))
		}
		out := make([]*nd.Array, len(data))
		for i := range out {
			if out[i], err = valueData(seq.Index(i)); err != nil {
				return nil, fmt.Errorf("%s.%s: value %d: %v", cls, name, i, err)
			}
		}
		return out, nil
	}
	name := "transform_source_" + suffix
	if t.kind == "AgnosticSourcewiseTransformer" {
		name = "transform_any_source"
	}
	m, err := t.method(name)
	if err != nil {
		return nil, err
	}
	out := append([]*nd.Array(nil), data...)
	for i, src := range t.inner.Sources() {
		if t.which != nil && !contains(t.which, src) {
			continue
		}
		v, err := starlark.Call(callThread(t.thread, cls+"."+name), m, starlark.Tuple{dataValue(data[i]), starlark.String(src)}, nil)
		if err != nil {
			return nil, err
		}
		if out[i], err = valueData(v); err != nil {
			return nil, fmt.Errorf("%s.%s(%s): %v", cls, name, src, err)
		}
	}
	return out, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// SetField sets a script scheme's attribute.
func (s *SchemeValue) SetField(name string, v starlark.Value) error {
	if s.st == nil {
		return fmt.Errorf("%s has no settable attributes", s.name)
	}
	_, err := starlib.ScriptSetField(s, s.st, name, v, true)
	return err
}
