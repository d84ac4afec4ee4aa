package fuel

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/starlib"
)

// This file gives Fuel's datasets, streams and schemes the rest of the
// API Fuel's own tests and documentation use (docs/fuel-data.md and
// docs/fuel-streams.md are the reference):
//
//	IterableDataset(iterables, sources=None, axis_labels=None)
//	    iterables: a dict of source name -> list, tuple, range or array of
//	    examples, or one such iterable (the source "data", as Fuel)
//	dataset.open(), close(state), reset(state), next_epoch(state),
//	get_data(state=None, request=None), get_example_stream(),
//	filter_sources(data), apply_default_transformers(stream),
//	dataset.<source> (an in-memory source), settable sources and axis_labels
//	stream.get_data(request=None), settable sources and axis_labels
//	scheme.get_request_iterator(), scheme.requests_examples, scheme.rng

func apiModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.datasets", Members: starlark.StringDict{
		"IterableDataset": scriptDatasetClass("IterableDataset", starlib.NewBuiltin("IterableDataset", iterableDataset)), // also a base: script_classes.go
	}})
	return
}

// iterableDataset is Fuel's IterableDataset(iterables, sources=None,
// axis_labels=None).
func iterableDataset(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var its starlark.Value
	var sources, labels starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "iterables", &its, "sources?", &sources, "axis_labels?", &labels); err != nil {
		return nil, err
	}
	var srcs []datasets.IterableSource
	if d, ok := its.(*starlark.Dict); ok {
		for _, kv := range d.Items() {
			name, ok := starlark.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("IterableDataset: source names must be strings, got %s", kv[0].Type())
			}
			ex, err := iterableExamples(thread, name, kv[1])
			if err != nil {
				return nil, err
			}
			srcs = append(srcs, datasets.IterableSource{Name: name, Examples: ex})
		}
		if len(srcs) == 0 {
			return nil, fmt.Errorf("IterableDataset: the dict of iterables is empty (want one source at least)")
		}
	} else {
		ex, err := iterableExamples(thread, "data", its)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, datasets.IterableSource{Name: "data", Examples: ex})
	}
	ss, lab, err := sourcesAndLabels("IterableDataset", sources, labels)
	if err != nil {
		return nil, err
	}
	ds, err := datasets.NewIterableDataset(srcs, ss, lab)
	if err != nil {
		return nil, err
	}
	return &Dataset{D: ds, name: "IterableDataset"}, nil
}

// iterableExamples reads one source of an IterableDataset: the examples
// of a list, tuple, range or other iterable, or the rows of an array.
func iterableExamples(thread *starlark.Thread, name string, v starlark.Value) ([]*nd.Array, error) {
	switch x := v.(type) {
	case *starlib.Array:
		if x.A.NDim() == 0 {
			return nil, fmt.Errorf("IterableDataset: source %s: a 0-d array is not iterable (want an array of examples)", name)
		}
		parts, err := x.A.Parts()
		if err != nil {
			return nil, fmt.Errorf("IterableDataset: source %s: %v", name, err)
		}
		return parts, nil
	case starlark.String, starlark.Bytes:
		return nil, fmt.Errorf("IterableDataset: source %s: got a string, want an iterable of examples (a list of strings?)", name)
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("IterableDataset: source %s: want an iterable of examples (list, tuple, range or array), got %s", name, v.Type())
	}
	var out []*nd.Array
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		a, err := valueData(x)
		if err != nil {
			return nil, fmt.Errorf("IterableDataset: source %s, example %d: %v", name, len(out), err)
		}
		if a.DType() == nd.Float64 && !hasFloat64(x) {
			a = a.Astype(starlib.FloatX(thread))
		}
		out = append(out, a)
	}
	return out, nil
}

// labelsValue is axis labels for Starlark: None when there are none (as
// Fuel), else a dict of source -> tuple of names (None for a source whose
// labels are None).
func labelsValue(m map[string][]string) starlark.Value {
	if m == nil {
		return starlark.None
	}
	d := starlark.NewDict(len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for k := range slices.Values(keys) {
		var v starlark.Value = starlark.None
		if m[k] != nil {
			v = strTuple(m[k])
		}
		d.SetKey(starlark.String(k), v)
	}
	return d
}

// datasetOverride is a dataset whose sources (a selection of the ones the
// dataset provides) or axis labels a script set.
type datasetOverride struct {
	fuel.IndexableDataset
	pick      []int // columns of the inner dataset's data, in order
	sources   []string
	labels    map[string][]string
	labelsSet bool
}

func (d *datasetOverride) Sources() []string { return slices.Clone(d.sources) }
func (d *datasetOverride) AxisLabels() map[string][]string {
	if d.labelsSet {
		return d.labels
	}
	return d.IndexableDataset.AxisLabels()
}
func (d *datasetOverride) ProvidesSources() []string {
	if p, ok := d.IndexableDataset.(interface{ ProvidesSources() []string }); ok {
		return p.ProvidesSources()
	}
	return d.IndexableDataset.Sources()
}
func (d *datasetOverride) Iterable() bool {
	it, ok := d.IndexableDataset.(interface{ Iterable() bool })
	return ok && it.Iterable()
}
func (d *datasetOverride) GetData(req fuel.Request) ([]*nd.Array, error) {
	data, err := d.IndexableDataset.GetData(req)
	if err != nil {
		return nil, err
	}
	out := make([]*nd.Array, len(d.pick))
	for i, k := range d.pick {
		out[i] = data[k]
	}
	return out, nil
}

func (d *Dataset) override() *datasetOverride {
	if o, ok := d.D.(*datasetOverride); ok {
		return o
	}
	src := d.D.Sources()
	pick := make([]int, len(src))
	for i := range pick {
		pick[i] = i
	}
	o := &datasetOverride{IndexableDataset: d.D, pick: pick, sources: src}
	d.D = o
	return o
}

// SetField sets the dataset's sources (a selection of provides_sources)
// or axis_labels.
func (d *Dataset) SetField(name string, v starlark.Value) error {
	if d.st != nil && (d.D == nil || (name != "sources" && name != "axis_labels")) {
		_, err := starlib.ScriptSetField(d, d.st, name, v, true)
		return err
	}
	switch name {
	case "axis_labels":
		labels, err := axisLabelsArg(d.name, v)
		if err != nil {
			return err
		}
		o := d.override()
		o.labels, o.labelsSet = labels, true
		return nil
	case "sources":
		ss, err := stringList(d.name+": sources", v)
		if err != nil {
			return err
		}
		o := d.override()
		inner := o.IndexableDataset.Sources()
		pick := make([]int, len(ss))
		for i, s := range ss {
			k := slices.Index(inner, s)
			if k < 0 {
				return fmt.Errorf("%s: sources: %q is not a source of the dataset (it has %s)", d.name, s, starlib.JoinNames(inner))
			}
			pick[i] = k
		}
		o.pick, o.sources = pick, ss
		return nil
	}
	return starlark.NoSuchAttrError(fmt.Sprintf("%s has no settable attribute %s (sources and axis_labels are)", d.name, name))
}

// iterableState is what dataset.open() gives for an IterableDataset: the
// position of the next example.
type iterableState struct{ next int }

func (s *iterableState) String() string        { return fmt.Sprintf("<iterator state: example %d>", s.next) }
func (s *iterableState) Type() string          { return "iterator_state" }
func (s *iterableState) Freeze()               {}
func (s *iterableState) Truth() starlark.Bool  { return true }
func (s *iterableState) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: iterator state") }

func (d *Dataset) isIterable() bool {
	it, ok := d.D.(interface{ Iterable() bool })
	return ok && it.Iterable()
}

// requestArg reads a get_data request: an int (one example), a list of
// indices, or a slice.
func requestArg(what string, v starlark.Value) (fuel.Request, error) {
	v = starlib.IndexValue(v) // an integer numpy scalar is one example
	var i int
	if starlark.AsInt(v, &i) == nil {
		return fuel.Request{Indices: []int{i}, Single: true}, nil
	}
	if sl, ok := v.(*starlib.SliceValue); ok {
		var start, stop, step int
		if starlark.AsInt(sl.Start, &start) != nil || starlark.AsInt(sl.Stop, &stop) != nil {
			return fuel.Request{}, fmt.Errorf("%s: a slice request needs its start and stop, got %s", what, sl)
		}
		if sl.Step != starlark.None && (starlark.AsInt(sl.Step, &step) != nil || step != 1) {
			return fuel.Request{}, fmt.Errorf("%s: a slice request must have step 1, got %s", what, sl)
		}
		return fuel.Request{Start: start, Stop: stop}, nil
	}
	is, err := starlib.AsInts(v)
	if err != nil {
		return fuel.Request{}, fmt.Errorf("%s: request must be an index, a list of indices or a slice, got %s", what, v.Type())
	}
	return fuel.Request{Indices: is}, nil
}

// protocolAttr is the rest of Fuel's Dataset API.
func (d *Dataset) protocolAttr(name string) (starlark.Value, error) {
	method := func(fn starlib.BuiltinFunc) (starlark.Value, error) {
		return starlib.NewBuiltin(name, fn).BindReceiver(d), nil
	}
	switch name {
	case "open":
		return method(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			if d.isIterable() {
				return &iterableState{}, nil
			}
			return starlark.None, nil
		})
	case "close", "reset", "next_epoch":
		return method(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var state starlark.Value = starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "state", &state); err != nil {
				return nil, err
			}
			if b.Name() == "close" {
				return starlark.None, nil
			}
			if d.st != nil {
				// Fuel's Dataset.reset and next_epoch: close, then open, a
				// subclass's own included (script_datastream.go).
				return d.reopen(thread, state)
			}
			if d.isIterable() {
				return &iterableState{}, nil // reset and next_epoch reopen
			}
			return state, nil
		})
	case "get_data":
		return method(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var state, request starlark.Value = starlark.None, starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "state?", &state, "request?", &request); err != nil {
				return nil, err
			}
			if d.isIterable() {
				st, ok := state.(*iterableState)
				if !ok {
					return nil, fmt.Errorf("get_data: an IterableDataset needs the state dataset.open() returned, got %s", state.Type())
				}
				if request != starlark.None {
					return nil, fmt.Errorf("get_data: an IterableDataset takes no request (its examples come in order), got %s", request.Type())
				}
				if st.next >= d.D.NumExamples() {
					return nil, fmt.Errorf("get_data: StopIteration: the dataset's %d examples have all been read", d.D.NumExamples())
				}
				arrays, err := d.D.GetData(fuel.Request{Indices: []int{st.next}, Single: true})
				if err != nil {
					return nil, err
				}
				st.next++
				return arrayTuple(arrays), nil
			}
			if state != starlark.None {
				return nil, fmt.Errorf("get_data: %s is stateless: the state must be None, got %s", d.name, state.Type())
			}
			if request == starlark.None {
				return nil, fmt.Errorf("get_data: %s needs a request (an index, a list of indices or a slice)", d.name)
			}
			req, err := requestArg("get_data", request)
			if err != nil {
				return nil, err
			}
			arrays, err := d.D.GetData(req)
			if err != nil {
				return nil, err
			}
			return arrayTuple(arrays), nil
		})
	case "filter_sources":
		return method(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var data starlark.Indexable
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data", &data); err != nil {
				return nil, err
			}
			provides, _ := d.Attr("provides_sources")
			ps := provides.(starlark.Tuple)
			if data.Len() != len(ps) {
				return nil, fmt.Errorf("filter_sources: want one value per provided source (%d), got %d", len(ps), data.Len())
			}
			var out starlark.Tuple
			for i, p := range ps {
				if slices.Contains(d.D.Sources(), string(p.(starlark.String))) {
					out = append(out, data.Index(i))
				}
			}
			return out, nil
		})
	case "get_example_stream":
		return method(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			if d.hasOwnState() {
				// Fuel: DataStream(self, iteration_scheme=self.example_iteration_scheme).
				scheme, err := d.Attr("example_iteration_scheme")
				if err != nil {
					return nil, err
				}
				if scheme == nil {
					scheme = starlark.None
				}
				return newScriptDataStream(thread, "get_example_stream", d, scheme)
			}
			st, err := streams.DataStream(d.D, nil)
			if err != nil {
				return nil, err
			}
			return &Stream{S: st, Name: "DataStream"}, nil
		})
	case "apply_default_transformers", "apply_default_transformer":
		return method(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var st *Stream
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "stream", &st); err != nil {
				return nil, err
			}
			dt, ok := d.D.(transformers.DefaultTransformerer)
			if !ok {
				return st, nil
			}
			out, err := transformers.Apply(st.S, dt.DefaultTransformers())
			if err != nil {
				return nil, err
			}
			return &Stream{S: out, Name: streamName(out)}, nil
		})
	}
	// An in-memory source by name (Fuel's IndexableDataset.__getattr__).
	if src, ok := d.D.(interface {
		Data(string) (*nd.Array, bool)
	}); ok {
		if a, ok := src.Data(name); ok {
			return dataValue(a), nil
		}
	} else if o, ok := d.D.(*datasetOverride); ok {
		if src, ok := o.IndexableDataset.(interface {
			Data(string) (*nd.Array, bool)
		}); ok {
			if a, ok := src.Data(name); ok {
				return dataValue(a), nil
			}
		}
	}
	return nil, nil
}

// streamOverride is a stream whose sources or axis labels a script set:
// as in Fuel, setting sources renames them (the data are unchanged).
type streamOverride struct {
	fuel.Stream
	sources   []string
	labels    map[string][]string
	labelsSet bool
}

// Components is the stream it renames (fuel.Composite).
func (s *streamOverride) Components() []any { return []any{s.Stream} }

func (s *streamOverride) Sources() []string {
	if s.sources != nil {
		return slices.Clone(s.sources)
	}
	return s.Stream.Sources()
}
func (s *streamOverride) AxisLabels() map[string][]string {
	if s.labelsSet {
		return s.labels
	}
	return s.Stream.AxisLabels()
}
func (s *streamOverride) ResumeEpochIterator(state fuel.IteratorState) (fuel.EpochIterator, error) {
	rs, ok := s.Stream.(fuel.ResumableStream)
	if !ok {
		return nil, fmt.Errorf("the stream cannot resume an epoch")
	}
	return rs.ResumeEpochIterator(state)
}

// SetField sets a stream's sources (renaming them, as Fuel) or
// axis_labels.
func (s *Stream) SetField(name string, v starlark.Value) error {
	a, abstract := s.S.(*scriptAbstractStream)
	if abstract && s.st != nil && name == "produces_examples" {
		return a.setProducesExamples(v)
	}
	// An AbstractDataStream subclass's sources and axis_labels are its
	// own attributes (scriptAbstractStream reads them there).
	if s.st != nil && (s.S == nil || abstract || (name != "sources" && name != "axis_labels")) {
		_, err := starlib.ScriptSetField(s, s.st, name, v, true)
		return err
	}
	o, ok := s.S.(*streamOverride)
	switch name {
	case "sources":
		ss, err := stringList(s.Name+": sources", v)
		if err != nil {
			return err
		}
		if !ok {
			o = &streamOverride{Stream: s.S}
		}
		o.sources = ss
	case "axis_labels":
		labels, err := axisLabelsArg(s.Name, v)
		if err != nil {
			return err
		}
		if !ok {
			o = &streamOverride{Stream: s.S}
		}
		o.labels, o.labelsSet = labels, true
	case "produces_examples":
		return fmt.Errorf("%s: produces_examples is set by the iteration scheme (or the transformer) and cannot be changed", s.Name)
	default:
		return starlark.NoSuchAttrError(fmt.Sprintf("%s has no settable attribute %s (sources and axis_labels are)", s.Name, name))
	}
	s.S = o
	return nil
}

// streamGetData is stream.get_data(request=None): Fuel's streams give
// their data through epoch iterators; a request is refused, as Fuel's
// transformers refuse one ("no request is allowed"), and a DataStream
// over an indexable dataset fetches the request from its dataset.
func (s *Stream) streamGetData() starlark.Value {
	return starlib.NewBuiltin("get_data", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var request starlark.Value = starlark.None
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "request?", &request); err != nil {
			return nil, err
		}
		inner := s.S
		if o, ok := inner.(*streamOverride); ok {
			inner = o.Stream
		}
		if ds, ok := inner.(*streams.DatasetStream); ok {
			if request == starlark.None {
				return nil, fmt.Errorf("get_data: a DataStream needs a request (an index, a list of indices or a slice)")
			}
			req, err := requestArg("get_data", request)
			if err != nil {
				return nil, err
			}
			arrays, err := ds.Dataset().GetData(req)
			if err != nil {
				return nil, err
			}
			return arrayTuple(arrays), nil
		}
		if request != starlark.None {
			return nil, fmt.Errorf("get_data: %s takes no request (it has no iteration scheme of its own), got %s", s.Name, request.Type())
		}
		return nil, fmt.Errorf("get_data: %s gives its data through get_epoch_iterator(): there is no request to serve", s.Name)
	})
}

// requestIterator is scheme.get_request_iterator(): an iterator of the
// epoch's requests (an index, a list of indices, or a batch size).
type requestIterator struct {
	next func() (starlark.Value, error)
}

var (
	_ starlark.Iterable = (*requestIterator)(nil)
	_ starlib.Nexter    = (*requestIterator)(nil)
)

func (r *requestIterator) String() string       { return "<request iterator>" }
func (r *requestIterator) Type() string         { return "request_iterator" }
func (r *requestIterator) Freeze()              {}
func (r *requestIterator) Truth() starlark.Bool { return true }
func (r *requestIterator) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable: request iterator")
}

// NextBatch is the next request, or io.EOF.
func (r *requestIterator) NextBatch() (starlark.Value, error) { return r.next() }

// Iterate walks the remaining requests.
func (r *requestIterator) Iterate() starlark.Iterator { return &requestIter{r} }

type requestIter struct{ r *requestIterator }

func (it *requestIter) Next(p *starlark.Value) bool {
	v, err := it.r.next()
	if err != nil {
		return false
	}
	*p = v
	return true
}
func (it *requestIter) Done() {}

func requestValue(req fuel.Request) starlark.Value {
	idx := req.Indices
	if idx == nil {
		for i := req.Start; i < req.Stop; i++ {
			idx = append(idx, i)
		}
	}
	if req.Single {
		return starlark.MakeInt(idx[0])
	}
	l := make([]starlark.Value, len(idx))
	for i, j := range idx {
		l[i] = starlark.MakeInt(j)
	}
	return starlark.NewList(l)
}

// schemeAttr is a scheme's get_request_iterator, requests_examples and
// rng.
func schemeAttr(s schemes.Scheme, name string) (starlark.Value, error) {
	switch name {
	case "requests_examples":
		return starlark.Bool(s.RequestsExamples()), nil
	case "rng":
		var sh schemes.Shuffler
		switch s := s.(type) {
		case *schemes.Shuffled:
			sh = s.RNG
		case *schemes.ShuffledExample:
			sh = s.RNG
		}
		if r, ok := sh.(*numpyrand.RandomState); ok {
			return &starlib.RandomState{R: r}, nil
		}
		return starlark.None, nil
	case "get_request_iterator":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			it, err := s.GetRequestIterator()
			if err != nil {
				return nil, err
			}
			return &requestIterator{next: func() (starlark.Value, error) {
				req, err := it.Next()
				if err != nil {
					return nil, err
				}
				return requestValue(req), nil
			}}, nil
		}), nil
	}
	return nil, nil
}

// AttrNames lists a scheme's attributes.
func (s *SchemeValue) AttrNames() []string {
	return []string{"get_request_iterator", "requests_examples", "rng"}
}

// Attr returns a scheme's attribute: a script subclass's, the
// library's, then the subclass's __getattr__ (Python's fallback).
func (s *SchemeValue) Attr(name string) (starlark.Value, error) {
	if s.st == nil {
		return schemeAttr(s.S, name)
	}
	if v, found, err := starlib.ScriptAttr(s, s.st, name); found || err != nil {
		return v, err
	}
	if v, err := schemeAttr(s.S, name); v != nil || err != nil {
		return v, err
	}
	return starlib.ScriptGetattr(s, s.st, name)
}

// AttrNames lists a ConstantScheme's attributes.
func (s *ConstantSchemeValue) AttrNames() []string {
	return []string{"batch_size", "get_request_iterator", "num_examples", "requests_examples", "times"}
}

// Attr returns a ConstantScheme's attribute.
func (s *ConstantSchemeValue) Attr(name string) (starlark.Value, error) {
	opt := func(n int) starlark.Value {
		if n == 0 {
			return starlark.None
		}
		return starlark.MakeInt(n)
	}
	switch name {
	case "requests_examples":
		return starlark.False, nil
	case "batch_size":
		return starlark.MakeInt(s.S.BatchSize), nil
	case "num_examples":
		return opt(s.S.NumExamples), nil
	case "times":
		return opt(s.S.Times), nil
	case "get_request_iterator":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			it, err := s.S.GetBatchSizeIterator()
			if err != nil {
				return nil, err
			}
			return &requestIterator{next: func() (starlark.Value, error) {
				n, err := it.Next()
				if err != nil {
					return nil, err
				}
				return starlark.MakeInt(n), nil
			}}, nil
		}), nil
	}
	return nil, nil
}

// indexList reads a list of indices: a list, a tuple, a range, an array
// or another iterable of ints.
func indexList(v starlark.Value) ([]int, error) {
	if is, err := starlib.AsInts(v); err == nil {
		return is, nil
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("want a list of indices, got %s", v.Type())
	}
	var out []int
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		var i int
		if err := starlark.AsInt(x, &i); err != nil {
			return nil, fmt.Errorf("want a list of indices, got %s in it", x.Type())
		}
		out = append(out, i)
	}
	return out, nil
}

// cacheAttr is Cache's cache: per source, the list of cached examples of
// the latest epoch iterator (empty lists before the first).
func (s *Stream) cacheAttr() (starlark.Value, error) {
	n := len(s.S.Sources())
	out := make([]starlark.Value, n)
	var cached [][]*nd.Array
	if s.last != nil {
		c, ok := s.last.It.(interface{ Cached() [][]*nd.Array })
		if !ok {
			return nil, fmt.Errorf("%s has no cache (Cache has)", s.Name)
		}
		cached = c.Cached()
	} else if s.Name != "Cache" {
		return nil, fmt.Errorf("%s has no cache (Cache has)", s.Name)
	}
	for i := range out {
		var l []starlark.Value
		if i < len(cached) {
			for _, e := range cached[i] {
				l = append(l, dataValue(e))
			}
		}
		out[i] = starlark.NewList(l)
	}
	return starlark.NewList(out), nil
}

// concatSizesValue is a ConcatenatedScheme of ConstantSchemes: the batch
// sizes of each in turn.
type concatSizesValue struct{ parts []*schemes.Constant }

func (c *concatSizesValue) String() string        { return "<ConcatenatedScheme>" }
func (c *concatSizesValue) Type() string          { return "ConcatenatedScheme" }
func (c *concatSizesValue) Freeze()               {}
func (c *concatSizesValue) Truth() starlark.Bool  { return true }
func (c *concatSizesValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: scheme") }
func (c *concatSizesValue) AttrNames() []string {
	return []string{"get_request_iterator", "requests_examples"}
}
func (c *concatSizesValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "requests_examples":
		return starlark.False, nil
	case "get_request_iterator":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			k := 0
			var cur schemes.BatchSizeIterator
			return &requestIterator{next: func() (starlark.Value, error) {
				for k < len(c.parts) {
					if cur == nil {
						var err error
						if cur, err = c.parts[k].GetBatchSizeIterator(); err != nil {
							return nil, err
						}
					}
					n, err := cur.Next()
					if err == nil {
						return starlark.MakeInt(n), nil
					}
					if err != io.EOF {
						return nil, err
					}
					k, cur = k+1, nil
				}
				return nil, io.EOF
			}}, nil
		}), nil
	}
	return nil, nil
}

// foldsValue is what cross_validation returns: Fuel's generator of folds
// (next(folds)), which is also a list (len, folds[i], iteration).
type foldsValue struct {
	folds []starlark.Value
	err   error // the error of the first next()
	next  int
}

var (
	_ starlark.Indexable = (*foldsValue)(nil)
	_ starlark.Iterable  = (*foldsValue)(nil)
	_ starlib.Nexter     = (*foldsValue)(nil)
)

func (f *foldsValue) String() string {
	return fmt.Sprintf("<cross_validation: %d folds>", len(f.folds))
}
func (f *foldsValue) Type() string          { return "generator" }
func (f *foldsValue) Freeze()               {}
func (f *foldsValue) Truth() starlark.Bool  { return true }
func (f *foldsValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: generator") }
func (f *foldsValue) Len() int              { return len(f.folds) }
func (f *foldsValue) Index(i int) starlark.Value {
	return f.folds[i]
}
func (f *foldsValue) Iterate() starlark.Iterator { return &foldsIter{f: f} }

// NextBatch is the next fold (io.EOF after the last).
func (f *foldsValue) NextBatch() (starlark.Value, error) {
	if f.err != nil {
		return nil, fmt.Errorf("cross_validation: %s", strings.TrimPrefix(f.err.Error(), "schemes: cross_validation: "))
	}
	if f.next >= len(f.folds) {
		return nil, io.EOF
	}
	f.next++
	return f.folds[f.next-1], nil
}

type foldsIter struct {
	f *foldsValue
	i int
}

func (it *foldsIter) Next(p *starlark.Value) bool {
	if it.i >= len(it.f.folds) {
		return false
	}
	*p = it.f.folds[it.i]
	it.i++
	return true
}
func (it *foldsIter) Done() {}

// schemedIterable is DataStream(iterable_dataset, iteration_scheme=...):
// Fuel makes it (produces_examples follows the scheme) and fails when it
// is read, since an IterableDataset's get_data takes no request.
type schemedIterable struct {
	d fuel.IndexableDataset
	s schemes.Scheme
	// count is a ConstantScheme given instead of s (it only counts).
	count schemes.Lengther
}

func (s *schemedIterable) Sources() []string               { return s.d.Sources() }
func (s *schemedIterable) AxisLabels() map[string][]string { return s.d.AxisLabels() }
func (s *schemedIterable) ProducesExamples() bool          { return s.s != nil && s.s.RequestsExamples() }
func (s *schemedIterable) GetEpochIterator() (fuel.EpochIterator, error) {
	return nil, fmt.Errorf("DataStream: an IterableDataset takes no request: its examples come in order (make the stream without an iteration scheme)")
}

// transformSource is a sourcewise transformer's
// transform_source_example(example, source_name) or
// transform_source_batch(batch, source_name).
func (s *Stream) transformSource(name string) starlark.Value {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var v starlark.Value
		var source string
		what := "example"
		if name == "transform_source_batch" {
			what = "batch"
		}
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, what, &v, "source_name", &source); err != nil {
			return nil, err
		}
		inner := s.S
		if o, ok := inner.(*streamOverride); ok {
			inner = o.Stream
		}
		t, ok := inner.(interface {
			TransformSource(*nd.Array, string, bool) (*nd.Array, error)
		})
		if !ok {
			return nil, fmt.Errorf("%s: NotImplementedError: %s is not a sourcewise transformer", name, s.Name)
		}
		var a *nd.Array
		var err error
		if l, ok := v.(*starlark.List); ok && what == "batch" {
			// A list of examples stays a list (a ragged batch), as Fuel
			// treats a list batch example by example.
			parts := make([]*nd.Array, l.Len())
			for i := range parts {
				if parts[i], err = valueData(l.Index(i)); err != nil {
					return nil, fmt.Errorf("%s: %v", name, err)
				}
			}
			a = nd.Objects(parts)
		} else if a, err = valueData(v); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		out, err := t.TransformSource(a, source, what == "example")
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return dataValue(out), nil
	})
}
