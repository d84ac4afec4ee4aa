// Package toy is Fuel's fuel.datasets.toy: small synthetic datasets drawn
// from numpy's generator exactly as Fuel draws them (numpyrand is a
// bit-exact numpy RandomState), so that a seed gives Python Fuel's
// numbers.
package toy

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// SpiralOptions are Spiral's arguments; the zero value is not Fuel's
// default: use DefaultSpiral.
type SpiralOptions struct {
	NumExamples int
	Classes     int
	Cycles      float64
	Noise       float64
	// Seed seeds the RandomState; nil uses Fuel's config.default_seed.
	Seed *int
	// Indexable are IndexableDataset's options (start, stop, sources,
	// axis_labels).
	Indexable datasets.IndexableOptions
}

// DefaultSpiral are Fuel's defaults: num_examples=1000, classes=1,
// cycles=1., noise=0.0.
func DefaultSpiral() SpiralOptions {
	return SpiralOptions{NumExamples: 1000, Classes: 1, Cycles: 1, Noise: 0}
}

// seedOf resolves a seed argument.
func seedOf(seed *int) (uint32, error) {
	s := config.DefaultSeed()
	if seed != nil {
		s = *seed
	}
	if s < 0 || s > math.MaxUint32 {
		return 0, fmt.Errorf("seed must be between 0 and 2**32 - 1, got %d", s)
	}
	return uint32(s), nil
}

// Spiral is Fuel's Spiral: points on `classes` spiral arms in the plane.
// Sources, in order: features (float32 (N, 2), the point), position
// (float64 (N,), where on its arm, in [0, cycles)) and label (int64 (N,),
// the arm).
func Spiral(o SpiralOptions) (*datasets.IndexableDataset, error) {
	if o.NumExamples < 0 || o.Classes < 1 {
		return nil, fmt.Errorf("toy: Spiral: num_examples must be >= 0 and classes >= 1, got %d and %d", o.NumExamples, o.Classes)
	}
	seed, err := seedOf(o.Seed)
	if err != nil {
		return nil, fmt.Errorf("toy: Spiral: %w", err)
	}
	rng := numpyrand.New(seed)
	n := o.NumExamples
	pos := make([]float64, n)
	rng.FillUniform(pos, 0, o.Cycles)
	label := make([]int64, n)
	for i := range label {
		label[i] = rng.Randint(0, int64(o.Classes))
	}
	features := make([]float32, 2*n)
	for i := 0; i < n; i++ {
		radius := (2*pos[i] + 1) / 3.
		phase := float64(label[i]) * (2 * math.Pi) / float64(o.Classes)
		angle := 2*math.Pi*pos[i] + phase
		features[2*i] = float32(radius * math.Sin(angle))
		features[2*i+1] = float32(radius * math.Cos(angle))
	}
	addNoise(rng, features, o.Noise)
	return datasets.NewIndexableDataset([]datasets.Source{
		{Name: "features", Data: nd.FromSlice(features, n, 2)},
		{Name: "position", Data: nd.FromSlice(pos, n)},
		{Name: "label", Data: nd.FromSlice(label, n)},
	}, o.Indexable)
}

// addNoise is `features += noise * rng.normal(size=features.shape)` on a
// float32 array: the sum in float64, stored back as float32. Fuel draws
// the normals even when noise is 0.
func addNoise(rng *numpyrand.RandomState, features []float32, noise float64) {
	for i := range features {
		features[i] = float32(float64(features[i]) + noise*rng.Normal(0, 1))
	}
}

// SwissRollOptions are SwissRoll's arguments; use DefaultSwissRoll.
type SwissRollOptions struct {
	NumExamples int
	Noise       float64
	Seed        *int
	Indexable   datasets.IndexableOptions
}

// DefaultSwissRoll are Fuel's defaults: num_examples=1000, noise=0.0.
func DefaultSwissRoll() SwissRollOptions { return SwissRollOptions{NumExamples: 1000} }

// SwissRoll is Fuel's SwissRoll: points on a 3-D Swiss roll. Sources:
// features (float32 (N, 3): x, y, z) and position (float32 (N, 2): the
// position along the roll and z).
func SwissRoll(o SwissRollOptions) (*datasets.IndexableDataset, error) {
	if o.NumExamples < 0 {
		return nil, fmt.Errorf("toy: SwissRoll: num_examples must be >= 0, got %d", o.NumExamples)
	}
	seed, err := seedOf(o.Seed)
	if err != nil {
		return nil, fmt.Errorf("toy: SwissRoll: %w", err)
	}
	const cycles = 1.5
	rng := numpyrand.New(seed)
	n := o.NumExamples
	pos := make([]float64, n)
	rng.FillUniform(pos, 0, 1)
	z := make([]float64, n)
	rng.FillUniform(z, -1, 1)
	features := make([]float32, 3*n)
	position := make([]float32, 2*n)
	for i := 0; i < n; i++ {
		phi := cycles * math.Pi * (1 + 2*pos[i])
		radius := (1 + 2*pos[i]) / 3
		features[3*i] = float32(radius * math.Cos(phi))
		features[3*i+1] = float32(radius * math.Sin(phi))
		features[3*i+2] = float32(z[i])
		position[2*i] = float32(pos[i])
		position[2*i+1] = float32(z[i])
	}
	addNoise(rng, features, o.Noise)
	return datasets.NewIndexableDataset([]datasets.Source{
		{Name: "features", Data: nd.FromSlice(features, n, 3)},
		{Name: "position", Data: nd.FromSlice(position, n, 2)},
	}, o.Indexable)
}
