package transformers

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/nd"
)

// ErrPartialBatch is the error of a Batch with strictness 2 whose epoch
// ends inside a batch (Fuel's ValueError).
var ErrPartialBatch = errors.New("the epoch ended inside a batch (strictness=2)")

// nextItem reads one item from child, checking its number of arrays.
func nextItem(name string, child fuel.EpochIterator, n int) ([]*nd.Array, error) {
	d, err := child.Next()
	if err != nil {
		return nil, err
	}
	if len(d) != n {
		return nil, fmt.Errorf("transformers: %s: the wrapped stream gave %d arrays for its %d sources", name, len(d), n)
	}
	return d, nil
}

func needExamples(name string, stream fuel.Stream, want bool) error {
	if stream == nil {
		return fmt.Errorf("transformers: %s: no data stream", name)
	}
	if stream.ProducesExamples() != want {
		if want {
			return fmt.Errorf("transformers: %s: the wrapped data stream must produce examples, not batches of examples", name)
		}
		return fmt.Errorf("transformers: %s: the wrapped data stream must produce batches, not examples", name)
	}
	return nil
}

// Batch is Fuel's Batch(data_stream, iteration_scheme, strictness=0): it
// groups the examples of stream into batches whose sizes the
// ConstantScheme gives, each source stacked along a new first axis (an
// object array when the examples' shapes differ, as numpy.asarray makes
// of a list of ragged sequences). At the end of the epoch a partial
// batch is returned (strictness 0), dropped (1), or an error (2).
func Batch(stream fuel.Stream, scheme schemes.BatchSizeScheme, strictness int) (*Transformer, error) {
	if err := needExamples("Batch", stream, true); err != nil {
		return nil, err
	}
	if scheme == nil || nilScheme(scheme) {
		return nil, errors.New("transformers: Batch: needs an iteration scheme (a ConstantScheme)")
	}
	if strictness < 0 || strictness > 2 {
		return nil, fmt.Errorf("transformers: Batch: strictness must be 0, 1 or 2, got %d", strictness)
	}
	sources := stream.Sources()
	t := &Transformer{name: "Batch", child: stream, sources: sources, axisLabels: addBatchLabel(copyLabels(stream)), numChildSources: len(sources)}
	t.open = func(child fuel.EpochIterator, saved *fuel.IteratorState) (fuel.EpochIterator, error) {
		var sizes schemes.BatchSizeIterator
		var err error
		if saved == nil {
			sizes, err = scheme.GetBatchSizeIterator()
		} else if saved.Requests == nil {
			err = errors.New("the saved state has no batch-size position")
		} else {
			sizes, err = scheme.RestoreBatchSizeIterator(*saved.Requests)
		}
		if err != nil {
			return nil, fmt.Errorf("transformers: Batch: %w", err)
		}
		return &batchIter{t: t, child: child, sizes: sizes, strictness: strictness}, nil
	}
	return t, nil
}

type batchIter struct {
	t          *Transformer
	child      fuel.EpochIterator
	sizes      schemes.BatchSizeIterator
	strictness int
}

func (it *batchIter) Next() ([]*nd.Array, error) {
	n, err := it.sizes.Next()
	if err != nil {
		return nil, err
	}
	cols := make([][]*nd.Array, it.t.numChildSources)
	got := 0
	for ; got < n; got++ {
		d, err := nextItem("Batch", it.child, it.t.numChildSources)
		if errors.Is(err, io.EOF) {
			if got > 0 && it.strictness == 0 {
				break
			}
			if got > 0 && it.strictness == 2 {
				return nil, fmt.Errorf("transformers: Batch: %w (%d of %d examples)", ErrPartialBatch, got, n)
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		for i, a := range d {
			cols[i] = append(cols[i], a)
		}
	}
	out := make([]*nd.Array, len(cols))
	for i, c := range cols {
		if out[i], err = nd.Stack(c); err != nil {
			return nil, fmt.Errorf("transformers: Batch: source %q: %w", it.t.sources[i], err)
		}
	}
	return out, nil
}

func (it *batchIter) State() (fuel.IteratorState, error) {
	st, err := it.t.wrapState(it.child)
	pos := it.sizes.Position()
	st.Requests = &pos
	return st, err
}

// Unpack is Fuel's Unpack(data_stream): it turns a stream of batches into
// a stream of their examples. The rest of the current batch is part of
// its iterator's state.
func Unpack(stream fuel.Stream) (*Transformer, error) {
	if err := needExamples("Unpack", stream, false); err != nil {
		return nil, err
	}
	sources := stream.Sources()
	t := &Transformer{name: "Unpack", child: stream, sources: sources, producesExamples: true,
		axisLabels: dropBatchLabel(copyLabels(stream)), numChildSources: len(sources)}
	t.open = func(child fuel.EpochIterator, saved *fuel.IteratorState) (fuel.EpochIterator, error) {
		it := &unpackIter{t: t, child: child}
		if saved != nil {
			var err error
			if it.rest, err = loadItems(saved.Buffer); err != nil {
				return nil, fmt.Errorf("transformers: Unpack: %w", err)
			}
		}
		return it, nil
	}
	return t, nil
}

// dropBatchLabel is Unpack's axis labels: each source's without its
// first (Fuel's labels[1:] if labels else None).
func dropBatchLabel(m map[string][]string) map[string][]string {
	for k, v := range m {
		if len(v) > 0 {
			m[k] = v[1:]
		} else {
			m[k] = nil
		}
	}
	return m
}

// addBatchLabel is Batch's axis labels: ("batch",) + each source's
// (Fuel's ('batch',) + labels if labels else None).
func addBatchLabel(m map[string][]string) map[string][]string {
	for k, v := range m {
		if len(v) > 0 {
			m[k] = append([]string{"batch"}, v...)
		} else {
			m[k] = nil
		}
	}
	return m
}

func loadItems(saved []fuel.SavedItem) ([][]*nd.Array, error) {
	out := make([][]*nd.Array, len(saved))
	for i, s := range saved {
		var err error
		if out[i], err = s.Arrays(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func saveItems(items [][]*nd.Array) []fuel.SavedItem {
	out := make([]fuel.SavedItem, len(items))
	for i, d := range items {
		out[i] = fuel.SaveItem(d)
	}
	return out
}

type unpackIter struct {
	t     *Transformer
	child fuel.EpochIterator
	rest  [][]*nd.Array // examples of the current batch not yet given
}

func (it *unpackIter) Next() ([]*nd.Array, error) {
	for len(it.rest) == 0 {
		d, err := nextItem("Unpack", it.child, it.t.numChildSources)
		if err != nil {
			return nil, err
		}
		n := -1
		cols := make([][]*nd.Array, len(d))
		for i, a := range d {
			if cols[i], err = a.Parts(); err != nil {
				return nil, fmt.Errorf("transformers: Unpack: source %q: %w", it.t.sources[i], err)
			}
			if n >= 0 && len(cols[i]) != n {
				return nil, fmt.Errorf("transformers: Unpack: source %q has %d examples, the others %d", it.t.sources[i], len(cols[i]), n)
			}
			n = len(cols[i])
		}
		for k := 0; k < n; k++ {
			ex := make([]*nd.Array, len(d))
			for i := range d {
				ex[i] = cols[i][k].Copy()
			}
			it.rest = append(it.rest, ex)
		}
	}
	ex := it.rest[0]
	it.rest = it.rest[1:]
	return ex, nil
}

func (it *unpackIter) State() (fuel.IteratorState, error) {
	st, err := it.t.wrapState(it.child)
	st.Buffer = saveItems(it.rest)
	return st, err
}

// Padding is Fuel's Padding(data_stream, mask_sources=None,
// mask_dtype=None): in each batch, every source of maskSources (nil: all)
// holding sequences of different lengths (an object array, or a regular
// array of equal ones) is zero-padded along the sequences' first axis to
// the longest, in the first sequence's dtype, and a source "<source>_mask" of shape (batch, max length)
// and dtype maskDType (""; floatX) follows it, 1 where the sequence has
// an element and 0 in the padding.
func Padding(stream fuel.Stream, maskSources []string, maskDType string) (*Transformer, error) {
	if err := needExamples("Padding", stream, false); err != nil {
		return nil, err
	}
	if maskDType == "" {
		maskDType = "floatX"
	}
	mdt, err := resolveDType(maskDType)
	if err != nil {
		return nil, fmt.Errorf("transformers: Padding: mask_dtype: %w", err)
	}
	in := stream.Sources()
	if maskSources == nil {
		maskSources = in
	}
	var out []string
	masked := make([]bool, len(in))
	for i, s := range in {
		out = append(out, s)
		if masked[i] = slices.Contains(maskSources, s); masked[i] {
			out = append(out, s+"_mask")
		}
	}
	return &Transformer{
		name: "Padding", child: stream, sources: out, numChildSources: len(in),
		transform: func(data []*nd.Array) ([]*nd.Array, error) {
			var res []*nd.Array
			for i, a := range data {
				res = append(res, a)
				if !masked[i] {
					continue
				}
				padded, mask, err := pad(a, mdt)
				if err != nil {
					return nil, fmt.Errorf("source %q: %w", in[i], err)
				}
				res[len(res)-1] = padded
				res = append(res, mask)
			}
			return res, nil
		},
	}, nil
}

func pad(a *nd.Array, maskDType nd.DType) (*nd.Array, *nd.Array, error) {
	seqs, err := a.Parts()
	if err != nil {
		return nil, nil, err
	}
	if len(seqs) == 0 {
		return nil, nil, errors.New("an empty batch")
	}
	maxLen := 0
	rest := seqs[0].Shape
	if len(rest) == 0 {
		return nil, nil, errors.New("the examples are scalars, not sequences")
	}
	rest = rest[1:]
	dt := seqs[0].DType()
	for _, s := range seqs {
		if s.DType() == nd.Object {
			return nil, nil, errors.New("a sequence holds sequences of different shapes: only one level of raggedness can be padded")
		}
		if len(s.Shape) == 0 || !nd.SameShape(s.Shape[1:], rest) {
			return nil, nil, fmt.Errorf("all dimensions except length must be equal: shapes %v and %v", seqs[0].Shape, s.Shape)
		}
		maxLen = max(maxLen, s.Shape[0])
	}
	out := nd.New(dt, append([]int{len(seqs), maxLen}, rest...)...)
	mask := nd.New(maskDType, len(seqs), maxLen)
	r := nd.Prod(rest)
	for k, s := range seqs {
		if s.DType() != dt {
			if s.DType() == nd.Str || dt == nd.Str {
				// numpy's assignment of strings into numbers (or the
				// reverse) fails: "could not convert string to float".
				return nil, nil, fmt.Errorf("example %d holds %s, the first example %s: strings and numbers cannot be padded into one array", k, s.DType(), dt)
			}
			// numpy's assignment into the first sequence's dtype.
			s = astype(s, dt)
		}
		row := out.Slice(k, k+1)
		flat := &nd.Array{Shape: []int{maxLen * r}, Data: row.Data}
		if err := flat.Slice(0, s.Size()).CopyFrom(&nd.Array{Shape: []int{s.Size()}, Data: s.Data}); err != nil {
			return nil, nil, err
		}
		for j := 0; j < s.Shape[0]; j++ {
			mask.SetFlat(k*maxLen+j, 1)
		}
	}
	return out, mask, nil
}

// FilterFunc says whether an item is kept.
type FilterFunc func(data []*nd.Array) (bool, error)

// Filter is Fuel's Filter(data_stream, predicate): only the items for
// which predicate is true pass.
func Filter(stream fuel.Stream, predicate FilterFunc) (*Transformer, error) {
	if stream == nil || predicate == nil {
		return nil, errors.New("transformers: Filter: needs a data stream and a predicate")
	}
	sources := stream.Sources()
	t := &Transformer{name: "Filter", child: stream, sources: sources, axisLabels: copyLabels(stream),
		producesExamples: stream.ProducesExamples(), numChildSources: len(sources)}
	t.open = func(child fuel.EpochIterator, _ *fuel.IteratorState) (fuel.EpochIterator, error) {
		return &filterIter{t: t, child: child, pred: predicate}, nil
	}
	return t, nil
}

type filterIter struct {
	t     *Transformer
	child fuel.EpochIterator
	pred  FilterFunc
}

func (it *filterIter) Next() ([]*nd.Array, error) {
	for {
		d, err := nextItem("Filter", it.child, it.t.numChildSources)
		if err != nil {
			return nil, err
		}
		ok, err := it.pred(d)
		if err != nil {
			return nil, fmt.Errorf("transformers: Filter: predicate: %w", err)
		}
		if ok {
			return d, nil
		}
	}
}

func (it *filterIter) State() (fuel.IteratorState, error) { return it.t.wrapState(it.child) }

// Cache is Fuel's Cache(data_stream, iteration_scheme): it serves batches
// of the sizes the ConstantScheme gives from a cache of the examples of
// the wrapped batch stream. When a request is larger than the cache, one
// more batch is read into it (only one, as in Fuel, so a request may get
// fewer examples); the epoch ends when the wrapped stream ends with an
// empty cache, or when the scheme ends. The cache is emptied at the start
// of every epoch and is part of the iterator's state.
func Cache(stream fuel.Stream, scheme schemes.BatchSizeScheme) (*Transformer, error) {
	if err := needExamples("Cache", stream, false); err != nil {
		return nil, err
	}
	if scheme == nil || nilScheme(scheme) {
		return nil, errors.New("transformers: Cache: needs an iteration scheme (a ConstantScheme)")
	}
	sources := stream.Sources()
	t := &Transformer{name: "Cache", child: stream, sources: sources, axisLabels: copyLabels(stream), numChildSources: len(sources)}
	t.open = func(child fuel.EpochIterator, saved *fuel.IteratorState) (fuel.EpochIterator, error) {
		it := &cacheIter{t: t, child: child, cache: make([][]*nd.Array, len(sources))}
		var err error
		if saved == nil {
			it.sizes, err = scheme.GetBatchSizeIterator()
		} else if saved.Requests == nil {
			err = errors.New("the saved state has no batch-size position")
		} else {
			it.sizes, err = scheme.RestoreBatchSizeIterator(*saved.Requests)
		}
		if err == nil && saved != nil && len(saved.Buffer) > 0 {
			var arrays []*nd.Array
			if arrays, err = saved.Buffer[0].Arrays(); err == nil && len(arrays) != len(sources) {
				err = fmt.Errorf("the saved cache has %d sources, the stream %d", len(arrays), len(sources))
			}
			for i, a := range arrays {
				if err == nil {
					it.cache[i], err = a.Parts()
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("transformers: Cache: %w", err)
		}
		return it, nil
	}
	return t, nil
}

type cacheIter struct {
	t     *Transformer
	child fuel.EpochIterator
	sizes schemes.BatchSizeIterator
	cache [][]*nd.Array // per source, the cached examples
}

func (it *cacheIter) Next() ([]*nd.Array, error) {
	n, err := it.sizes.Next()
	if err != nil {
		return nil, err
	}
	if n > len(it.cache[0]) {
		d, err := nextItem("Cache", it.child, it.t.numChildSources)
		if errors.Is(err, io.EOF) {
			if len(it.cache[0]) == 0 {
				return nil, io.EOF
			}
		} else if err != nil {
			return nil, err
		} else {
			for i, a := range d {
				p, err := a.Parts()
				if err != nil {
					return nil, fmt.Errorf("transformers: Cache: source %q: %w", it.t.sources[i], err)
				}
				for _, e := range p {
					it.cache[i] = append(it.cache[i], e.Copy())
				}
			}
		}
	}
	out := make([]*nd.Array, len(it.cache))
	for i, c := range it.cache {
		k := min(n, len(c))
		if out[i], err = nd.Stack(c[:k]); err != nil {
			return nil, fmt.Errorf("transformers: Cache: source %q: %w", it.t.sources[i], err)
		}
		it.cache[i] = c[k:]
	}
	return out, nil
}

// Cached is the cache: per source, the examples read and not yet served
// (Fuel's Cache.cache). The slices are the iterator's: do not change them.
func (it *cacheIter) Cached() [][]*nd.Array { return it.cache }

// CacheSize is the number of examples in the cache.
func (it *cacheIter) CacheSize() int { return len(it.cache[0]) }

func (it *cacheIter) State() (fuel.IteratorState, error) {
	st, err := it.t.wrapState(it.child)
	pos := it.sizes.Position()
	st.Requests = &pos
	if len(it.cache[0]) > 0 {
		item := make([]*nd.Array, len(it.cache))
		for i, c := range it.cache {
			item[i] = nd.Objects(c)
		}
		st.Buffer = []fuel.SavedItem{fuel.SaveItem(item)}
	}
	return st, err
}

// SortMapping is Fuel's SortMapping(key, reverse=False), the mapping to
// give Mapping: it sorts the examples of a batch by key (stable, as
// Python's sorted), each source reordered alike. key maps an example (one
// array per source) to a value, cmp orders two values.
func SortMapping(key func(example []*nd.Array) (any, error), cmp func(a, b any) (int, error), reverse bool) MappingFunc {
	return func(data []*nd.Array) ([]*nd.Array, error) {
		cols := make([][]*nd.Array, len(data))
		n := -1
		for i, a := range data {
			var err error
			if cols[i], err = a.Parts(); err != nil {
				return nil, fmt.Errorf("SortMapping: %w", err)
			}
			if n >= 0 && len(cols[i]) != n {
				return nil, fmt.Errorf("SortMapping: the sources have %d and %d examples", n, len(cols[i]))
			}
			n = len(cols[i])
		}
		keys := make([]any, n)
		for k := range keys {
			ex := make([]*nd.Array, len(data))
			for i := range data {
				ex[i] = cols[i][k]
			}
			var err error
			if keys[k], err = key(ex); err != nil {
				return nil, fmt.Errorf("SortMapping: key: %w", err)
			}
		}
		order := make([]int, n)
		for k := range order {
			order[k] = k
		}
		var cerr error
		sort.SliceStable(order, func(a, b int) bool {
			c, err := cmp(keys[order[a]], keys[order[b]])
			if err != nil && cerr == nil {
				cerr = err
			}
			if reverse {
				return c > 0
			}
			return c < 0
		})
		if cerr != nil {
			return nil, fmt.Errorf("SortMapping: comparing keys: %w", cerr)
		}
		out := make([]*nd.Array, len(data))
		for i, a := range data {
			if a.DType() == nd.Object {
				parts := make([]*nd.Array, n)
				for k, j := range order {
					parts[k] = cols[i][j]
				}
				out[i] = nd.Objects(parts)
			} else {
				out[i] = a.Take(order)
			}
		}
		return out, nil
	}
}

// nilScheme reports whether scheme is a nil *schemes.Constant inside the
// interface (a caller's unset ConstantScheme).
func nilScheme(scheme schemes.BatchSizeScheme) bool {
	c, ok := scheme.(*schemes.Constant)
	return ok && c == nil
}
