package transformers

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/nd"
)

// Flatten is Fuel's Flatten(data_stream, which_sources=None): it reshapes
// each selected source of a batch to (batch, -1) and of an example to
// (-1,). The result shares the input's data. Axis labels, when the stream
// has them, become (first label, "feature") for batches and ("feature",)
// for examples on the selected sources (nil where a source had none).
func Flatten(stream fuel.Stream, whichSources []string) (*Transformer, error) {
	if stream == nil {
		return nil, fmt.Errorf("transformers: Flatten: no data stream")
	}
	var labels map[string][]string
	if in := stream.AxisLabels(); len(in) > 0 {
		sel := whichSources
		if sel == nil {
			sel = stream.Sources()
		}
		labels = make(map[string][]string, len(in))
		for src, l := range in {
			switch {
			case !slices.Contains(sel, src):
				labels[src] = l
			case len(l) == 0:
				labels[src] = nil
			case stream.ProducesExamples():
				labels[src] = []string{"feature"}
			default:
				labels[src] = []string{l[0], "feature"}
			}
		}
	}
	return sourcewise("Flatten", stream, whichSources, labels, func(a *nd.Array, _ string, example bool) (*nd.Array, error) {
		// The flattened view replaces a, so a batch lent by a Recycler
		// (fuse.go) goes back to it when the consumer releases the view.
		if example {
			b, err := a.Reshape(-1)
			if err == nil {
				a.HandOver(b)
			}
			return b, err
		}
		if a.NDim() == 0 {
			return nil, fmt.Errorf("cannot flatten a 0-d batch")
		}
		b, err := a.Reshape(a.Shape[0], -1)
		if err != nil {
			return nil, fmt.Errorf("cannot flatten shape %v to (%d, -1): %w", a.Shape, a.Shape[0], err)
		}
		a.HandOver(b)
		return b, nil
	})
}

// ScaleAndShift is Fuel's ScaleAndShift(data_stream, scale, shift,
// which_sources=None): each selected source becomes source*scale + shift,
// computed and typed as numpy 1.x computes `numpy.asarray(x) * scale +
// shift` with scale and shift Python floats:
//
//   - an integer or boolean source becomes float64: each element is
//     float64(x)*scale, rounded to float64, plus shift. So MNIST's uint8
//     pixels times 1/255.0 are float64 here as in Fuel, and only the Cast
//     that follows makes them float32 — float32(float64(x)*(1/255.0)),
//     which is not always float32(x)/255 computed in float32.
//   - a float32 source stays float32 (both operations in float32, scale
//     and shift rounded to float32 first) unless scale, or then shift, is
//     finite and beyond float32's range, which makes numpy's value-based
//     casting switch that step and the rest to float64.
//   - a float64 source stays float64.
//
// Fuel also accepts Python ints: numpy then keeps an integer source's
// dtype (uint8*2 wraps around as uint8). This function takes floats only,
// so a caller passing integers gets the float64 result.
func ScaleAndShift(stream fuel.Stream, scale, shift float64, whichSources []string) (*Transformer, error) {
	if stream == nil {
		return nil, fmt.Errorf("transformers: ScaleAndShift: no data stream")
	}
	t, err := sourcewise("ScaleAndShift", stream, whichSources, copyLabels(stream), func(a *nd.Array, _ string, _ bool) (*nd.Array, error) {
		if err := numeric(a); err != nil {
			return nil, err
		}
		return scaleShift(a, scale, shift), nil
	})
	if err != nil {
		return nil, err
	}
	t.fuse = &scaleShiftSpec{scale: scale, shift: shift, sel: selected(stream.Sources(), whichSources)}
	return t, nil
}

// fitsFloat32 reports whether numpy 1.x's min_scalar_type of a Python
// float is at most float32: NaN, infinities and values within float32's
// range.
func fitsFloat32(v float64) bool {
	return math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) <= math.MaxFloat32
}

func scaleShift(a *nd.Array, scale, shift float64) *nd.Array {
	if x, ok := a.Data.([]float32); ok && fitsFloat32(scale) {
		s := float32(scale)
		if fitsFloat32(shift) {
			b, out := float32(shift), make([]float32, len(x))
			for i, v := range x {
				// The conversion rounds the product, so that no fused
				// multiply-add changes the result.
				out[i] = float32(v*s) + b
			}
			return &nd.Array{Shape: slices.Clone(a.Shape), Data: out}
		}
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = float64(float32(v*s)) + shift
		}
		return &nd.Array{Shape: slices.Clone(a.Shape), Data: out}
	}
	out := make([]float64, a.Size())
	switch x := a.Data.(type) {
	case []uint8:
		for i, v := range x {
			out[i] = float64(float64(v)*scale) + shift
		}
	case []float64:
		for i, v := range x {
			out[i] = float64(v*scale) + shift
		}
	default:
		for i := range out {
			out[i] = float64(a.Flat(i)*scale) + shift
		}
	}
	return &nd.Array{Shape: slices.Clone(a.Shape), Data: out}
}

// Cast is Fuel's Cast(data_stream, dtype, which_sources=None): each
// selected source is converted to dtype, a numpy dtype name, or "floatX"
// for the configured floatX (read now, as Fuel reads it when the
// transformer is made). Conversions follow numpy's astype (floats to
// integers truncate toward zero).
func Cast(stream fuel.Stream, dtype string, whichSources []string) (*Transformer, error) {
	if stream == nil {
		return nil, fmt.Errorf("transformers: Cast: no data stream")
	}
	dt, err := resolveDType(dtype)
	if err != nil {
		return nil, fmt.Errorf("transformers: Cast: %w", err)
	}
	t, err := sourcewise("Cast", stream, whichSources, copyLabels(stream), func(a *nd.Array, _ string, _ bool) (*nd.Array, error) {
		if err := numeric(a); err != nil {
			return nil, err
		}
		if dt == nd.Str || dt == nd.Object {
			return nil, fmt.Errorf("cannot cast to %s", dt)
		}
		return astype(a, dt), nil
	})
	if err != nil {
		return nil, err
	}
	fuseCast(t, dt, selected(stream.Sources(), whichSources))
	return t, nil
}

func resolveDType(dtype string) (nd.DType, error) {
	if dtype == "floatX" {
		c, err := config.Load()
		if err != nil {
			return 0, err
		}
		return c.FloatX, nil
	}
	return nd.ParseDType(dtype)
}

// ForceFloatX is Fuel's ForceFloatX(data_stream, which_sources=None): a
// selected source of a float dtype other than floatX is cast to floatX;
// other sources pass unchanged.
func ForceFloatX(stream fuel.Stream, whichSources []string) (*Transformer, error) {
	if stream == nil {
		return nil, fmt.Errorf("transformers: ForceFloatX: no data stream")
	}
	floatX, err := resolveDType("floatX")
	if err != nil {
		return nil, fmt.Errorf("transformers: ForceFloatX: %w", err)
	}
	return ForceFloatXAs(stream, floatX, whichSources)
}

// ForceFloatXAs is ForceFloatX with floatX given (a run's own floatX)
// rather than read from Fuel's configuration.
func ForceFloatXAs(stream fuel.Stream, floatX nd.DType, whichSources []string) (*Transformer, error) {
	if stream == nil {
		return nil, fmt.Errorf("transformers: ForceFloatX: no data stream")
	}
	if !floatX.IsFloat() {
		return nil, fmt.Errorf("transformers: ForceFloatX: floatX must be float32 or float64, not %s", floatX)
	}
	return sourcewise("ForceFloatX", stream, whichSources, copyLabels(stream), func(a *nd.Array, _ string, _ bool) (*nd.Array, error) {
		if dt := a.DType(); dt.IsFloat() && dt != floatX {
			return astype(a, floatX), nil
		}
		return a, nil
	})
}

// copyLabels is the stream's axis labels, or nil when it has none (Fuel's
// `if data_stream.axis_labels: ...copy()`).
func copyLabels(stream fuel.Stream) map[string][]string {
	if l := stream.AxisLabels(); len(l) > 0 {
		return l
	}
	return nil
}

// MappingFunc maps one item (a batch or an example) of a stream, one
// array per source in the stream's order, to new arrays.
type MappingFunc func(data []*nd.Array) ([]*nd.Array, error)

// Mapping is Fuel's Mapping(data_stream, mapping, add_sources=None) with
// mapping_accepts=list: fn receives each item. Without addSources its
// result replaces the item and must have one array per source; with
// addSources its result, one array per added source, is appended to the
// item, and the sources become the stream's plus addSources. As in Fuel,
// the result has no axis labels.
func Mapping(stream fuel.Stream, fn MappingFunc, addSources []string) (*Transformer, error) {
	if stream == nil || fn == nil {
		return nil, fmt.Errorf("transformers: Mapping: needs a data stream and a mapping")
	}
	in := stream.Sources()
	sources := append(slices.Clone(in), addSources...)
	want := len(in)
	if len(addSources) > 0 {
		want = len(addSources)
	}
	return &Transformer{
		name:             "Mapping",
		child:            stream,
		sources:          sources,
		producesExamples: stream.ProducesExamples(),
		numChildSources:  len(in),
		transform: func(data []*nd.Array) ([]*nd.Array, error) {
			image, err := fn(data)
			if err != nil {
				return nil, err
			}
			if len(image) != want {
				return nil, fmt.Errorf("the mapping returned %d arrays, want %d (%s)", len(image), want, strings.Join(sources[len(sources)-want:], ", "))
			}
			if len(addSources) > 0 {
				return append(slices.Clone(data), image...), nil
			}
			return image, nil
		},
	}, nil
}

// FilterSources is Fuel's FilterSources(data_stream, sources): it keeps
// only the named sources, in the stream's order (the order of sources
// does not matter). Every name must be a source of the stream.
func FilterSources(stream fuel.Stream, sources []string) (*Transformer, error) {
	if stream == nil {
		return nil, fmt.Errorf("transformers: FilterSources: no data stream")
	}
	in := stream.Sources()
	for _, s := range sources {
		if !slices.Contains(in, s) {
			return nil, fmt.Errorf("transformers: FilterSources: sources must all be contained in data_stream.sources: %q is not among %s", s, strings.Join(in, ", "))
		}
	}
	keep := make([]bool, len(in))
	var out []string
	for i, s := range in {
		if keep[i] = slices.Contains(sources, s); keep[i] {
			out = append(out, s)
		}
	}
	var labels map[string][]string
	if l := stream.AxisLabels(); len(l) > 0 {
		labels = map[string][]string{}
		for src, v := range l {
			if slices.Contains(sources, src) {
				labels[src] = v
			}
		}
	}
	return &Transformer{
		name:             "FilterSources",
		child:            stream,
		sources:          out,
		axisLabels:       labels,
		producesExamples: stream.ProducesExamples(),
		numChildSources:  len(in),
		passesLoans:      true,
		transform: func(data []*nd.Array) ([]*nd.Array, error) {
			var res []*nd.Array
			for i, a := range data {
				if keep[i] {
					res = append(res, a)
				}
			}
			return res, nil
		},
	}, nil
}

// Rename is Fuel's Rename(data_stream, names, on_non_existent='raise'):
// names maps old source names to new ones. A name the stream does not
// provide is an error when onNonExistent is "raise" (or ""), is logged as
// a warning with "warn", and is skipped with "ignore". Two provided
// sources may not get the same new name, and a new name may not collide
// with a source that keeps its name. The data pass unchanged.
func Rename(stream fuel.Stream, names map[string]string, onNonExistent string) (*Transformer, error) {
	if stream == nil {
		return nil, fmt.Errorf("transformers: Rename: no data stream")
	}
	if onNonExistent == "" {
		onNonExistent = "raise"
	}
	if onNonExistent != "raise" && onNonExistent != "ignore" && onNonExistent != "warn" {
		return nil, fmt.Errorf("transformers: Rename: on_non_existent must be one of 'raise', 'ignore', 'warn', not %q", onNonExistent)
	}
	in := stream.Sources()
	usedNew := map[string]string{}
	for old, nw := range names {
		if !slices.Contains(in, old) {
			continue
		}
		if other, dup := usedNew[nw]; dup {
			a, b := min(old, other), max(old, other)
			return nil, fmt.Errorf("transformers: Rename: multiple old source names cannot map to the same new source name (%q and %q to %q)", a, b, nw)
		}
		usedNew[nw] = old
	}
	out := slices.Clone(in)
	olds := make([]string, 0, len(names))
	for old := range names {
		olds = append(olds, old)
	}
	sort.Strings(olds) // Go maps have no order; Fuel's dict has, so fix one.
	for _, old := range olds {
		nw := names[old]
		i := slices.Index(in, old)
		_, renamedAway := names[nw]
		if slices.Contains(in, nw) && !renamedAway && i >= 0 {
			return nil, fmt.Errorf("transformers: Rename: renaming source '%s' to '%s' would create two sources named '%s'", old, nw, nw)
		}
		if i < 0 {
			msg := fmt.Sprintf("Renaming source '%s' to '%s': stream does not provide a source '%s'", old, nw, old)
			switch onNonExistent {
			case "raise":
				return nil, fmt.Errorf("transformers: Rename: %s", msg)
			case "warn":
				slog.Warn("fuel.transformers.Rename: " + msg)
			}
			continue
		}
		out[i] = nw
	}
	var labels map[string][]string
	if l := stream.AxisLabels(); len(l) > 0 {
		labels = map[string][]string{}
		for src, v := range l {
			if nw, ok := names[src]; ok {
				src = nw
			}
			labels[src] = v
		}
	}
	return &Transformer{
		name:             "Rename",
		child:            stream,
		sources:          out,
		axisLabels:       labels,
		producesExamples: stream.ProducesExamples(),
		numChildSources:  len(in),
		passesLoans:      true,
		transform:        func(data []*nd.Array) ([]*nd.Array, error) { return data, nil },
	}, nil
}

// numeric refuses an array of strings (or a ragged batch holding some):
// arithmetic and casts are defined on numbers only.
func numeric(a *nd.Array) error {
	switch d := a.Data.(type) {
	case []string:
		return fmt.Errorf("the examples are strings, not numbers")
	case []*nd.Array:
		for _, p := range d {
			if p != nil {
				if err := numeric(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
