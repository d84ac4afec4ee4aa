package datasets

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// Source is one named source of an IndexableDataset: its data, whose first
// axis indexes the examples.
type Source struct {
	Name string
	Data *nd.Array
}

// IndexableOptions are IndexableDataset's optional arguments.
type IndexableOptions struct {
	// Start and Stop select the examples [Start:Stop] of every source, as
	// Python slices them (nil is None, negative counts from the end, out
	// of range bounds are clipped).
	Start, Stop *int
	// Sources, when non-nil, restricts the dataset to these sources, in
	// this order (Fuel's sources=). Each must be one of the given sources.
	Sources []string
	// AxisLabels maps a source to the names of its axes (Fuel's
	// axis_labels=); it is kept as given.
	AxisLabels map[string][]string
}

// IndexableDataset is Fuel's IndexableDataset: sources held in memory,
// examples fetched by index. It implements fuel.IndexableDataset. A
// source may be an object array (nd.Objects) of differently shaped
// examples, as a Fuel user's list of sequences: a batch of it is an
// object array, an example the example's own array.
//
// GetData returns new arrays (copies), never views of the dataset's own
// data, so a consumer may modify a batch.
type IndexableDataset struct {
	name            string
	providesSources []string
	sources         []string
	data            []*nd.Array // per source, in sources order
	axisLabels      map[string][]string
	start, stop     *int
}

// Int returns a pointer to v, for IndexableOptions.Start/Stop and Subset.
func Int(v int) *int { return &v }

// NewIndexableDataset builds an IndexableDataset from ordered sources,
// all with the same number of examples (first dimension), as Fuel's
// IndexableDataset(OrderedDict(...), start, stop, sources=, axis_labels=).
//
// Fuel applies start/stop twice (it slices the data, then indexes
// requests within Subset(slice(start, stop)) of the sliced data), which
// makes any start > 0 fail or shift; this implementation does what the
// arguments say: the dataset is examples [start:stop] of the sources.
func NewIndexableDataset(sources []Source, opts IndexableOptions) (*IndexableDataset, error) {
	return newIndexable("IndexableDataset", sources, opts)
}

func newIndexable(name string, sources []Source, opts IndexableOptions) (*IndexableDataset, error) {
	if len(sources) == 0 {
		return nil, fmt.Errorf("datasets: %s: no sources", name)
	}
	byName := make(map[string]*nd.Array, len(sources))
	provides := make([]string, len(sources))
	for i, s := range sources {
		if s.Data == nil {
			return nil, fmt.Errorf("datasets: %s: source %q has no data", name, s.Name)
		}
		if s.Data.NDim() == 0 {
			return nil, fmt.Errorf("datasets: %s: source %q is a 0-d array: a source needs a first (example) axis", name, s.Name)
		}
		if _, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("datasets: %s: source %q given twice", name, s.Name)
		}
		byName[s.Name] = s.Data
		provides[i] = s.Name
	}
	selected := provides
	if opts.Sources != nil {
		if err := checkSources(name, opts.Sources, provides); err != nil {
			return nil, err
		}
		selected = slices.Clone(opts.Sources)
	}
	d := &IndexableDataset{
		name:            name,
		providesSources: provides,
		sources:         selected,
		axisLabels:      opts.AxisLabels,
		start:           opts.Start,
		stop:            opts.Stop,
	}
	n := -1
	for _, s := range selected {
		a := byName[s]
		lo, hi := pySlice(opts.Start, opts.Stop, a.Shape[0])
		if n >= 0 && hi-lo != n {
			return nil, fmt.Errorf("datasets: %s: sources have different lengths (%s: %d examples, %s: %d)",
				name, selected[0], n, s, hi-lo)
		}
		n = hi - lo
		if lo == 0 && hi == a.Shape[0] {
			d.data = append(d.data, a)
		} else {
			d.data = append(d.data, a.Slice(lo, hi))
		}
	}
	return d, nil
}

// checkSources verifies a sources= argument, as Fuel's Dataset does.
func checkSources(name string, sources, provides []string) error {
	if len(sources) == 0 {
		return fmt.Errorf("datasets: %s: unable to provide requested sources: none requested", name)
	}
	for _, s := range sources {
		if !slices.Contains(provides, s) {
			return fmt.Errorf("datasets: %s: unable to provide requested source %q (it provides %s)", name, s, strings.Join(provides, ", "))
		}
	}
	return nil
}

// pySlice resolves Python slice bounds [start:stop] on a sequence of
// length n to 0 <= lo <= hi <= n.
func pySlice(start, stop *int, n int) (lo, hi int) {
	resolve := func(p *int, def int) int {
		if p == nil {
			return def
		}
		v := *p
		if v < 0 {
			v += n
		}
		return min(max(v, 0), n)
	}
	lo, hi = resolve(start, 0), resolve(stop, n)
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// Name is the dataset's name as its errors give it.
func (d *IndexableDataset) Name() string { return d.name }

// Sources are the sources GetData returns, in order.
func (d *IndexableDataset) Sources() []string { return slices.Clone(d.sources) }

// ProvidesSources are all the sources the dataset can provide (Fuel's
// provides_sources).
func (d *IndexableDataset) ProvidesSources() []string { return slices.Clone(d.providesSources) }

// AxisLabels maps sources to their axis names (a copy; nil when unknown).
func (d *IndexableDataset) AxisLabels() map[string][]string {
	return fuel.CloneAxisLabels(d.axisLabels)
}

// NumExamples is the number of examples.
func (d *IndexableDataset) NumExamples() int { return d.data[0].Shape[0] }

// Start and Stop are the start/stop arguments (nil for None).
func (d *IndexableDataset) Start() *int { return d.start }

// Stop is the stop argument (nil for None).
func (d *IndexableDataset) Stop() *int { return d.stop }

// Data returns a source's whole array (not a copy: do not modify it).
func (d *IndexableDataset) Data(source string) (*nd.Array, bool) {
	i := slices.Index(d.sources, source)
	if i < 0 {
		return nil, false
	}
	return d.data[i], true
}

// GetData returns the requested examples of each source, in Sources
// order. A slice request [Start, Stop) needs 0 <= Start < Stop <=
// NumExamples, an index request at least one index, each in [0,
// NumExamples) (in any order, repeats allowed), as Fuel's Subset checks
// requests. A Single request returns its example without the batch axis.
func (d *IndexableDataset) GetData(req fuel.Request) ([]*nd.Array, error) {
	return d.GetDataLent(req, nil)
}

// GetDataLent is GetData with the float32 and uint8 batches of slice and
// list requests in buffers r lends (fuel.LendingDataset); a nil r lends
// nothing.
func (d *IndexableDataset) GetDataLent(req fuel.Request, r *nd.Recycler) ([]*nd.Array, error) {
	return d.GetDataView(req, r, nil)
}

// GetDataView is GetDataLent with the uint8 sources marked in view given
// as views of the dataset's arrays for a slice request
// (fuel.ViewingDataset): the caller only reads them.
func (d *IndexableDataset) GetDataView(req fuel.Request, r *nd.Recycler, view []bool) ([]*nd.Array, error) {
	n := d.NumExamples()
	out := make([]*nd.Array, len(d.data))
	switch {
	case req.Single:
		if len(req.Indices) != 1 {
			return nil, fmt.Errorf("datasets: %s: a single-example request needs one index, got %d", d.name, len(req.Indices))
		}
		i := req.Indices[0]
		if i < 0 || i >= n {
			return nil, fmt.Errorf("datasets: %s: example %d out of range: the dataset has %d examples", d.name, i, n)
		}
		for k, a := range d.data {
			if p, ok := a.Data.([]*nd.Array); ok { // a source of differently shaped examples
				out[k] = p[i].Copy()
				continue
			}
			row := a.Slice(i, i+1).Copy()
			row.Shape = row.Shape[1:]
			out[k] = row
		}
	case req.Indices != nil:
		if len(req.Indices) == 0 {
			return nil, fmt.Errorf("datasets: %s: empty list request", d.name)
		}
		for _, i := range req.Indices {
			if i < 0 || i >= n {
				return nil, fmt.Errorf("datasets: %s: index %d out of range: the dataset has %d examples", d.name, i, n)
			}
		}
		for k, a := range d.data {
			if lendable(r, a) {
				out[k] = takeInto(r.Lent(a.DType(), append([]int{len(req.Indices)}, a.Shape[1:]...)...), a, req.Indices)
				continue
			}
			out[k] = copyParts(a.Take(req.Indices))
		}
	default:
		if req.Start < 0 || req.Stop > n || req.Start >= req.Stop {
			return nil, fmt.Errorf("datasets: %s: slice request [%d:%d] out of range: the dataset has %d examples (a request needs 0 <= start < stop <= %d)",
				d.name, req.Start, req.Stop, n, n)
		}
		for k, a := range d.data {
			if _, u8 := a.Data.([]uint8); u8 && r != nil && k < len(view) && view[k] && a.NDim() > 0 {
				out[k] = a.Slice(req.Start, req.Stop)
				continue
			}
			if lendable(r, a) {
				rows := a.Slice(req.Start, req.Stop)
				dst := r.Lent(a.DType(), rows.Shape...)
				copyData(dst.Data, rows.Data)
				out[k] = dst
				continue
			}
			out[k] = copyParts(a.Slice(req.Start, req.Stop).Copy())
		}
	}
	return out, nil
}

// lendable reports whether r lends the batches of source a: float32 or
// uint8 data of fixed shape.
func lendable(r *nd.Recycler, a *nd.Array) bool {
	if r == nil || a.NDim() == 0 {
		return false
	}
	switch a.Data.(type) {
	case []float32, []uint8:
		return true
	}
	return false
}

// copyData copies src into dst, two slices of one of lendable's types.
func copyData(dst, src any) {
	switch d := dst.(type) {
	case []float32:
		copy(d, src.([]float32))
	case []uint8:
		copy(d, src.([]uint8))
	}
}

// takeInto copies the rows idx of a into dst, in order, and returns dst.
func takeInto(dst, a *nd.Array, idx []int) *nd.Array {
	rs := a.RowSize()
	for j, i := range idx {
		copyData(nd.SliceData(dst.Data, j*rs, (j+1)*rs), nd.SliceData(a.Data, i*rs, (i+1)*rs))
	}
	return dst
}

// copyParts gives an object array (a source of differently shaped
// examples, a batch of which is an object array too) copies of its
// examples, so that a consumer cannot change the dataset's.
func copyParts(a *nd.Array) *nd.Array {
	if p, ok := a.Data.([]*nd.Array); ok {
		for i, x := range p {
			p[i] = x.Copy()
		}
	}
	return a
}
