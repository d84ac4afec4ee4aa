package fuel

import (
	"fmt"
	"io"
	"math"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/starlib"
)

// This file adds Fuel's batching, padding, caching, merging, prefetching,
// image and sequence transformers, ConstantScheme, ConcatenatedScheme and
// cross_validation to fuel.schemes and fuel.transformers (+ .image,
// .sequences); docs/fuel-streams.md is their reference.

func streamsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.schemes", Members: starlark.StringDict{
		"ConstantScheme":     starlib.NewBuiltin("ConstantScheme", constantScheme),
		"ConcatenatedScheme": starlib.NewBuiltin("ConcatenatedScheme", concatenatedScheme),
		"cross_validation":   starlib.NewBuiltin("cross_validation", crossValidation),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.transformers", Members: starlark.StringDict{
		"Mapping":         starlib.NewBuiltin("Mapping", mappingBuiltin),
		"SortMapping":     starlib.NewBuiltin("SortMapping", sortMappingBuiltin),
		"Filter":          starlib.NewBuiltin("Filter", filterBuiltin),
		"Batch":           starlib.NewBuiltin("Batch", batchBuiltin),
		"Cache":           starlib.NewBuiltin("Cache", batchBuiltin),
		"Unpack":          starlib.NewBuiltin("Unpack", unpackBuiltin),
		"Padding":         starlib.NewBuiltin("Padding", paddingBuiltin),
		"Merge":           starlib.NewBuiltin("Merge", mergeBuiltin),
		"MultiProcessing": starlib.NewBuiltin("MultiProcessing", multiProcessingBuiltin),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.transformers.image", Members: starlark.StringDict{
		"ImagesFromBytes":        starlib.NewBuiltin("ImagesFromBytes", imageBuiltin),
		"MinimumImageDimensions": starlib.NewBuiltin("MinimumImageDimensions", imageBuiltin),
		"RandomFixedSizeCrop":    starlib.NewBuiltin("RandomFixedSizeCrop", imageBuiltin),
		"Random2DRotation":       starlib.NewBuiltin("Random2DRotation", imageBuiltin),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.transformers.sequences", Members: starlark.StringDict{
		"Window": starlib.NewBuiltin("Window", windowBuiltin),
		"NGrams": starlib.NewBuiltin("NGrams", windowBuiltin),
	}})
	return
}

// ConstantSchemeValue is a ConstantScheme: batch sizes for Batch and
// Cache.
type ConstantSchemeValue struct{ S *schemes.Constant }

func (s *ConstantSchemeValue) String() string        { return "<ConstantScheme>" }
func (s *ConstantSchemeValue) Type() string          { return "ConstantScheme" }
func (s *ConstantSchemeValue) Freeze()               {}
func (s *ConstantSchemeValue) Truth() starlark.Bool  { return true }
func (s *ConstantSchemeValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: scheme") }

func constantScheme(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var batch int
	var num, times starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "batch_size", &batch, "num_examples?", &num, "times?", &times); err != nil {
		return nil, err
	}
	n, k := 0, 0
	if num != starlark.None {
		if err := starlark.AsInt(num, &n); err != nil {
			return nil, fmt.Errorf("%s: num_examples: %v", b.Name(), err)
		}
	}
	if times != starlark.None {
		if err := starlark.AsInt(times, &k); err != nil {
			return nil, fmt.Errorf("%s: times: %v", b.Name(), err)
		}
	}
	s, err := schemes.ConstantScheme(batch, n, k)
	if err != nil {
		return nil, err
	}
	return &ConstantSchemeValue{S: s}, nil
}

func concatenatedScheme(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var list starlark.Iterable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "schemes", &list); err != nil {
		return nil, err
	}
	var ss []schemes.Scheme
	var sizes []*schemes.Constant
	it := list.Iterate()
	defer it.Done()
	var v starlark.Value
	for it.Next(&v) {
		switch sv := v.(type) {
		case *SchemeValue:
			ss = append(ss, sv.S)
		case *ConstantSchemeValue:
			sizes = append(sizes, sv.S)
		default:
			return nil, fmt.Errorf("%s: schemes must be schemes from fuel.schemes, got %s", b.Name(), v.Type())
		}
	}
	if len(sizes) > 0 {
		// Batch-size schemes request batches: none may request examples.
		for _, s := range ss {
			if s.RequestsExamples() {
				return nil, fmt.Errorf("%s: all schemes must produce the same type of requests (batches or examples): a ConstantScheme with %s", b.Name(), schemeName(s))
			}
		}
		if len(ss) > 0 {
			return nil, fmt.Errorf("%s: a ConcatenatedScheme of ConstantSchemes takes only ConstantSchemes", b.Name())
		}
		return &concatSizesValue{parts: sizes}, nil
	}
	s, err := schemes.ConcatenatedScheme(ss)
	if err != nil {
		return nil, err
	}
	return &SchemeValue{S: s, name: "ConcatenatedScheme"}, nil
}

// crossValidation is cross_validation(scheme_class, num_examples,
// num_folds, strict=True, **kwargs): a list of (train, valid) scheme
// pairs, or (train, valid, fold_size) triples when strict is False.
func crossValidation(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var class starlark.Callable
	var n, k int
	strict := true
	var rest []starlark.Tuple
	var known []starlark.Tuple
	for _, kv := range kwargs {
		switch string(kv[0].(starlark.String)) {
		case "scheme_class", "num_examples", "num_folds", "strict":
			known = append(known, kv)
		default:
			rest = append(rest, kv)
		}
	}
	if err := starlark.UnpackArgs(b.Name(), args, known, "scheme_class", &class, "num_examples", &n, "num_folds", &k, "strict?", &strict); err != nil {
		return nil, err
	}
	mk := func(ex schemes.Examples) (schemes.Scheme, error) {
		var exv starlark.Value
		if ex.IsList() {
			idx := ex.Indices()
			l := make([]starlark.Value, len(idx))
			for i, j := range idx {
				l[i] = starlark.MakeInt(j)
			}
			exv = starlark.NewList(l)
		} else {
			exv = starlark.MakeInt(ex.Len())
		}
		v, err := starlark.Call(thread, class, starlark.Tuple{exv}, rest)
		if err != nil {
			return nil, err
		}
		sv, ok := v.(*SchemeValue)
		if !ok {
			return nil, fmt.Errorf("scheme_class returned %s, not a scheme", v.Type())
		}
		return sv.S, nil
	}
	folds, err := schemes.CrossValidation(mk, n, k, strict)
	if err != nil {
		// Fuel's cross_validation is a generator: the error comes with
		// the first next().
		return &foldsValue{err: err}, nil
	}
	out := make([]starlark.Value, len(folds))
	for i, f := range folds {
		t := starlark.Tuple{&SchemeValue{S: f.Train, name: schemeName(f.Train)}, &SchemeValue{S: f.Valid, name: schemeName(f.Valid)}}
		if !strict {
			t = append(t, starlark.MakeInt(f.Size))
		}
		out[i] = t
	}
	return &foldsValue{folds: out}, nil
}

func schemeName(s schemes.Scheme) string {
	switch s.(type) {
	case *schemes.Sequential:
		return "SequentialScheme"
	case *schemes.Shuffled:
		return "ShuffledScheme"
	case *schemes.SequentialExample:
		return "SequentialExampleScheme"
	case *schemes.ShuffledExample:
		return "ShuffledExampleScheme"
	case *schemes.Concatenated:
		return "ConcatenatedScheme"
	}
	return "IterationScheme"
}

// callThread is a thread for calling a script's function from a stream
// (possibly on MultiProcessing's goroutine): starlib.CallThread, with
// Fuel's configuration.
func callThread(parent *starlark.Thread, name string) *starlark.Thread {
	return starlib.CallThread(parent, name, fuelConfigKey)
}

func callOnItem(parent *starlark.Thread, fn starlark.Callable, data []*nd.Array) (starlark.Value, error) {
	t := make(starlark.Tuple, len(data))
	for i, a := range data {
		t[i] = dataValue(a)
	}
	return starlark.Call(callThread(parent, fn.Name()), fn, starlark.Tuple{t}, nil)
}

// sortMappingValue is SortMapping(key, reverse=False): a callable mapping
// for Mapping.
type sortMappingValue struct {
	key     starlark.Callable
	reverse bool
}

func (s *sortMappingValue) String() string        { return "<SortMapping>" }
func (s *sortMappingValue) Type() string          { return "SortMapping" }
func (s *sortMappingValue) Freeze()               {}
func (s *sortMappingValue) Truth() starlark.Bool  { return true }
func (s *sortMappingValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: SortMapping") }

func sortMappingBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := &sortMappingValue{}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "key", &s.key, "reverse?", &s.reverse); err != nil {
		return nil, err
	}
	return s, nil
}

func mappingBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	var mapping starlark.Value
	var add, accepts starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "mapping", &mapping, "add_sources?", &add, "mapping_accepts?", &accepts); err != nil {
		return nil, err
	}
	addSources, err := stringList("Mapping: add_sources", add)
	if err != nil {
		return nil, err
	}
	// mapping_accepts: list (the default) or dict, the builtins, as in Fuel.
	asDict := false
	if bt, ok := accepts.(*starlark.Builtin); ok && (bt.Name() == "dict" || bt.Name() == "list") {
		asDict = bt.Name() == "dict"
	} else if accepts != starlark.None {
		return nil, fmt.Errorf("Mapping: mapping_accepts must be list or dict, got %s", accepts.String())
	}
	inSources := st.S.Sources()
	outSources := inSources
	if len(addSources) > 0 {
		outSources = addSources
	}
	var fn transformers.MappingFunc
	switch m := mapping.(type) {
	case *sortMappingValue:
		key := func(ex []*nd.Array) (any, error) {
			return callOnItem(thread, m.key, ex)
		}
		cmp := func(a, b any) (int, error) {
			lt, err := starlark.Compare(syntax.LT, a.(starlark.Value), b.(starlark.Value))
			if err != nil || lt {
				return -1, err
			}
			gt, err := starlark.Compare(syntax.GT, a.(starlark.Value), b.(starlark.Value))
			if gt {
				return 1, err
			}
			return 0, err
		}
		fn = transformers.SortMapping(key, cmp, m.reverse)
	case starlark.Callable:
		fn = func(data []*nd.Array) ([]*nd.Array, error) {
			var v starlark.Value
			var err error
			if asDict {
				d := starlark.NewDict(len(data))
				for i, a := range data {
					d.SetKey(starlark.String(inSources[i]), dataValue(a))
				}
				v, err = starlark.Call(callThread(thread, m.Name()), m, starlark.Tuple{d}, nil)
				if err != nil {
					return nil, err
				}
				rd, ok := v.(*starlark.Dict)
				if !ok {
					return nil, fmt.Errorf("the mapping %s (mapping_accepts=dict) returned %s, want a dict", m.Name(), v.Type())
				}
				out := make(starlark.Tuple, len(outSources))
				for i, src := range outSources {
					x, found, _ := rd.Get(starlark.String(src))
					if !found {
						return nil, fmt.Errorf("the mapping %s returned no source %q", m.Name(), src)
					}
					out[i] = x
				}
				v = out
			} else if v, err = callOnItem(thread, m, data); err != nil {
				return nil, err
			}
			seq, ok := v.(starlark.Indexable)
			if !ok {
				return nil, fmt.Errorf("the mapping %s returned %s, want a tuple with one value per source", m.Name(), v.Type())
			}
			out := make([]*nd.Array, seq.Len())
			for i := range out {
				if out[i], err = valueData(seq.Index(i)); err != nil {
					return nil, fmt.Errorf("the mapping %s: value %d: %v", m.Name(), i, err)
				}
			}
			return out, nil
		}
	default:
		return nil, fmt.Errorf("Mapping: mapping must be a function or a SortMapping, got %s", mapping.Type())
	}
	t, err := transformers.Mapping(st.S, fn, addSources)
	if err != nil {
		return nil, err
	}
	return &Stream{S: t, Name: "Mapping"}, nil
}

func filterBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	var pred starlark.Callable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "predicate", &pred); err != nil {
		return nil, err
	}
	t, err := transformers.Filter(st.S, func(data []*nd.Array) (bool, error) {
		v, err := callOnItem(thread, pred, data)
		if err != nil {
			return false, err
		}
		return bool(v.Truth()), nil
	})
	if err != nil {
		return nil, err
	}
	return &Stream{S: t, Name: "Filter"}, nil
}

func batchBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	var schemeV starlark.Value
	strictness := 0
	var t *transformers.Transformer
	var err error
	if b.Name() == "Batch" {
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "iteration_scheme", &schemeV, "strictness?", &strictness)
	} else {
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "iteration_scheme", &schemeV)
	}
	if err != nil {
		return nil, err
	}
	// As Fuel, the stream's kind is checked first, then the scheme's.
	if b.Name() == "Batch" && !st.S.ProducesExamples() {
		return nil, fmt.Errorf("Batch: the stream must produce examples, not batches")
	}
	if b.Name() == "Cache" && st.S.ProducesExamples() {
		return nil, fmt.Errorf("Cache: the stream must produce batches, not examples")
	}
	var scheme schemes.BatchSizeScheme
	switch sv := schemeV.(type) {
	case *ConstantSchemeValue:
		scheme = sv.S
	case *SchemeValue:
		scheme, _ = sv.S.(schemes.BatchSizeScheme) // a script BatchSizeScheme subclass
	}
	if scheme == nil {
		return nil, fmt.Errorf("%s: iteration_scheme must be a batch-size scheme (ConstantScheme, or a BatchSizeScheme subclass), got %s", b.Name(), schemeV.Type())
	}
	if scheme.RequestsExamples() {
		return nil, fmt.Errorf("%s: the iteration scheme must request batches, not examples (%s.requests_examples is True)", b.Name(), schemeV.Type())
	}
	if b.Name() == "Batch" {
		t, err = transformers.Batch(st.S, scheme, strictness)
	} else {
		t, err = transformers.Cache(st.S, scheme)
	}
	if err != nil {
		return nil, err
	}
	return &Stream{S: t, Name: b.Name()}, nil
}

func unpackBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st); err != nil {
		return nil, err
	}
	t, err := transformers.Unpack(st.S)
	if err != nil {
		return nil, err
	}
	return &Stream{S: t, Name: "Unpack"}, nil
}

func paddingBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	var maskSources, maskDType starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "mask_sources?", &maskSources, "mask_dtype?", &maskDType); err != nil {
		return nil, err
	}
	ms, err := stringList("Padding: mask_sources", maskSources)
	if err != nil {
		return nil, err
	}
	dt := starlib.FloatX(thread).String()
	if maskDType != starlark.None {
		s, ok := starlark.AsString(maskDType)
		if !ok {
			return nil, fmt.Errorf("Padding: mask_dtype must be a dtype name, got %s", maskDType.Type())
		}
		dt = s
		if s == "floatX" {
			dt = starlib.FloatX(thread).String()
		}
	}
	t, err := transformers.Padding(st.S, ms, dt)
	if err != nil {
		return nil, err
	}
	return &Stream{S: t, Name: "Padding"}, nil
}

func mergeBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var list starlark.Iterable
	var sources starlark.Value
	var labels starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_streams", &list, "sources", &sources, "axis_labels?", &labels); err != nil {
		return nil, err
	}
	var ss []fuel.Stream
	var given []*Stream
	it := list.Iterate()
	defer it.Done()
	var v starlark.Value
	for it.Next(&v) {
		s, ok := v.(*Stream)
		if !ok {
			return nil, fmt.Errorf("Merge: data_streams must be streams, got %s", v.Type())
		}
		ss = append(ss, s.S)
		given = append(given, s)
	}
	names, lab, err := sourcesAndLabels("Merge", sources, labels)
	if err != nil {
		return nil, err
	}
	m, err := transformers.Merge(ss, names, lab)
	if err != nil {
		return nil, err
	}
	return &Stream{S: m, Name: "Merge", wrapped: given}, nil
}

func multiProcessingBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	maxStore := 100
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &st, "max_store?", &maxStore); err != nil {
		return nil, err
	}
	t, err := transformers.MultiProcessing(st.S, maxStore)
	if err != nil {
		return nil, err
	}
	return &Stream{S: t, Name: "MultiProcessing"}, nil
}

func pair(name string, v starlark.Value) ([2]int, error) {
	is, err := starlib.AsInts(v)
	if err != nil || len(is) != 2 {
		return [2]int{}, fmt.Errorf("%s must be a (height, width) pair of ints, got %s", name, v.String())
	}
	return [2]int{is[0], is[1]}, nil
}

func rngArg(name string, v starlark.Value) (*numpyrand.RandomState, error) {
	if v == starlark.None {
		return nil, nil
	}
	if r, ok := v.(*starlib.RandomState); ok {
		return r.R, nil
	}
	return nil, fmt.Errorf("%s: rng must be a numpy.random.RandomState, got %s", name, v.Type())
}

func imageBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	var which, rng, shape starlark.Value = starlark.None, starlark.None, starlark.None
	resample, colorMode := "nearest", starlark.Value(starlark.String("RGB"))
	maxRot := math.Pi
	var t *transformers.Transformer
	var err error
	name := b.Name()
	switch name {
	case "ImagesFromBytes":
		// Fuel's order: color_mode second; which_sources a keyword
		// (SourcewiseTransformer's), all sources when None.
		if err = starlark.UnpackArgs(name, args, kwargs, "data_stream", &st, "color_mode?", &colorMode, "which_sources?", &which); err != nil {
			return nil, err
		}
	case "MinimumImageDimensions":
		err = starlark.UnpackArgs(name, args, kwargs, "data_stream", &st, "minimum_shape", &shape, "resample?", &resample, "which_sources?", &which)
	case "RandomFixedSizeCrop":
		err = starlark.UnpackArgs(name, args, kwargs, "data_stream", &st, "window_shape", &shape, "rng?", &rng, "which_sources?", &which)
	case "Random2DRotation":
		var mr starlib.FloatArg = starlib.FloatArg(math.Pi)
		err = starlark.UnpackArgs(name, args, kwargs, "data_stream", &st, "maximum_rotation?", &mr, "resample?", &resample, "rng?", &rng, "which_sources?", &which)
		maxRot = float64(mr)
	}
	if err != nil {
		return nil, err
	}
	ws, err := stringList(name+": which_sources", which)
	if err != nil {
		return nil, err
	}
	r, err := rngArg(name, rng)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = fuelDefaultRNG(thread) // nil: the package's default
	}
	switch name {
	case "ImagesFromBytes":
		mode := ""
		if colorMode != starlark.None {
			s, ok := starlark.AsString(colorMode)
			if !ok {
				return nil, fmt.Errorf("%s: color_mode must be a string or None", name)
			}
			mode = s
		}
		t, err = transformers.ImagesFromBytes(st.S, ws, mode)
	case "MinimumImageDimensions":
		var p [2]int
		if p, err = pair(name+": minimum_shape", shape); err == nil {
			t, err = transformers.MinimumImageDimensions(st.S, p, resample, ws)
		}
	case "RandomFixedSizeCrop":
		var p [2]int
		if p, err = pair(name+": window_shape", shape); err == nil {
			t, err = transformers.RandomFixedSizeCrop(st.S, p, r, ws)
		}
	case "Random2DRotation":
		t, err = transformers.Random2DRotation(st.S, maxRot, resample, r, ws)
	}
	if err != nil {
		return nil, err
	}
	return &Stream{S: t, Name: name}, nil
}

func windowBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	target := "targets"
	var t *transformers.Transformer
	var err error
	if b.Name() == "NGrams" {
		var order int
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "ngram_order", &order, "data_stream", &st, "target_source?", &target); err != nil {
			return nil, err
		}
		t, err = transformers.NGrams(st.S, order, target)
	} else {
		var o transformers.WindowOptions
		o.StepSize = 1
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "offset", &o.Offset, "source_window", &o.SourceWindow,
			"target_window", &o.TargetWindow, "overlapping", &o.Overlapping, "data_stream", &st, "target_source?", &target, "step_size?", &o.StepSize); err != nil {
			return nil, err
		}
		o.TargetSource = target
		t, err = transformers.Window(st.S, o)
	}
	if err != nil {
		return nil, err
	}
	return &Stream{S: t, Name: b.Name()}, nil
}

// IteratorState is the position of a Starlark epoch iterator, for a
// checkpoint (see fuel.MarshalState).
func (e *EpochIterator) IteratorState() (fuel.IteratorState, error) {
	si, ok := e.It.(fuel.StatefulIterator)
	if !ok {
		return fuel.IteratorState{}, fmt.Errorf("the epoch iterator (%T) cannot report its position", e.It)
	}
	return si.State()
}

// Iterator is the Go epoch iterator behind e.
func (e *EpochIterator) Iterator() fuel.EpochIterator { return e.It }

// ResumeEpochIterator returns a Starlark epoch iterator of s continuing at
// state (the resume half of EpochIterator.IteratorState).
func (s *Stream) ResumeEpochIterator(state fuel.IteratorState, asDict bool) (*EpochIterator, error) {
	rs, ok := s.S.(fuel.ResumableStream)
	if !ok {
		return nil, fmt.Errorf("the stream %s cannot resume an epoch", s.Name)
	}
	it, err := rs.ResumeEpochIterator(state)
	if err != nil {
		return nil, err
	}
	return &EpochIterator{It: it, Sources: s.S.Sources(), AsDict: asDict}, nil
}

// epochsIterable is stream.iterate_epochs(as_dict=False): an endless
// sequence of epoch iterators.
type epochsIterable struct {
	s      *Stream
	asDict bool
	thread *starlark.Thread
}

func (e *epochsIterable) String() string        { return "<epochs>" }
func (e *epochsIterable) Type() string          { return "epochs" }
func (e *epochsIterable) Freeze()               {}
func (e *epochsIterable) Truth() starlark.Bool  { return true }
func (e *epochsIterable) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: epochs") }
func (e *epochsIterable) Iterate() starlark.Iterator {
	return &epochsIter{e: e}
}

type epochsIter struct {
	e   *epochsIterable
	err error
}

func (it *epochsIter) Next(p *starlark.Value) bool {
	ei, err := it.e.s.S.GetEpochIterator()
	if err != nil {
		it.err = err
		if it.e.thread != nil {
			it.e.thread.Cancel("data stream error: " + err.Error())
		}
		return false
	}
	it.e.s.last = &EpochIterator{It: ei, Sources: it.e.s.S.Sources(), AsDict: it.e.asDict, thread: it.e.thread}
	*p = it.e.s.last
	return true
}
func (it *epochsIter) Done()      {}
func (it *epochsIter) Err() error { return it.err }

// streamMethod returns the stream methods this file adds (Attr falls back
// to it): iterate_epochs, reset, next_epoch, close,
// resume_epoch_iterator.
func (s *Stream) streamMethod(name string) starlark.Value {
	switch name {
	case "iterate_epochs":
		return starlib.NewBuiltin("iterate_epochs", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			asDict := false
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "as_dict?", &asDict); err != nil {
				return nil, err
			}
			return &epochsIterable{s: s, asDict: asDict, thread: thread}, nil
		})
	case "reset", "next_epoch", "close":
		// In-memory and HDF5 datasets hold no per-epoch state here: Fuel's
		// reset/next_epoch/close have nothing to do; the next
		// get_epoch_iterator starts a new epoch. The streams a Merge
		// wraps get the call (a script stream may override it).
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			if d := s.scriptData(); d != nil {
				// A dataset of the script's: its reset, next_epoch or
				// close makes the stream's next state (Fuel's DataStream).
				return starlark.None, d.advance(name)
			}
			for _, w := range s.wrapped {
				m, err := w.Attr(name)
				if err != nil {
					return nil, err
				}
				if _, err := starlark.Call(thread, m, nil, nil); err != nil {
					return nil, err
				}
			}
			return starlark.None, nil
		})
	case "resume_epoch_iterator":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var state string
			asDict := false
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "state", &state, "as_dict?", &asDict); err != nil {
				return nil, err
			}
			st, err := fuel.UnmarshalState([]byte(state))
			if err != nil {
				return nil, err
			}
			e, err := s.ResumeEpochIterator(st, asDict)
			if e != nil {
				e.thread = thread
			}
			return e, err
		})
	}
	return nil
}

// scriptData is the stream's scriptDataStream, or nil.
func (s *Stream) scriptData() *scriptDataStream {
	inner := s.S
	if o, ok := inner.(*streamOverride); ok {
		inner = o.Stream
	}
	d, _ := inner.(*scriptDataStream)
	return d
}

// iteratorMethod returns the epoch-iterator methods this file adds:
// get_state() (the position as a JSON string) and next().
func (e *EpochIterator) iteratorMethod(name string) starlark.Value {
	switch name {
	case "get_state":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			st, err := e.IteratorState()
			if err != nil {
				return nil, err
			}
			blob, err := fuel.MarshalState(st)
			if err != nil {
				return nil, err
			}
			return starlark.String(blob), nil
		})
	case "next":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			v, err := e.NextBatch()
			if err == io.EOF {
				return nil, fmt.Errorf("StopIteration: the epoch is over")
			}
			return v, err
		})
	}
	return nil
}

// structureAttr is a stream's data_stream (the stream a transformer
// wraps), dataset and iteration_scheme (a DataStream's), or None.
func (s *Stream) structureAttr(name string) starlark.Value {
	if o, ok := s.S.(*streamOverride); ok {
		return (&Stream{S: o.Stream, Name: s.Name}).structureAttr(name)
	}
	if d, ok := s.S.(*scriptDataStream); ok {
		switch name {
		case "dataset":
			return d.ds
		case "data_state":
			return d.state
		case "iteration_scheme":
			return d.schemeValue
		}
	}
	switch name {
	case "data_stream":
		if t, ok := s.S.(interface{ DataStream() fuel.Stream }); ok {
			return &Stream{S: t.DataStream(), Name: streamName(t.DataStream())}
		}
		return starlark.None
	case "dataset":
		if d, ok := s.S.(*streams.DatasetStream); ok {
			return &Dataset{D: d.Dataset(), name: datasetName(d.Dataset())}
		}
		return starlark.None
	case "iteration_scheme":
		if d, ok := s.S.(*streams.DatasetStream); ok && d.IterationScheme() != nil {
			return &SchemeValue{S: d.IterationScheme(), name: schemeName(d.IterationScheme())}
		}
		return starlark.None
	}
	return nil
}

func streamName(s fuel.Stream) string {
	switch s := s.(type) {
	case *streams.DatasetStream:
		return "DataStream"
	case *transformers.MergeStream:
		return "Merge"
	case interface{ Name() string }:
		return s.Name()
	}
	return "DataStream"
}

func datasetName(d fuel.IndexableDataset) string {
	switch d.(type) {
	case *datasets.IndexableDataset:
		return "IndexableDataset"
	case *datasets.IterableDataset:
		return "IterableDataset"
	case *datasets.MNISTDataset:
		return "MNIST"
	case *h5.H5PYDataset:
		return "H5PYDataset"
	}
	return "Dataset"
}

// raggedSource is an IndexableDataset source given as a list of examples
// of different shapes: an object array of them (float lists in floatX).
func raggedSource(thread *starlark.Thread, v starlark.Value) (*nd.Array, error) {
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("want an array, nested lists or a list of examples, got %s", v.Type())
	}
	parts := make([]*nd.Array, seq.Len())
	for i := range parts {
		x := seq.Index(i)
		a, err := valueData(x)
		if err != nil {
			return nil, fmt.Errorf("example %d: %v", i, err)
		}
		if a.DType() == nd.Float64 && !hasFloat64(x) {
			a = a.Astype(starlib.FloatX(thread))
		}
		parts[i] = a
	}
	return nd.Objects(parts), nil
}
