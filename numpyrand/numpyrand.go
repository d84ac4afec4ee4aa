package numpyrand

import (
	"fmt"
	"math"
)

const (
	stateLen  = 624 // RK_STATE_LEN, the MT19937 state size in 32-bit words
	mtM       = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// RandomState is numpy.random.RandomState: an MT19937 generator plus the
// cached second Gaussian of the legacy polar method.
type RandomState struct {
	key      [stateLen]uint32
	pos      int
	hasGauss bool
	gauss    float64

	// Caches of the per-(n, p) set-up of the binomial samplers. numpy keeps
	// an equivalent cache; the values are pure functions of (n, p), so the
	// cache only saves time and is not part of State.
	binInv  binomialInversionCache
	binBTPE binomialBTPECache
}

// State is the complete state of a RandomState, as returned by numpy's
// RandomState.get_state(): ('MT19937', Key, Pos, HasGauss, Gauss).
type State struct {
	Key      [stateLen]uint32
	Pos      int
	HasGauss bool
	Gauss    float64
}

// New returns a RandomState seeded as numpy.random.RandomState(seed) seeds
// it (seed in [0, 2**32)).
func New(seed uint32) *RandomState {
	r := &RandomState{}
	r.Seed(seed)
	return r
}

// NewFromArray returns a RandomState seeded as
// numpy.random.RandomState([key[0], key[1], ...]) seeds it (init_by_array).
// It panics if key is empty, as numpy raises ValueError.
func NewFromArray(key []uint32) *RandomState {
	r := &RandomState{}
	r.SeedArray(key)
	return r
}

// Seed re-seeds r as RandomState.seed(seed) does; any cached Gaussian is
// discarded.
func (r *RandomState) Seed(seed uint32) {
	// mt19937_seed: Knuth's multiplicative recurrence from the MT reference.
	s := seed
	for i := 0; i < stateLen; i++ {
		r.key[i] = s
		s = 1812433253*(s^(s>>30)) + uint32(i) + 1
	}
	r.pos = stateLen
	r.resetGauss()
}

// SeedArray re-seeds r as RandomState.seed([key[0], ...]) does (the MT19937
// reference init_by_array); any cached Gaussian is discarded. It panics if key
// is empty.
func (r *RandomState) SeedArray(key []uint32) {
	if len(key) == 0 {
		panic("numpyrand: seed must be non-empty")
	}
	mt := &r.key
	// init_genrand(19650218)
	mt[0] = 19650218
	for i := 1; i < stateLen; i++ {
		mt[i] = 1812433253*(mt[i-1]^(mt[i-1]>>30)) + uint32(i)
	}
	i, j := 1, 0
	k := max(stateLen, len(key))
	for ; k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= stateLen {
			mt[0] = mt[stateLen-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = stateLen - 1; k > 0; k-- {
		mt[i] = (mt[i] ^ ((mt[i-1] ^ (mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= stateLen {
			mt[0] = mt[stateLen-1]
			i = 1
		}
	}
	mt[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
	r.pos = stateLen
	r.resetGauss()
}

func (r *RandomState) resetGauss() {
	r.hasGauss = false
	r.gauss = 0
}

// State returns a copy of the generator's complete state.
func (r *RandomState) State() State {
	return State{Key: r.key, Pos: r.pos, HasGauss: r.hasGauss, Gauss: r.gauss}
}

// SetState restores a state obtained from State (or from numpy's
// RandomState.get_state()). It panics if s.Pos is outside [0, 624].
func (r *RandomState) SetState(s State) {
	if s.Pos < 0 || s.Pos > stateLen {
		panic(fmt.Sprintf("numpyrand: invalid state position %d", s.Pos))
	}
	r.key = s.Key
	r.pos = s.Pos
	r.hasGauss = s.HasGauss
	r.gauss = s.Gauss
}

// generate refills the key with the next 624 words (mt19937_gen).
func (r *RandomState) generate() {
	k := &r.key
	var i int
	for i = 0; i < stateLen-mtM; i++ {
		y := (k[i] & upperMask) | (k[i+1] & lowerMask)
		k[i] = k[i+mtM] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	}
	for ; i < stateLen-1; i++ {
		y := (k[i] & upperMask) | (k[i+1] & lowerMask)
		k[i] = k[i+mtM-stateLen] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	}
	y := (k[stateLen-1] & upperMask) | (k[0] & lowerMask)
	k[stateLen-1] = k[mtM-1] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	r.pos = 0
}

// Uint32 returns the next raw 32-bit output of the Mersenne Twister
// (genrand_int32).
func (r *RandomState) Uint32() uint32 {
	if r.pos >= stateLen {
		r.generate()
	}
	y := r.key[r.pos]
	r.pos++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// uint64 is numpy's mt19937_next64: the first 32-bit draw is the high word.
func (r *RandomState) uint64() uint64 {
	hi := uint64(r.Uint32())
	return hi<<32 | uint64(r.Uint32())
}

// RandomSample returns a float64 in [0, 1) as RandomState.random_sample()
// does: (a>>5 * 2**26 + b>>6) / 2**53 for two consecutive draws a, b.
func (r *RandomState) RandomSample() float64 {
	a := r.Uint32() >> 5
	b := r.Uint32() >> 6
	// Exact: the numerator is an integer below 2**53.
	return (float64(a)*67108864.0 + float64(b)) / 9007199254740992.0
}

// Uniform returns low + (high-low)*random_sample(), as
// RandomState.uniform(low, high) does. It panics if high-low is not finite
// (numpy raises OverflowError).
func (r *RandomState) Uniform(low, high float64) float64 {
	rng := high - low
	if math.IsInf(rng, 0) || math.IsNaN(rng) {
		panic("numpyrand: uniform: high - low range exceeds valid bounds")
	}
	return low + float64(rng*r.RandomSample())
}

// FillUniform fills dst as RandomState.uniform(low, high, size=len(dst))
// does.
func (r *RandomState) FillUniform(dst []float64, low, high float64) {
	rng := high - low
	if math.IsInf(rng, 0) || math.IsNaN(rng) {
		panic("numpyrand: uniform: high - low range exceeds valid bounds")
	}
	for i := range dst {
		dst[i] = low + float64(rng*r.RandomSample())
	}
}

// StandardNormal returns a standard normal deviate exactly as numpy's
// legacy_gauss (RandomState.standard_normal) does: the Marsaglia polar method
// produces two deviates per accepted pair; the second is returned at once and
// the first is cached and returned by the next call.
func (r *RandomState) StandardNormal() float64 {
	if r.hasGauss {
		g := r.gauss
		r.hasGauss = false
		r.gauss = 0
		return g
	}
	var x1, x2, r2 float64
	for {
		x1 = 2.0*r.RandomSample() - 1.0
		x2 = 2.0*r.RandomSample() - 1.0
		r2 = float64(x1*x1) + float64(x2*x2)
		if r2 < 1.0 && r2 != 0.0 {
			break
		}
	}
	f := math.Sqrt(-2.0 * glibcLog(r2) / r2)
	r.gauss = f * x1
	r.hasGauss = true
	return f * x2
}

// Normal returns loc + scale*StandardNormal(), as RandomState.normal(loc,
// scale) does. It panics if scale is negative (numpy raises ValueError).
func (r *RandomState) Normal(loc, scale float64) float64 {
	checkScale(scale)
	return loc + float64(scale*r.StandardNormal())
}

// FillNormal fills dst as RandomState.normal(loc, scale, size=len(dst))
// does.
func (r *RandomState) FillNormal(dst []float64, loc, scale float64) {
	checkScale(scale)
	for i := range dst {
		dst[i] = loc + float64(scale*r.StandardNormal())
	}
}

func checkScale(scale float64) {
	// numpy's CONS_NON_NEGATIVE: rejects anything with the sign bit set
	// (including -0.0) that is not NaN.
	if !math.IsNaN(scale) && math.Signbit(scale) {
		panic("numpyrand: normal: scale < 0")
	}
}
