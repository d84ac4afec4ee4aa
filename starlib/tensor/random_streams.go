package tensor

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
)

// randomStreamsModules are Theano's in-graph random number generators:
//
//	MRG_RandomStreams(seed=12345)      module theano.sandbox.rng_mrg
//	RandomStreams(seed=None)           module theano.tensor.shared_randomstreams (None: seed 1)
//	    rng.normal(size=None, avg=0.0, std=1.0, ndim=None, dtype=None)
//	    rng.uniform(size=None, low=0.0, high=1.0, ndim=None, dtype=None)
//	    rng.binomial(size=None, n=1, p=0.5, ndim=None, dtype='int64')
//	    rng.multinomial(size=None, n=1, pvals=None, ndim=None, dtype='int64')
//	    rng.seed(seed=None), rng.updates() (empty: draws advance by themselves)
//
// Each call makes a draw: a variable holding fresh numbers at every call
// of a compiled function. size is a tuple of ints and int scalars
// computed from shapes ((x.shape[0], 10)) or x.shape. The numbers are
// numpy's, from a generator per draw seeded as Theano's RandomStreams
// seeds them (starlib.RandomStreams, core.RandomStreams;
// docs/regularization.md).
func randomStreamsModules() []*starlarkstruct.Module {
	return []*starlarkstruct.Module{
		{Name: "theano.sandbox.rng_mrg", Members: starlark.StringDict{
			"MRG_RandomStreams": starlib.RandomStreamsConstructor("MRG_RandomStreams"),
		}},
		{Name: "theano.tensor.shared_randomstreams", Members: starlark.StringDict{
			"RandomStreams": starlib.RandomStreamsConstructor("RandomStreams"),
		}},
	}
}
