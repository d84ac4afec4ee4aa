package datasets

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// IterableSource is one named source of an IterableDataset: its examples,
// which may differ in shape (sentences of different lengths).
type IterableSource struct {
	Name     string
	Examples []*nd.Array
}

// IterableDataset is Fuel's IterableDataset(iterables, sources=None,
// axis_labels=None) over in-memory sources: a DataStream without an
// iteration scheme walks its examples in order (its position is the
// example index, so it resumes like any stream). As in Fuel it refuses
// iteration schemes: streams.DataStream reports the error.
type IterableDataset struct {
	sources    []string
	examples   [][]*nd.Array
	axisLabels map[string][]string
}

// NewIterableDataset builds an IterableDataset; all sources must have the
// same number of examples. sources, when non-nil, selects and orders them.
func NewIterableDataset(srcs []IterableSource, sources []string, axisLabels map[string][]string) (*IterableDataset, error) {
	if len(srcs) == 0 {
		return nil, fmt.Errorf("datasets: IterableDataset: no sources")
	}
	d := &IterableDataset{axisLabels: axisLabels}
	for _, s := range srcs {
		if len(s.Examples) != len(srcs[0].Examples) {
			return nil, fmt.Errorf("datasets: IterableDataset: source %q has %d examples, %q has %d", s.Name, len(s.Examples), srcs[0].Name, len(srcs[0].Examples))
		}
		if sources != nil && !slices.Contains(sources, s.Name) {
			continue
		}
		d.sources = append(d.sources, s.Name)
		d.examples = append(d.examples, s.Examples)
	}
	for _, s := range sources {
		if !slices.Contains(d.sources, s) {
			return nil, fmt.Errorf("datasets: IterableDataset: no source %q", s)
		}
	}
	return d, nil
}

// Sources are the dataset's sources.
func (d *IterableDataset) Sources() []string { return slices.Clone(d.sources) }

// AxisLabels are as given.
func (d *IterableDataset) AxisLabels() map[string][]string { return d.axisLabels }

// NumExamples is the number of examples.
func (d *IterableDataset) NumExamples() int { return len(d.examples[0]) }

// Iterable marks the dataset as one that takes no iteration scheme.
func (d *IterableDataset) Iterable() bool { return true }

// GetData returns one example (a single request), as a DataStream without
// a scheme asks for.
func (d *IterableDataset) GetData(req fuel.Request) ([]*nd.Array, error) {
	if !req.Single || len(req.Indices) != 1 {
		return nil, fmt.Errorf("datasets: IterableDataset: only one example at a time, in order (no iteration scheme)")
	}
	i := req.Indices[0]
	if i < 0 || i >= d.NumExamples() {
		return nil, fmt.Errorf("datasets: IterableDataset: example %d past the end (%d examples)", i, d.NumExamples())
	}
	out := make([]*nd.Array, len(d.examples))
	for k, ex := range d.examples {
		out[k] = ex[i].Copy()
	}
	return out, nil
}
