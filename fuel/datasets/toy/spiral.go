// Package toy is Fuel's fuel.datasets.toy: small synthetic datasets made
// from a seeded numpy RandomState, so that they are the numbers Fuel makes.
package toy

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// SpiralOptions are Spiral's arguments, as Fuel names them.
type SpiralOptions struct {
	NumExamples int     // num_examples (Fuel's default 1000)
	Classes     int     // classes: the number of arms (default 1)
	Cycles      float64 // cycles: the turns each arm takes (default 1)
	Noise       float64 // noise: standard deviation of Gaussian noise on the features (default 0)
	Seed        uint32  // seed (Fuel's default config.default_seed = 1)
	// Indexable holds IndexableDataset's options (sources=, start, stop).
	Indexable datasets.IndexableOptions
}

// DefaultSpiralOptions are Fuel's defaults.
func DefaultSpiralOptions() SpiralOptions {
	return SpiralOptions{NumExamples: 1000, Classes: 1, Cycles: 1, Seed: 1}
}

// SpiralData computes Fuel's Spiral sources, in Fuel's order of draws from
// RandomState(seed): pos = uniform(0, cycles, n), label = randint(0,
// classes, n), then radius (2 pos + 1)/3, phase label·2π/classes, features
// (radius·sin(2π pos + phase), radius·cos(...)) in float32, plus
// noise·normal(size=(n, 2)). It returns features (float32, (n, 2)), position
// (float64, (n,)) and label (int64, (n,)).
func SpiralData(o SpiralOptions) (features, position, label *nd.Array, err error) {
	if o.NumExamples < 0 || o.Classes < 1 {
		return nil, nil, nil, fmt.Errorf("Spiral: num_examples must be >= 0 and classes >= 1, got %d and %d", o.NumExamples, o.Classes)
	}
	n := o.NumExamples
	rng := numpyrand.New(o.Seed)
	pos := make([]float64, n)
	for i := range pos {
		pos[i] = rng.Uniform(0, o.Cycles)
	}
	lab := make([]int64, n)
	for i := range lab {
		lab[i] = rng.Randint(0, int64(o.Classes))
	}
	feat := make([]float32, 2*n)
	for i := range n {
		radius := (2*pos[i] + 1) / 3.
		phase := float64(lab[i]) * (2 * math.Pi) / float64(o.Classes)
		feat[2*i] = float32(radius * math.Sin(2*math.Pi*pos[i]+phase))
		feat[2*i+1] = float32(radius * math.Cos(2*math.Pi*pos[i]+phase))
	}
	// features += noise * normal(size=(n, 2)): float32 + float64, stored
	// back into float32 (numpy's in-place add casts).
	for i := range feat {
		feat[i] = float32(float64(feat[i]) + o.Noise*rng.Normal(0, 1))
	}
	return nd.FromSlice(feat, n, 2), nd.FromSlice(pos, n), nd.FromSlice(lab, n), nil
}

// NewSpiral is Fuel's Spiral dataset: an IndexableDataset with the sources
// features, position and label.
func NewSpiral(o SpiralOptions) (*datasets.IndexableDataset, error) {
	f, p, l, err := SpiralData(o)
	if err != nil {
		return nil, err
	}
	return datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: f}, {Name: "position", Data: p}, {Name: "label", Data: l}}, o.Indexable)
}
