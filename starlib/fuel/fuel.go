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
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Modules fuel.datasets, fuel.schemes, fuel.streams and fuel.transformers:
// Fuel's data layer.
//
// fuel.datasets:
//
//	MNIST(which_sets, subset=None, sources=None)   MNIST from the data path (FUEL_DATA_PATH):
//	    Fuel's mnist.hdf5, or the four idx files (gzipped or not); features uint8
//	    (N, 1, 28, 28), targets uint8 (N, 1); default stream scales features to [0, 1] in floatX
//	EmbeddedMNIST(which_sets, subset=None, sources=None)   the first 5,000 training and 1,000 test
//	    examples of MNIST, shipped inside the binary (for demos; not the full dataset)
//	IndexableDataset(indexables, start=None, stop=None, axis_labels=None, sources=None)
//	    from a dict of source name -> array or nested list
//	H5PYDataset(file_or_path, which_sets, subset=None, load_in_memory=False, driver=None, sort_indices=True, sources=None)
//	    static methods create_split_array(split_dict), get_all_splits(path), get_all_sources(path)
//	PytablesDataset(path, sources, start=0, stop=None, data_node="Data", sources_in_file=None)
//	    datasets /<data_node>/<source> of a PyTables-made file, rows [start, stop); close_file()
//	IterableDataset(iterables, sources=None, axis_labels=None)   from a dict of source name -> list of
//	    examples (shapes may differ); streamed in order, takes no iteration scheme
//	A dataset has num_examples, sources, provides_sources, axis_labels, get_data(request).
//
// fuel.schemes:
//
//	SequentialScheme(examples, batch_size)     examples: a count or a list of indices
//	ShuffledScheme(examples, batch_size, rng=None, sorted_indices=False)
//	    rng: a numpy.random.RandomState (default RandomState(default_seed): 1 unless
//	    .fuelrc says otherwise, as Fuel)
//	SequentialExampleScheme(examples), ShuffledExampleScheme(examples, rng=None)
//	ConstantScheme(batch_size, num_examples=None, times=None)   batch sizes, for Batch and Cache
//	ConcatenatedScheme(schemes)
//	cross_validation(scheme_class, num_examples, num_folds, strict=True, **kwargs)
//	    a list of (train, valid) schemes, or (train, valid, fold_size) with strict=False
//
// fuel.streams:
//
//	DataStream(dataset, iteration_scheme=None)
//	DataStream.default_stream(dataset, iteration_scheme=None)   with the dataset's default transformers
//	A stream has sources, axis_labels, produces_examples, get_epoch_iterator(as_dict=False)
//	(batches as tuples of arrays, or dicts with as_dict=True; a ragged batch is a list of
//	arrays), iterate_epochs(as_dict=False) (endless), reset(), next_epoch(), close(), and
//	resume_epoch_iterator(state, as_dict=False); data_stream (a transformer's), dataset and
//	iteration_scheme (a DataStream's), None where they do not apply. An epoch iterator has next() and get_state()
//	(its position as a JSON string). A stream error inside a for loop stops the script there.
//
// fuel.transformers:
//
//	Flatten(data_stream, which_sources=None)
//	ScaleAndShift(data_stream, scale, shift, which_sources=None)
//	Cast(data_stream, dtype, which_sources=None)    dtype may be "floatX"
//	ForceFloatX(data_stream, which_sources=None)
//	FilterSources(data_stream, sources)
//	Rename(data_stream, names, on_non_existent="raise")
//	Mapping(data_stream, mapping, add_sources=None, mapping_accepts=list)
//	    mapping(item_tuple) -> tuple (with mapping_accepts=dict: a dict of source -> value
//	    in and out), or a SortMapping
//	SortMapping(key, reverse=False)
//	Filter(data_stream, predicate)
//	Batch(data_stream, iteration_scheme, strictness=0)   iteration_scheme a ConstantScheme
//	Unpack(data_stream)
//	Padding(data_stream, mask_sources=None, mask_dtype=None)   adds <source>_mask sources
//	Cache(data_stream, iteration_scheme)
//	Merge(data_streams, sources, axis_labels=None)
//	MultiProcessing(data_stream, max_store=100)   prefetches on a goroutine
//
// fuel.transformers.image:
//
//	ImagesFromBytes(data_stream, color_mode="RGB", which_sources=None)
//	MinimumImageDimensions(data_stream, minimum_shape, resample="nearest", which_sources=None)
//	RandomFixedSizeCrop(data_stream, window_shape, rng=None, which_sources=None)
//	Random2DRotation(data_stream, maximum_rotation=pi, resample="nearest", rng=None, which_sources=None)
//
// fuel.transformers.sequences:
//
//	Window(offset, source_window, target_window, overlapping, data_stream, step_size=1, target_source="targets")
//	NGrams(ngram_order, data_stream, target_source="targets")
func fuelModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.datasets", Members: starlark.StringDict{
		"MNIST":            starlib.NewBuiltin("MNIST", mnistBuiltin(datasets.MNIST)),
		"EmbeddedMNIST":    starlib.NewBuiltin("EmbeddedMNIST", mnistBuiltin(datasets.EmbeddedMNIST)),
		"IndexableDataset": scriptIndexableDataset(starlib.NewBuiltin("IndexableDataset", indexableDataset)), // also a base: script_classes.go
		"H5PYDataset":      &h5pyClass{},
		"PytablesDataset":  starlib.NewBuiltin("PytablesDataset", pytablesDataset),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.schemes", Members: starlark.StringDict{
		"SequentialScheme":        starlib.NewBuiltin("SequentialScheme", schemeBuiltin),
		"ShuffledScheme":          starlib.NewBuiltin("ShuffledScheme", schemeBuiltin),
		"SequentialExampleScheme": starlib.NewBuiltin("SequentialExampleScheme", schemeBuiltin),
		"ShuffledExampleScheme":   starlib.NewBuiltin("ShuffledExampleScheme", schemeBuiltin),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.streams", Members: starlark.StringDict{
		"DataStream": newDataStreamBase(), // also a base: script_streams.go
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.transformers", Members: starlark.StringDict{
		"Flatten":       starlib.NewBuiltin("Flatten", transformerBuiltin),
		"ScaleAndShift": starlib.NewBuiltin("ScaleAndShift", transformerBuiltin),
		"Cast":          starlib.NewBuiltin("Cast", transformerBuiltin),
		"ForceFloatX":   starlib.NewBuiltin("ForceFloatX", transformerBuiltin),
		"FilterSources": starlib.NewBuiltin("FilterSources", transformerBuiltin),
		"Rename":        starlib.NewBuiltin("Rename", transformerBuiltin),
	}})
	return
}

func stringList(what string, v starlark.Value) ([]string, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	if s, ok := starlark.AsString(v); ok {
		return []string{s}, nil
	}
	out, elem, ok := starlib.Strings(v)
	switch {
	case !ok && elem == nil:
		return nil, fmt.Errorf("%s: got %s, want a tuple of strings", what, v.Type())
	case !ok:
		return nil, fmt.Errorf("%s: got %s in the list, want strings", what, elem.Type())
	}
	return out, nil
}

func subsetArg(v starlark.Value) (*datasets.Subset, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Tuple:
		if len(v) == 2 {
			var a, b int
			if starlark.AsInt(v[0], &a) == nil && starlark.AsInt(v[1], &b) == nil {
				return datasets.SliceSubset(a, b), nil
			}
		}
	case *starlib.SliceValue:
		// Fuel's subset=slice(start, stop): None bounds are the ends.
		var sub datasets.Subset
		for _, p := range []struct {
			v   starlark.Value
			dst **int
		}{{v.Start, &sub.Start}, {v.Stop, &sub.Stop}} {
			if p.v == starlark.None {
				continue
			}
			var n int
			if err := starlark.AsInt(p.v, &n); err != nil {
				return nil, fmt.Errorf("subset: %s: the bounds must be integers or None", v)
			}
			*p.dst = datasets.Int(n)
		}
		var step int
		if v.Step != starlark.None && (starlark.AsInt(v.Step, &step) != nil || step != 1) {
			return nil, fmt.Errorf("subset: %s: a subset slice must have step 1 (a list of indices selects other examples)", v)
		}
		return &sub, nil
	}
	if r, ok := v.(starlark.Indexable); ok && v.Type() == "range" && r.Len() > 1 {
		// A range of step 1 is the slice it spans; another step is the
		// list of its indices (as Fuel's Subset of a list).
		var a, b int
		if starlark.AsInt(r.Index(0), &a) == nil && starlark.AsInt(r.Index(1), &b) == nil && b == a+1 {
			var last int
			if starlark.AsInt(r.Index(r.Len()-1), &last) == nil {
				return datasets.SliceSubset(a, last+1), nil
			}
		}
	}
	if r, ok := v.(starlark.Indexable); ok && v.Type() == "range" {
		is := make([]int, r.Len())
		for i := range is {
			if err := starlark.AsInt(r.Index(i), &is[i]); err != nil {
				return nil, fmt.Errorf("subset: %s: %v", v, err)
			}
		}
		return datasets.ListSubset(is), nil
	}
	is, err := starlib.AsInts(v)
	if err != nil {
		return nil, fmt.Errorf("subset: want a slice, a (start, stop) tuple, a range or a list of indices, got %s", v.Type())
	}
	return datasets.ListSubset(is), nil
}

// h5Subset is a subset as fuel/h5 takes it.
func h5Subset(s *datasets.Subset) *h5.Subset {
	if s == nil || (s.Indices != nil && len(s.Indices) == 0) {
		return nil // Fuel: subset if subset else slice(None)
	}
	if s.Indices != nil {
		return h5.Indices(s.Indices...)
	}
	start, stop := 0, h5.End
	if s.Start != nil {
		start = *s.Start
	}
	if s.Stop != nil {
		stop = *s.Stop
	}
	return h5.Range(start, stop)
}

func mnistBuiltin(open func([]string, datasets.MNISTOptions) (*datasets.MNISTDataset, error)) starlib.BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var which, subset, sources starlark.Value = nil, starlark.None, starlark.None
		var loadInMemory bool
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "which_sets", &which, "subset?", &subset, "sources?", &sources, "load_in_memory?", &loadInMemory); err != nil {
			return nil, err
		}
		ws, err := stringList(b.Name()+": which_sets", which)
		if err != nil {
			return nil, err
		}
		opts := datasets.MNISTOptions{Settings: FuelSettings(thread)}
		if opts.Subset, err = subsetArg(subset); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		if opts.Sources, err = stringList(b.Name()+": sources", sources); err != nil {
			return nil, err
		}
		ds, err := open(ws, opts)
		if err != nil {
			return nil, err
		}
		return &Dataset{D: ds, name: b.Name()}, nil
	}
}

func indexableDataset(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var indexables starlark.Value
	var start, stop, labels, sources starlark.Value = starlark.None, starlark.None, starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "indexables", &indexables, "start?", &start, "stop?", &stop, "axis_labels?", &labels, "sources?", &sources); err != nil {
		return nil, err
	}
	var srcs []datasets.Source
	switch x := indexables.(type) {
	case *starlark.Dict:
		for _, kv := range x.Items() {
			name, ok := starlark.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("IndexableDataset: source names must be strings, got %s", kv[0].Type())
			}
			a, err := indexableSource(thread, kv[1])
			if err != nil {
				return nil, fmt.Errorf("IndexableDataset: source %s: %v", name, err)
			}
			srcs = append(srcs, datasets.Source{Name: name, Data: a})
		}
	default:
		a, err := indexableSource(thread, indexables)
		if err != nil {
			return nil, fmt.Errorf("IndexableDataset: %v", err)
		}
		srcs = append(srcs, datasets.Source{Name: "data", Data: a})
	}
	var opts datasets.IndexableOptions
	var err error
	for _, p := range []struct {
		v   starlark.Value
		dst **int
	}{{start, &opts.Start}, {stop, &opts.Stop}} {
		if p.v != starlark.None {
			var i int
			if err := starlark.AsInt(p.v, &i); err != nil {
				return nil, fmt.Errorf("IndexableDataset: %v", err)
			}
			*p.dst = &i
		}
	}
	if opts.Sources, opts.AxisLabels, err = sourcesAndLabels("IndexableDataset", sources, labels); err != nil {
		return nil, err
	}
	ds, err := datasets.NewIndexableDataset(srcs, opts)
	if err != nil {
		return nil, err
	}
	return &Dataset{D: ds, name: "IndexableDataset"}, nil
}

// hasFloat64 reports whether v is an ndarray of float64 (kept as is);
// nested lists of Python floats become floatX, as Theano users expect.
func hasFloat64(v starlark.Value) bool {
	a, ok := v.(*starlib.Array)
	return ok && a.A.DType() == nd.Float64
}

// Dataset is a Fuel dataset as a Starlark value.
type Dataset struct {
	D    fuel.IndexableDataset
	name string
	st   *starlib.ObjectState // a script class's instance (script_classes.go)
}

var _ starlark.HasAttrs = (*Dataset)(nil)

func (d *Dataset) String() string {
	if d.D == nil {
		return "<" + d.name + " object>"
	}
	return fmt.Sprintf("<%s: %d examples, sources %s>", d.name, d.D.NumExamples(), strings.Join(d.D.Sources(), ", "))
}
func (d *Dataset) Type() string          { return d.name }
func (d *Dataset) Freeze()               {}
func (d *Dataset) Truth() starlark.Bool  { return true }
func (d *Dataset) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: dataset") }

// AttrNames lists the dataset's attributes.
func (d *Dataset) AttrNames() []string {
	names := []string{"axis_labels", "get_data", "num_examples", "provides_sources", "sources"}
	if h5pyOf(d) != nil {
		names = append(names, h5pyAttrNames...)
		sort.Strings(names)
	}
	if _, ok := d.pytablesAttr("start"); ok {
		names = append(names, "close_file", "start", "stop")
		sort.Strings(names)
	}
	return names
}

// Attr returns an attribute: a script subclass's, the library's, then
// the subclass's __getattr__ (Python's fallback).
func (d *Dataset) Attr(name string) (starlark.Value, error) {
	v, err := d.attr(name)
	if v == nil && err == nil && d.st != nil {
		return starlib.ScriptGetattr(d, d.st, name)
	}
	return v, err
}

func (d *Dataset) attr(name string) (starlark.Value, error) {
	if d.st != nil {
		if v, found, err := starlib.ScriptAttr(d, d.st, name); found || err != nil {
			return v, err
		}
		if d.D == nil {
			if v, err := starlib.ScriptGetattr(d, d.st, name); v != nil || err != nil {
				return v, err
			}
			return nil, fmt.Errorf("'%s' object has no attribute '%s' yet (call super(%s, self).__init__(...) first)", d.name, name, d.name)
		}
		if sd, ok := d.D.(*scriptDataset); ok {
			if v := sd.baseAttr(name); v != nil {
				return v, nil
			}
			if name == "example_iteration_scheme" {
				// Fuel's property raises AttributeError, so Python
				// falls back to __getattr__.
				if v, err := starlib.ScriptGetattr(d, d.st, name); v != nil || err != nil {
					return v, err
				}
				return nil, fmt.Errorf("AttributeError: %s: dataset does not provide an example iteration scheme", d.name)
			}
		}
	}
	switch name {
	case "num_examples":
		return starlark.MakeInt(d.D.NumExamples()), nil
	case "sources":
		return strTuple(d.D.Sources()), nil
	case "provides_sources":
		if p, ok := d.D.(interface{ ProvidesSources() []string }); ok {
			return strTuple(p.ProvidesSources()), nil
		}
		return strTuple(d.D.Sources()), nil
	case "axis_labels":
		return labelsValue(d.D.AxisLabels()), nil
	}
	if v, ok := d.h5pyAttr(name); ok {
		return v, nil
	}
	if v, ok := d.pytablesAttr(name); ok {
		return v, nil
	}
	return d.protocolAttr(name)
}

func strTuple(ss []string) starlark.Tuple {
	t := make(starlark.Tuple, len(ss))
	for i, s := range ss {
		t[i] = starlark.String(s)
	}
	return t
}

func labelsDict(m map[string][]string) *starlark.Dict {
	d := starlark.NewDict(len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.SetKey(starlark.String(k), strTuple(m[k]))
	}
	return d
}

func arrayTuple(arrays []*nd.Array) starlark.Tuple {
	t := make(starlark.Tuple, len(arrays))
	for i, a := range arrays {
		t[i] = dataValue(a)
	}
	return t
}

// Scheme is an iteration scheme as a Starlark value.
type SchemeValue struct {
	S    schemes.Scheme
	name string
	st   *starlib.ObjectState // a script class's instance (script_classes.go)
}

func (s *SchemeValue) String() string        { return "<" + s.name + ">" }
func (s *SchemeValue) Type() string          { return s.name }
func (s *SchemeValue) Freeze()               {}
func (s *SchemeValue) Truth() starlark.Bool  { return true }
func (s *SchemeValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: scheme") }

func schemeBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var examples starlark.Value
	batchSize := 0
	var rng starlark.Value = starlark.None
	sorted := false
	var err error
	switch b.Name() {
	case "SequentialScheme":
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "examples", &examples, "batch_size", &batchSize)
	case "ShuffledScheme":
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "examples", &examples, "batch_size", &batchSize, "rng?", &rng, "sorted_indices?", &sorted)
	case "SequentialExampleScheme":
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "examples", &examples)
	case "ShuffledExampleScheme":
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "examples", &examples, "rng?", &rng)
	}
	if err != nil {
		return nil, err
	}
	var ex schemes.Examples
	var n int
	if starlark.AsInt(examples, &n) == nil {
		ex = schemes.Range(n)
	} else if is, err := indexList(examples); err == nil {
		ex = schemes.List(is)
	} else {
		return nil, fmt.Errorf("%s: examples must be a number of examples or a list of indices, got %s", b.Name(), examples.Type())
	}
	var shuffler schemes.Shuffler
	if strings.HasPrefix(b.Name(), "Shuffled") {
		if rng == starlark.None {
			// RandomState(config.default_seed), as Fuel.
			if r := fuelDefaultRNG(thread); r != nil {
				shuffler = r
			}
		} else if r, ok := rng.(*starlib.RandomState); ok {
			shuffler = r.R
		} else {
			return nil, fmt.Errorf("%s: rng must be a numpy.random.RandomState, got %s", b.Name(), rng.Type())
		}
	}
	var s schemes.Scheme
	switch b.Name() {
	case "SequentialScheme":
		s, err = schemes.SequentialScheme(ex, batchSize)
	case "ShuffledScheme":
		s, err = schemes.ShuffledScheme(ex, batchSize, shuffler, sorted)
	case "SequentialExampleScheme":
		s, err = schemes.SequentialExampleScheme(ex)
	case "ShuffledExampleScheme":
		s, err = schemes.ShuffledExampleScheme(ex, shuffler)
	}
	if err != nil {
		return nil, err
	}
	return &SchemeValue{S: s, name: b.Name()}, nil
}

// dataStreamClass is fuel.streams.DataStream: callable, with the static
// method default_stream.
type dataStreamClass struct{}

func (*dataStreamClass) String() string        { return "<class 'DataStream'>" }
func (*dataStreamClass) Type() string          { return "class" }
func (*dataStreamClass) Name() string          { return "DataStream" }
func (*dataStreamClass) Freeze()               {}
func (*dataStreamClass) Truth() starlark.Bool  { return true }
func (*dataStreamClass) Hash() (uint32, error) { return starlark.String("DataStream").Hash() }
func (*dataStreamClass) AttrNames() []string   { return []string{"default_stream"} }
func (c *dataStreamClass) Attr(name string) (starlark.Value, error) {
	if name == "default_stream" {
		return starlib.NewBuiltin("default_stream", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return makeStream(thread, b.Name(), args, kwargs, true)
		}), nil
	}
	return nil, nil
}
func (c *dataStreamClass) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return makeStream(thread, "DataStream", args, kwargs, false)
}

func makeStream(thread *starlark.Thread, name string, args starlark.Tuple, kwargs []starlark.Tuple, defaults bool) (starlark.Value, error) {
	var dataset starlark.Value
	var scheme, labels starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(name, args, kwargs, "dataset", &dataset, "iteration_scheme?", &scheme, "axis_labels?", &labels); err != nil {
		return nil, err
	}
	if labels != starlark.None {
		v, err := makeStream(thread, name, starlark.Tuple{dataset, scheme}, nil, defaults)
		if err != nil {
			return nil, err
		}
		st := v.(*Stream)
		if err := st.SetField("axis_labels", labels); err != nil {
			return nil, err
		}
		if o := st.S.(*streamOverride); o.ProducesExamples() {
			// As Fuel's DataStream: an example has no batch axis.
			for k, l := range o.labels {
				if l != nil {
					o.labels[k] = slices.DeleteFunc(slices.Clone(l), func(x string) bool { return x == "batch" })
				}
			}
		}
		return st, nil
	}
	if it, ok := dataset.(*IterableDatasetValue); ok {
		// TextFile and other datasets read in order: a stream of their
		// examples, as Fuel's DataStream(TextFile(...)).
		if scheme != starlark.None {
			return nil, fmt.Errorf("%s: %s takes no iteration scheme (it is read in order)", name, it.Type())
		}
		return &Stream{S: datasets.GetExampleStream(it.D), Name: "DataStream"}, nil
	}
	ds, ok := dataset.(*Dataset)
	if !ok {
		return nil, fmt.Errorf("%s: dataset must be a Fuel dataset, got %s", name, dataset.Type())
	}
	if ds.hasOwnState() {
		return newScriptDataStream(thread, name, ds, scheme) // script_datastream.go
	}
	var s schemes.Scheme
	if sv, ok := scheme.(*SchemeValue); ok {
		s = sv.S
	} else if cv, ok := scheme.(*ConstantSchemeValue); ok && ds.isIterable() {
		// Fuel makes it (and refuses the requests when it is read).
		return &Stream{S: &schemedIterable{d: ds.D, count: cv.S}, Name: "DataStream"}, nil
	} else if scheme != starlark.None {
		return nil, fmt.Errorf("%s: iteration_scheme must be a scheme from fuel.schemes, got %s", name, scheme.Type())
	}
	if s != nil && ds.isIterable() {
		// Fuel makes the stream and refuses the requests when it is read.
		return &Stream{S: &schemedIterable{d: ds.D, s: s}, Name: "DataStream"}, nil
	}
	var st fuel.Stream
	var err error
	if defaults {
		st, err = streams.DefaultStream(ds.D, s)
	} else {
		st, err = streams.DataStream(ds.D, s)
	}
	if err != nil {
		return nil, err
	}
	return &Stream{S: st, Name: "DataStream"}, nil
}

// Stream is a Fuel stream (or transformer) as a Starlark value.
type Stream struct {
	S    fuel.Stream
	Name string
	// last is the latest epoch iterator made (Cache's cache is its).
	last *EpochIterator
	st   *starlib.ObjectState // a script class's instance (script_classes.go)
	// wrapped are the streams as the script gave them (Merge's): close,
	// reset and next_epoch call theirs (a script stream's overrides).
	wrapped []*Stream
}

var _ starlark.HasAttrs = (*Stream)(nil)

func (s *Stream) String() string {
	if s.S == nil {
		return "<" + s.Name + " object>"
	}
	return fmt.Sprintf("<%s: sources %s>", s.Name, strings.Join(s.S.Sources(), ", "))
}
func (s *Stream) Type() string          { return s.Name }
func (s *Stream) Freeze()               {}
func (s *Stream) Truth() starlark.Bool  { return true }
func (s *Stream) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: stream") }

// AttrNames lists the stream's attributes.
func (s *Stream) AttrNames() []string {
	return []string{"axis_labels", "close", "data_stream", "dataset", "get_epoch_iterator", "iteration_scheme", "iterate_epochs", "next_epoch", "produces_examples", "reset", "resume_epoch_iterator", "sources"}
}

// Attr returns an attribute: a script subclass's, the library's, then
// the subclass's __getattr__ (Python's fallback).
func (s *Stream) Attr(name string) (starlark.Value, error) {
	v, err := s.attr(name)
	if v == nil && err == nil && s.st != nil {
		return starlib.ScriptGetattr(s, s.st, name)
	}
	return v, err
}

func (s *Stream) attr(name string) (starlark.Value, error) {
	if s.st != nil {
		if v, found, err := starlib.ScriptAttr(s, s.st, name); found || err != nil {
			return v, err
		}
		if s.S == nil {
			if v, err := starlib.ScriptGetattr(s, s.st, name); v != nil || err != nil {
				return v, err
			}
			return nil, fmt.Errorf("'%s' object has no attribute '%s' yet (call super(%s, self).__init__(...) first)", s.Name, name, s.Name)
		}
		if v, ok, err := s.scriptBaseAttr(name); ok {
			return v, err
		}
	}
	switch name {
	case "sources":
		return strTuple(s.S.Sources()), nil
	case "axis_labels":
		return labelsValue(s.S.AxisLabels()), nil
	case "produces_examples":
		return starlark.Bool(s.S.ProducesExamples()), nil
	case "get_epoch_iterator":
		return starlib.NewBuiltin("get_epoch_iterator", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			asDict := false
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "as_dict?", &asDict); err != nil {
				return nil, err
			}
			it, err := s.S.GetEpochIterator()
			if err != nil {
				return nil, err
			}
			s.last = &EpochIterator{It: it, Sources: s.S.Sources(), AsDict: asDict, thread: thread}
			return s.last, nil
		}).BindReceiver(s), nil
	}
	switch name {
	case "get_data":
		return s.streamGetData(), nil
	case "cache":
		return s.cacheAttr()
	case "transform_source_example", "transform_source_batch":
		return s.transformSource(name), nil
	}
	if m := s.streamMethod(name); m != nil {
		return m, nil
	}
	return s.structureAttr(name), nil
}

// EpochIterator iterates over one epoch's batches (a Starlark iterable, and
// next(it) works through the builtin next if the interpreter provides it).
type EpochIterator struct {
	It      fuel.EpochIterator
	Sources []string
	AsDict  bool
	err     error
	// thread, when set, is cancelled with a stream error met inside a
	// for loop (Starlark iterators cannot return errors), so the script
	// stops at the loop with the error instead of ending the epoch early.
	thread *starlark.Thread
}

var (
	_ starlark.Iterable = (*EpochIterator)(nil)
	_ starlark.HasAttrs = (*EpochIterator)(nil)
)

// Attr returns the iterator's methods get_state and next.
func (e *EpochIterator) Attr(name string) (starlark.Value, error) { return e.iteratorMethod(name), nil }

// AttrNames lists the iterator's methods.
func (e *EpochIterator) AttrNames() []string { return []string{"get_state", "next"} }

func (e *EpochIterator) String() string        { return "<epoch iterator>" }
func (e *EpochIterator) Type() string          { return "DataIterator" }
func (e *EpochIterator) Freeze()               {}
func (e *EpochIterator) Truth() starlark.Bool  { return true }
func (e *EpochIterator) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: iterator") }

// Iterate walks the remaining batches.
func (e *EpochIterator) Iterate() starlark.Iterator { return &epochIter{e} }

// NextBatch returns the next batch, or (nil, io.EOF).
func (e *EpochIterator) NextBatch() (v starlark.Value, err error) {
	defer starlib.RecoverInternal("the data stream", &err) // a for loop has no builtin to recover for it
	arrays, err := e.It.Next()
	if err != nil {
		return nil, err
	}
	if !e.AsDict {
		return arrayTuple(arrays), nil
	}
	d := starlark.NewDict(len(arrays))
	for i, a := range arrays {
		d.SetKey(starlark.String(e.Sources[i]), dataValue(a))
	}
	return d, nil
}

type epochIter struct{ e *EpochIterator }

func (it *epochIter) Next(p *starlark.Value) bool {
	v, err := it.e.NextBatch()
	if err != nil {
		if err != io.EOF {
			it.e.err = err
			if it.e.thread != nil {
				it.e.thread.Cancel("data stream error: " + err.Error())
			}
		}
		return false
	}
	*p = v
	return true
}
func (it *epochIter) Done() {}

func transformerBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	var which starlark.Value = starlark.None
	var err error
	var t fuel.Stream
	switch b.Name() {
	case "Flatten", "ForceFloatX":
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "which_sources?", &which); err != nil {
			return nil, err
		}
		ws, err := stringList(b.Name()+": which_sources", which)
		if err != nil {
			return nil, err
		}
		if b.Name() == "Flatten" {
			t, err = transformers.Flatten(st.S, ws)
		} else {
			t, err = transformers.ForceFloatXAs(st.S, starlib.FloatX(thread), ws)
		}
		if err != nil {
			return nil, err
		}
	case "ScaleAndShift":
		var scale, shift starlib.FloatArg
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "scale", &scale, "shift", &shift, "which_sources?", &which); err != nil {
			return nil, err
		}
		ws, err := stringList(b.Name()+": which_sources", which)
		if err != nil {
			return nil, err
		}
		if t, err = transformers.ScaleAndShift(st.S, float64(scale), float64(shift), ws); err != nil {
			return nil, err
		}
	case "Cast":
		var dtype string
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "dtype", &dtype, "which_sources?", &which); err != nil {
			return nil, err
		}
		ws, err := stringList(b.Name()+": which_sources", which)
		if err != nil {
			return nil, err
		}
		if dtype == "floatX" {
			dtype = starlib.FloatX(thread).String() // the run's floatX
		}
		if t, err = transformers.Cast(st.S, dtype, ws); err != nil {
			return nil, err
		}
	case "FilterSources":
		var sources starlark.Value
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "sources", &sources); err != nil {
			return nil, err
		}
		ss, err := stringList("FilterSources: sources", sources)
		if err != nil {
			return nil, err
		}
		if t, err = transformers.FilterSources(st.S, ss); err != nil {
			return nil, err
		}
	case "Rename":
		var names *starlark.Dict
		onNon := "raise"
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "names", &names, "on_non_existent?", &onNon); err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, kv := range names.Items() {
			k, ok1 := starlark.AsString(kv[0])
			v, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("Rename: names must map strings to strings")
			}
			m[k] = v
		}
		if t, err = transformers.Rename(st.S, m, onNon); err != nil {
			return nil, err
		}
	}
	return &Stream{S: t, Name: b.Name()}, err
}

// sourcesAndLabels reads the sources and axis_labels arguments of what
// (a dataset or stream class).
func sourcesAndLabels(what string, sources, labels starlark.Value) ([]string, map[string][]string, error) {
	ss, err := stringList(what+": sources", sources)
	if err != nil {
		return nil, nil, err
	}
	lab, err := axisLabelsArg(what, labels)
	if err != nil {
		return nil, nil, err
	}
	return ss, lab, nil
}

// axisLabelsArg reads an axis_labels argument: None, or a dict from source
// names to sequences of axis names.
func axisLabelsArg(what string, v starlark.Value) (map[string][]string, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("%s: axis_labels must be a dict or None, got %s", what, v.Type())
	}
	out := make(map[string][]string, d.Len())
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("%s: axis_labels keys must be source names, got %s", what, kv[0].Type())
		}
		labels, err := stringList(what+": axis_labels", kv[1])
		if err != nil {
			return nil, err
		}
		out[k] = labels
	}
	return out, nil
}
