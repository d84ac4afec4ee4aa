package fuel

import (
	"errors"
	"fmt"
	"io"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Fuel's streams as bases of script classes (starlib/classes.go):
//
//	DataStream(dataset, iteration_scheme=None, axis_labels=None) (fuel.streams)
//	    a subclass overrides close, reset, next_epoch (super(C, self).close() runs the base's)
//	AbstractDataStream(iteration_scheme=None, axis_labels=None) (fuel.streams)
//	    a subclass sets sources and defines get_data(self, request=None); produces_examples is
//	    Fuel's property (the scheme's requests_examples, else what the instance set, else an error)
//
// and the base methods of a Transformer (also called directly:
// Transformer(data_stream, produces_examples=True)): close, reset and
// next_epoch call the wrapped stream's (a script stream's overrides
// included), get_data(request=None) transforms the wrapped stream's next
// item, and the transform methods the class does not define raise
// NotImplementedError.

// dataStreamBase is fuel.streams.DataStream: the constructor (with
// default_stream) and the base of script classes.
type dataStreamBase struct {
	*starlib.LibClass
	cls *dataStreamClass
}

var _ starlark.Callable = (*dataStreamBase)(nil)

func newDataStreamBase() *dataStreamBase {
	cls := &dataStreamClass{}
	return &dataStreamBase{cls: cls, LibClass: &starlib.LibClass{State: true, ClassName: "DataStream",
		IsInst: func(v starlark.Value) bool { _, ok := v.(*Stream); return ok },
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			return &Stream{Name: st.Class.Name(), st: st}, nil
		},
		Init: func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
			v, err := cls.CallInternal(thread, args, kwargs)
			if err != nil {
				return err
			}
			self.(*Stream).S = v.(*Stream).S
			return nil
		},
		Super: func(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
			s := self.(*Stream)
			if s.S == nil {
				return nil, nil
			}
			return (&Stream{S: s.S, Name: "DataStream"}).Attr(name)
		}}}
}

func (d *dataStreamBase) Name() string                          { return "DataStream" }
func (d *dataStreamBase) AttrNames() []string                   { return d.cls.AttrNames() }
func (d *dataStreamBase) Attr(n string) (starlark.Value, error) { return d.cls.Attr(n) }

// CallInternal is DataStream(...).
func (d *dataStreamBase) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return d.cls.CallInternal(thread, args, kwargs)
}

// abstractDataStreamBase is fuel.streams.AbstractDataStream.
func abstractDataStreamBase() *starlib.LibClass {
	return &starlib.LibClass{State: true, ClassName: "AbstractDataStream",
		IsInst: func(v starlark.Value) bool { _, ok := v.(*Stream); return ok },
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			s := &Stream{Name: st.Class.Name(), st: st}
			s.S = &scriptAbstractStream{thread: thread, self: s}
			return s, nil
		},
		Init: func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
			s := self.(*Stream)
			var scheme, labels starlark.Value = starlark.None, starlark.None
			if err := starlark.UnpackArgs("AbstractDataStream.__init__", args, kwargs, "iteration_scheme?", &scheme, "axis_labels?", &labels); err != nil {
				return err
			}
			if scheme != starlark.None {
				if _, ok := scheme.(*SchemeValue); !ok {
					return fmt.Errorf("AbstractDataStream: iteration_scheme must be an iteration scheme, got %s", scheme.Type())
				}
			}
			s.st.Set("iteration_scheme", scheme)
			s.st.Set("axis_labels", labels)
			return nil
		},
		Super: func(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
			return self.(*Stream).S.(*scriptAbstractStream).baseAttr(name), nil
		}}
}

// scriptAbstractStream is an AbstractDataStream subclass's stream: each
// request of its iteration scheme goes to its get_data.
type scriptAbstractStream struct {
	thread *starlark.Thread
	self   *Stream
}

func (a *scriptAbstractStream) attr(name string) starlark.Value {
	v, _, err := starlib.ScriptAttr(a.self, a.self.st, name)
	if err != nil {
		return nil
	}
	return v
}

func (a *scriptAbstractStream) scheme() *SchemeValue {
	s, _ := a.attr("iteration_scheme").(*SchemeValue)
	return s
}

// producesExamples is Fuel's property.
func (a *scriptAbstractStream) producesExamples() (bool, error) {
	if s := a.scheme(); s != nil {
		return s.S.RequestsExamples(), nil
	}
	if v, ok := a.self.st.Get("_produces_examples"); ok {
		return bool(v.Truth()), nil
	}
	return false, fmt.Errorf("ValueError: cannot infer type of stream for %s instance; set the produces_examples attribute to True (for example streams) or False (for batch streams).", a.self.st.Class.Name())
}

func (a *scriptAbstractStream) setProducesExamples(v starlark.Value) error {
	if s := a.scheme(); s != nil {
		return fmt.Errorf("ValueError: cannot set produces_examples on %s instance; determined by iteration scheme %s", a.self.st.Class.Name(), s)
	}
	a.self.st.Set("_produces_examples", v)
	return nil
}

func (a *scriptAbstractStream) Sources() []string {
	ss, _ := stringList("sources", a.attr("sources"))
	return ss
}

func (a *scriptAbstractStream) AxisLabels() map[string][]string {
	l, _ := axisLabelsArg(a.self.st.Class.Name(), a.attr("axis_labels"))
	return l
}

func (a *scriptAbstractStream) ProducesExamples() bool {
	b, _ := a.producesExamples()
	return b
}

// GetEpochIterator asks get_data for each request of the scheme.
func (a *scriptAbstractStream) GetEpochIterator() (fuel.EpochIterator, error) {
	cls := a.self.st.Class.Name()
	s := a.scheme()
	if s == nil {
		return nil, fmt.Errorf("%s: an AbstractDataStream subclass without an iteration scheme defines get_epoch_iterator; this one has neither", cls)
	}
	reqs, err := s.S.GetRequestIterator()
	if err != nil {
		return nil, err
	}
	getData := a.attr("get_data")
	if getData == nil {
		return nil, fmt.Errorf("%s: an AbstractDataStream subclass defines get_data(self, request=None)", cls)
	}
	return &abstractIter{a: a, next: func() (starlark.Value, error) {
		r, err := reqs.Next()
		if err != nil {
			return nil, err
		}
		var req starlark.Value
		if r.Single && r.Indices != nil {
			req = starlark.MakeInt(r.Indices[0])
		} else {
			is := r.Indices
			if is == nil {
				for i := r.Start; i < r.Stop; i++ {
					is = append(is, i)
				}
			}
			l := make([]starlark.Value, len(is))
			for i, x := range is {
				l[i] = starlark.MakeInt(x)
			}
			req = starlark.NewList(l)
		}
		return starlark.Call(a.thread, getData, starlark.Tuple{req}, nil)
	}}, nil
}

type abstractIter struct {
	a    *scriptAbstractStream
	next func() (starlark.Value, error)
}

func (it *abstractIter) Next() ([]*nd.Array, error) {
	v, err := it.next()
	if err != nil {
		return nil, err
	}
	cls := it.a.self.st.Class.Name()
	seq, ok := v.(starlark.Indexable)
	n := len(it.a.Sources())
	if !ok || seq.Len() != n {
		return nil, fmt.Errorf("%s.get_data returned %s, want a tuple with one value per source (%d)", cls, v.Type(), n)
	}
	out := make([]*nd.Array, n)
	for i := range out {
		if out[i], err = valueData(seq.Index(i)); err != nil {
			return nil, fmt.Errorf("%s.get_data: value %d: %v", cls, i, err)
		}
	}
	return out, nil
}

// baseAttr is AbstractDataStream's own methods: get_data raises
// NotImplementedError; reset, close and next_epoch do nothing.
func (a *scriptAbstractStream) baseAttr(name string) starlark.Value {
	switch name {
	case "get_data":
		return notImplemented("AbstractDataStream.get_data")
	case "reset", "close", "next_epoch":
		return noop(name)
	}
	return nil
}

func notImplemented(name string) starlark.Value {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		return nil, fmt.Errorf("NotImplementedError: %s", name)
	})
}

func noop(name string) starlark.Value {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
			return nil, err
		}
		return starlark.None, nil
	})
}

// baseAttr is a script transformer's base methods: close, reset and
// next_epoch call the wrapped stream's; get_data(request=None) is Fuel's
// Transformer.get_data; a transform method the class does not define
// raises NotImplementedError.
func (t *scriptTransformer) baseAttr(name string) starlark.Value {
	switch name {
	case "close", "reset", "next_epoch":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			if name == "reset" || name == "next_epoch" {
				t.childIter = nil
			}
			m, err := t.child.Attr(name)
			if err != nil || m == nil {
				return starlark.None, err
			}
			return starlark.Call(thread, m, nil, nil)
		})
	case "get_data":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var request starlark.Value = starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "request?", &request); err != nil {
				return nil, err
			}
			if request != starlark.None {
				return nil, fmt.Errorf("ValueError: %s.get_data: a transformer takes no request, got %s", t.self.st.Class.Name(), request)
			}
			return t.getData(thread)
		})
	case "transform_example", "transform_batch", "transform_source_example", "transform_source_batch", "transform_any", "transform_any_source":
		return notImplemented(t.kind + "." + name)
	}
	return nil
}

// producesExamples is the instance's produces_examples (an attribute the
// script set wins over the constructor's).
func (t *scriptTransformer) producesExamples() bool {
	if v, ok := t.self.st.Get("produces_examples"); ok {
		return bool(v.Truth())
	}
	return t.produces
}

// getData is Fuel's Transformer.get_data(): the wrapped stream's next
// item, transformed.
func (t *scriptTransformer) getData(thread *starlark.Thread) (starlark.Value, error) {
	if t.childIter == nil {
		it, err := t.inner.GetEpochIterator()
		if err != nil {
			return nil, err
		}
		t.childIter = it
	}
	data, err := t.childIter.Next()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("StopIteration: the epoch of the wrapped stream is over")
	}
	if err != nil {
		return nil, err
	}
	if t.producesExamples() != t.inner.ProducesExamples() {
		kind := map[bool]string{true: "examples", false: "batches"}
		return nil, fmt.Errorf("NotImplementedError: the wrapped data stream produces %s while the %s transformer produces %s, which it does not support",
			kind[t.inner.ProducesExamples()], t.self.st.Class.Name(), kind[t.producesExamples()])
	}
	out, err := t.transform(data)
	if err != nil {
		return nil, err
	}
	tup := make(starlark.Tuple, len(out))
	for i, a := range out {
		tup[i] = dataValue(a)
	}
	return tup, nil
}

// transformerClass is a Transformer base, also called directly
// (Transformer(data_stream, produces_examples=True): an instance of the
// base itself).
type transformerClass struct {
	*starlib.LibClass
}

var _ starlark.Callable = (*transformerClass)(nil)

// CallInternal makes an instance of the base class itself.
func (c *transformerClass) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	cls, err := starlib.NewClass(thread, starlib.NewObjectClass(), c.ClassName, starlark.Tuple{c.LibClass}, starlark.NewDict(0))
	if err != nil {
		return nil, err
	}
	return starlark.Call(thread, cls, args, kwargs)
}

// scriptBaseAttr is a script stream's attribute from its library base
// (a transformer's close, get_data, ...; an AbstractDataStream's
// produces_examples); ok is false when the base has none.
func (s *Stream) scriptBaseAttr(name string) (starlark.Value, bool, error) {
	switch x := s.S.(type) {
	case *scriptTransformer:
		if v := x.baseAttr(name); v != nil {
			return v, true, nil
		}
		if name == "produces_examples" {
			return starlark.Bool(x.producesExamples()), true, nil
		}
	case *scriptAbstractStream:
		if name == "produces_examples" {
			b, err := x.producesExamples()
			return starlark.Bool(b), true, err
		}
		if v := x.baseAttr(name); v != nil {
			return v, true, nil
		}
	}
	return nil, false, nil
}

// datasetBase is fuel.datasets.Dataset as the base of a script class:
// the class sets provides_sources and defines get_data(self, state=None,
// request=None), and may define open() (the state get_data is given;
// None by default) and num_examples. In a DataStream each request of the
// scheme goes to get_data: an index, or a list of indices.
func datasetBase() *starlib.LibClass {
	return &starlib.LibClass{State: true, ClassName: "Dataset",
		IsInst: func(v starlark.Value) bool { _, ok := v.(*Dataset); return ok },
		New: func(thread *starlark.Thread, st *starlib.ObjectState) (starlark.Value, error) {
			d := &Dataset{name: st.Class.Name(), st: st}
			d.D = &scriptDataset{thread: thread, self: d}
			return d, nil
		},
		Init: func(thread *starlark.Thread, self starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
			d := self.(*Dataset)
			var sources, labels starlark.Value = starlark.None, starlark.None
			if err := starlark.UnpackArgs("Dataset.__init__", args, kwargs, "sources?", &sources, "axis_labels?", &labels); err != nil {
				return err
			}
			sd := d.D.(*scriptDataset)
			provides := sd.provides()
			if len(provides) == 0 {
				return fmt.Errorf("ValueError: %s: dataset does not have `provides_sources`", d.name)
			}
			if sources != starlark.None {
				ss, err := stringList(d.name+": sources", sources)
				if err != nil || len(ss) == 0 {
					return fmt.Errorf("ValueError: %s: unable to provide requested sources", d.name)
				}
				for _, s := range ss {
					if !contains(provides, s) {
						return fmt.Errorf("ValueError: %s: unable to provide requested sources", d.name)
					}
				}
				d.st.Set("sources", sources)
			}
			d.st.Set("axis_labels", labels)
			return nil
		},
		Super: func(thread *starlark.Thread, self starlark.Value, name string) (starlark.Value, error) {
			return self.(*Dataset).D.(*scriptDataset).baseAttr(name), nil
		}}
}

// scriptDataset is a Dataset subclass's data.
type scriptDataset struct {
	thread *starlark.Thread
	self   *Dataset
	state  starlark.Value // what open() returned; nil: not opened
}

func (s *scriptDataset) attr(name string) starlark.Value {
	v, _, err := starlib.ScriptAttr(s.self, s.self.st, name)
	if err != nil || v == nil {
		return nil
	}
	return v
}

func (s *scriptDataset) provides() []string {
	v := s.attr("provides_sources")
	if v == nil || v == starlark.None {
		return nil
	}
	ss, _ := stringList("provides_sources", v)
	return ss
}

// Sources are the sources attribute, else provides_sources.
func (s *scriptDataset) Sources() []string {
	if v := s.attr("sources"); v != nil && v != starlark.None {
		if ss, err := stringList("sources", v); err == nil {
			return ss
		}
	}
	return s.provides()
}

func (s *scriptDataset) ProvidesSources() []string { return s.provides() }

func (s *scriptDataset) AxisLabels() map[string][]string {
	v := s.attr("axis_labels")
	if v == nil || v == starlark.None {
		return nil
	}
	l, _ := axisLabelsArg(s.self.name, v)
	return l
}

// NumExamples is the num_examples attribute, -1 without one.
func (s *scriptDataset) NumExamples() int {
	var n int
	if v := s.attr("num_examples"); v != nil && starlark.AsInt(v, &n) == nil {
		return n
	}
	return -1
}

// GetData calls get_data(state, request), state being open()'s (called
// once, on the first request).
func (s *scriptDataset) GetData(r fuel.Request) ([]*nd.Array, error) {
	cls := s.self.name
	if s.state == nil {
		open := s.attr("open")
		if open == nil {
			return nil, fmt.Errorf("%s: no open()", cls)
		}
		st, err := starlark.Call(s.thread, open, nil, nil)
		if err != nil {
			return nil, err
		}
		s.state = st
	}
	getData, _, err := starlib.ScriptAttr(s.self, s.self.st, "get_data")
	if err != nil {
		return nil, err
	}
	if getData == nil {
		return nil, fmt.Errorf("%s: a Dataset subclass defines get_data(self, state=None, request=None)", cls)
	}
	v, err := starlark.Call(s.thread, getData, starlark.Tuple{s.state, requestValue(r)}, nil)
	if err != nil {
		return nil, err
	}
	return itemArrays(cls, v, len(s.Sources()))
}

// baseAttr is Dataset's own attributes and methods: sources (the
// provides_sources), example_iteration_scheme (AttributeError unless
// _example_iteration_scheme is set), get_example_stream, open (None),
// reset and next_epoch (close, then open), close (nothing), get_data
// (NotImplementedError).
func (s *scriptDataset) baseAttr(name string) starlark.Value {
	cls := s.self.name
	b := func(fn func(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)) starlark.Value {
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return fn(thread, args, kwargs)
		})
	}
	switch name {
	case "sources":
		return strTuple(s.Sources())
	case "open":
		return b(func(*starlark.Thread, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.None, nil
		})
	case "close":
		return b(func(*starlark.Thread, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.None, nil
		})
	case "reset", "next_epoch":
		return b(func(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var state starlark.Value
			if err := starlark.UnpackArgs(cls+"."+name, args, kwargs, "state", &state); err != nil {
				return nil, err
			}
			if m := s.attr("close"); m != nil {
				if _, err := starlark.Call(thread, m, starlark.Tuple{state}, nil); err != nil {
					return nil, err
				}
			}
			if m := s.attr("open"); m != nil {
				return starlark.Call(thread, m, nil, nil)
			}
			return starlark.None, nil
		})
	case "get_data":
		return notImplemented(cls + ".get_data")
	case "example_iteration_scheme":
		if v, ok := s.self.st.Get("_example_iteration_scheme"); ok {
			return v
		}
		if v, _ := s.self.st.Class.Lookup("_example_iteration_scheme"); v != nil {
			return v
		}
		return nil
	}
	return nil
}
