// Package numpyrand is a bit-exact Go reimplementation of numpy's legacy
// random number generator, numpy.random.RandomState (the MT19937 Mersenne
// Twister together with the "legacy" sampling algorithms that RandomState is
// frozen to).
//
// Blocks and Fuel seed every source of randomness with numpy: brick weight
// initialization (IsotropicGaussian, Uniform, ...), shuffled iteration
// schemes, toy datasets and dropout masks all draw from
// numpy.random.RandomState(seed). A Go port of those frameworks only
// reproduces the original experiments (and their checkpoints and tests) if
// it draws exactly the same numbers for the same seed, so this package
// matches numpy bit for bit rather than statistically:
//
//	rs := numpyrand.New(1234)  // numpy.random.RandomState(1234)
//	w := make([]float64, 6)
//	rs.FillNormal(w, 0, 0.01)  // rs.normal(0, 0.01, size=6)
//	perm := rs.Permutation(10) // rs.permutation(10)
//
// What is reproduced:
//
//   - Seeding: New/Seed use numpy's integer seeding (mt19937_seed, the
//     Knuth multiplier 1812433253), NewFromArray/SeedArray the reference
//     init_by_array that numpy uses for a sequence seed. Note that
//     RandomState(5) and RandomState([5]) are different streams.
//   - Uint32 is genrand_int32; RandomSample builds a 53-bit double from two
//     draws, (a>>5)*2**26 + (b>>6) over 2**53.
//   - StandardNormal is legacy_gauss: the Marsaglia polar method, keeping
//     the second value of each pair in the generator state (has_gauss,
//     gauss); Normal, FillNormal, Uniform and FillUniform apply numpy's
//     affine maps without fused multiply-adds.
//   - Randint follows RandomState.randint with its default dtype (C long,
//     int64 on 64-bit Linux): masked rejection sampling on the closed range
//     [0, high-low-1], using one 32-bit draw per attempt when that range fits
//     in 32 bits and two draws (the first one is the high word) otherwise.
//     A range of a single value consumes no draw at all.
//   - Permutation, ShuffleInts and Shuffle are numpy's legacy Fisher–Yates
//     shuffle (random_interval, i from n-1 down to 1).
//   - Binomial is legacy_random_binomial: inversion when min(p,1-p)*n <= 30,
//     BTPE otherwise, including the historical Stirling-term quirk that
//     numpy keeps for RandomState.
//   - State/SetState expose exactly what RandomState.get_state() returns
//     (key, pos, has_gauss, gauss), so a generator can be checkpointed and
//     restored mid-stream, including a pending cached Gaussian.
//
// Floating point: the only transcendental whose rounding reaches an output
// directly is the log in legacy_gauss. numpy calls the C library's log, and
// glibc's log is not correctly rounded, so this package carries an
// operation-for-operation port of glibc's log as glibc runs it on x86-64 CPUs
// with FMA (every x86-64 CPU since about 2013-2015). On machines whose C
// library computes log differently (older CPUs without FMA, other libcs or
// architectures) numpy itself produces slightly different normal deviates,
// typically in the last bit of a small fraction of them; this package always
// produces the x86-64/FMA/glibc values, independently of the CPU it runs on.
//
// A RandomState is not safe for concurrent use.
package numpyrand
