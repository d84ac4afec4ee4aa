package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// RandomStreams is Theano's shared_randomstreams.RandomStreams, and here
// also its sandbox.rng_mrg.MRG_RandomStreams: the source of a graph's
// random draws. Every draw made from it (Draw, Multinomial) is a random op
// with a generator of its own, numpy's RandomState(s) where s is the next
// seedgen.randint(2**30) of the stream's seed generator seedgen =
// RandomState(seed), exactly as Theano's RandomStreams.gen seeds each
// new draw; the op then draws what numpy's RandomState.normal, uniform,
// binomial or multinomial draw (see RandomDraw). So a stream's draws are
// determined by its seed, the order in which the script makes them and
// how many times each has run; with constant parameters they are the
// numbers Theano's RandomStreams gives, and not the numbers of Theano's
// MRG31k3p generator.
type RandomStreams struct {
	seed    uint32
	seedgen *numpyrand.RandomState
	gens    []*numpyrand.RandomState
}

// NewRandomStreams returns a stream seeded with seed.
func NewRandomStreams(seed uint32) *RandomStreams {
	return &RandomStreams{seed: seed, seedgen: numpyrand.New(seed)}
}

// DefaultSeed is the seed the stream was made with.
func (s *RandomStreams) DefaultSeed() uint32 { return s.seed }

// next makes the generator of a new draw.
func (s *RandomStreams) next() *numpyrand.RandomState {
	g := numpyrand.New(uint32(s.seedgen.Randint(0, 1<<30)))
	s.gens = append(s.gens, g)
	return g
}

// Generators are the generators of the draws made from the stream, in the
// order they were made (for checkpoints).
func (s *RandomStreams) Generators() []*numpyrand.RandomState { return s.gens }

// Reseed is Theano's RandomStreams.seed(seed): every draw made so far
// starts again from RandomState(RandomState(seed).randint(2**30)), the
// draws in the order they were made. Draws made later are seeded as
// before, from the stream's own seed generator.
func (s *RandomStreams) Reseed(seed uint32) {
	g := numpyrand.New(seed)
	for _, d := range s.gens {
		d.Seed(uint32(g.Randint(0, 1<<30)))
	}
}

// Draw makes a draw of dist from the stream: RandomDraw with the next
// generator.
func (s *RandomStreams) Draw(dist Distribution, a, b float64, dt nd.DType, size []*Variable) (*Variable, error) {
	if dist == DistMultinomial {
		return nil, fmt.Errorf("random streams: use Multinomial for a multinomial")
	}
	// Checked before a generator is made, so that a refused draw leaves the
	// stream as it was.
	if _, err := RandomDraw(dist, a, b, dt, size, numpyrand.New(0)); err != nil {
		return nil, err
	}
	return RandomDraw(dist, a, b, dt, size, s.next())
}

// Multinomial makes a multinomial draw from the stream (core's
// Multinomial with the next generator).
func (s *RandomStreams) Multinomial(n int64, pvals *Variable, dt nd.DType, size []*Variable) (*Variable, error) {
	if _, err := Multinomial(n, pvals, dt, size, numpyrand.New(0)); err != nil {
		return nil, err
	}
	return Multinomial(n, pvals, dt, size, s.next())
}
