package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Blocks' Random bricks (blocks.bricks.Random, a base of script bricks):
//
//	brick.theano_seed   the seed of the brick's streams: Random(theano_seed=...) or drawn once,
//	                    as Blocks draws it, randint(2**31 - 1) from its class's seed_rng
//	brick.theano_rng    an MRG_RandomStreams(theano_seed), the same one for the brick's
//	                    lifetime (settable, as in Blocks); its draws are saved in checkpoints

// randomBrickAttr reads theano_seed or theano_rng of a Random brick.
func randomBrickAttr(th *starlark.Thread, base *bricks.Base, name string) (starlark.Value, bool, error) {
	if name == "theano_seed" {
		return starlark.MakeInt64(base.TheanoSeed()), true, nil
	}
	s, err := base.TheanoRNG(func(seed int64) (*core.RandomStreams, error) {
		r, err := starlib.NewRandomStreams(th, "MRG_RandomStreams", starlark.MakeInt64(seed))
		if err != nil {
			return nil, fmt.Errorf("%s.theano_rng: %w", base.AnnotationName(), err)
		}
		return r.S, nil
	})
	if err != nil {
		return nil, true, err
	}
	return &starlib.RandomStreams{S: s, Kind: "MRG_RandomStreams"}, true, nil
}

// setRandomBrickAttr sets theano_seed (once, as Blocks' setter) or
// theano_rng (random streams) of a Random brick.
func setRandomBrickAttr(base *bricks.Base, class, name string, v starlark.Value) error {
	if name == "theano_seed" {
		return setTheanoSeed(base, class, v)
	}
	r, ok := v.(*starlib.RandomStreams)
	if !ok {
		return fmt.Errorf("%s.theano_rng: got %s, want random streams (MRG_RandomStreams or RandomStreams)", class, v.Type())
	}
	base.SetTheanoRNG(r.S)
	return nil
}

func setTheanoSeed(base *bricks.Base, what string, v starlark.Value) error {
	var s int64
	if err := starlark.AsInt(v, &s); err != nil {
		return fmt.Errorf("%s: theano_seed: got %s, want an int", what, v.Type())
	}
	return base.SetTheanoSeed(s)
}

// newRandomBrick is Random(theano_seed=None, name=None) called directly,
// as Blocks' test_random_brick does: an instance of a class Random whose
// only base is blocks.bricks.Random.
func newRandomBrick(thread *starlark.Thread, c *BrickClass, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	cls, err := starlib.NewClass(thread, starlib.NewObjectClass(), "Random", starlark.Tuple{c}, starlark.NewDict(0))
	if err != nil {
		return nil, err
	}
	return starlark.Call(thread, cls, args, kwargs)
}
