package transformers_test

import (
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// fuel.Generators finds every generator of a pipeline through the
// Composite and Random interfaces: below transformers, in each stream of a
// Merge, in each scheme of a ConcatenatedScheme, once each, outermost
// first.
func TestPipelineGenerators(t *testing.T) {
	dataset := func(name string) *datasets.IndexableDataset {
		d, err := datasets.NewIndexableDataset([]datasets.Source{{Name: name, Data: nd.FromSlice([]float32{1, 2, 3, 4}, 4)}}, datasets.IndexableOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b, c := numpyrand.New(1), numpyrand.New(2), numpyrand.New(3)
	shuffled, err := schemes.ShuffledScheme(schemes.Range(4), 2, a, false)
	if err != nil {
		t.Fatal(err)
	}
	left, err := streams.DataStream(dataset("x"), shuffled)
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := schemes.ShuffledScheme(schemes.Range(2), 2, b, false)
	s2, _ := schemes.ShuffledScheme(schemes.Range(2), 2, c, false)
	s3, _ := schemes.ShuffledScheme(schemes.Range(2), 2, b, false) // b again: listed once
	concat, err := schemes.ConcatenatedScheme([]schemes.Scheme{s1, s2, s3})
	if err != nil {
		t.Fatal(err)
	}
	right, err := streams.DataStream(dataset("y"), concat)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := transformers.Merge([]fuel.Stream{left, right}, []string{"x", "y"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	top, err := transformers.ScaleAndShift(merged, 2, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := fuel.Generators(top)
	want := []*numpyrand.RandomState{a, b, c}
	if len(got) != len(want) {
		t.Fatalf("%d generators, want %d: %+v", len(got), len(want), got)
	}
	for i, g := range got {
		if g.RNG != want[i] || g.Owner != "*schemes.Shuffled" {
			t.Errorf("generator %d: %s %p, want *schemes.Shuffled %p", i, g.Owner, g.RNG, want[i])
		}
	}
}
