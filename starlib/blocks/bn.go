package blocks

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.bricks, batch normalization (added to the module):
//
//	BatchNormalization(input_dim=None, broadcastable=None, conserve_memory=True, epsilon=1e-4,
//	                   scale_init=None, shift_init=None, mean_only=False, learn_scale=True,
//	                   learn_shift=True, name=None, seed=None)
//	    normalizes its input (batch axis first; input_dim is an int or a tuple for one
//	    example) by the population statistics (inference mode, the default) or by the
//	    minibatch's (training mode: blocks.graph.apply_batch_normalization or
//	    batch_normalization); attributes scale, shift, population_mean, population_stdev
//	SpatialBatchNormalization(input_dim, ...)   input_dim (channels, height, width): one
//	    statistic per channel
//	BatchNormalizedMLP(activations, dims=None, weights_init=None, biases_init=None,
//	                   use_bias=False, conserve_memory=True, mean_only=False,
//	                   learn_scale=True, learn_shift=True, name=None, seed=None)
//	    an MLP whose activations are each wrapped in a Sequence batch_norm_activation_i
//	    of a BatchNormalization and the activation
//	brick_tree(brick)   the brick hierarchy as text: classes, parameters, shapes, roles
func bnModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks", Members: starlark.StringDict{
		"brick_tree": starlib.NewBuiltin("brick_tree", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var br *Brick
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "brick", &br); err != nil {
				return nil, err
			}
			var sb strings.Builder
			if err := bricks.PrintTree(&sb, br.B); err != nil {
				return nil, err
			}
			return starlark.String(sb.String()), nil
		}),
	}})
	return
}

// bnSetField sets a BatchNormalization's image_size and num_channels
// (Blocks' properties, which rewrite input_dim).
func bnSetField(b *Brick, name string, v starlark.Value) (bool, error) {
	bn, ok := b.B.(*bricks.BatchNormalization)
	if !ok {
		return false, nil
	}
	switch name {
	case "image_size":
		x, err := convAttr(bn.Base, name, attrSize, v)
		if err != nil {
			return true, err
		}
		bn.SetImageSize(x.(bricks.Size))
		return true, nil
	case "num_channels":
		var n int
		if err := starlark.AsInt(v, &n); err != nil || n <= 0 {
			return true, fmt.Errorf("%s.num_channels must be a positive int, got %s", bn.Name, v)
		}
		bn.SetNumChannels(n)
		return true, nil
	}
	return false, nil
}

func bnAttrNames(b bricks.Brick) []string {
	switch b.(type) {
	case *bricks.BatchNormalization:
		return []string{"scale", "shift", "population_mean", "population_stdev", "broadcastable", "training_mode", "image_size", "num_channels", "num_output_channels", "output_dim"}
	case *bricks.BatchNormalizedMLP:
		return []string{"linear_transformations", "activations"}
	}
	return nil
}

func bnAttr(br *Brick, name string) (starlark.Value, bool, error) {
	v, ok := bnAttrValue(br.B, name)
	return v, ok, nil
}

func bnAttrValue(b bricks.Brick, name string) (starlark.Value, bool) {
	switch x := b.(type) {
	case *bricks.BatchNormalization:
		v := map[string]*core.Variable{"scale": x.Scale, "shift": x.Shift, "population_mean": x.PopulationMean, "population_stdev": x.PopulationStdev}
		if p, ok := v[name]; ok {
			if p == nil {
				return starlark.None, true
			}
			return &starlib.Variable{V: p}, true
		}
		switch name {
		case "broadcastable":
			if x.Broadcastable == nil {
				return starlark.None, true
			}
			t := make(starlark.Tuple, len(x.Broadcastable))
			for i, v := range x.Broadcastable {
				t[i] = starlark.Bool(v)
			}
			return t, true
		case "training_mode":
			return starlark.Bool(x.TrainingMode()), true
		case "image_size":
			if im := x.ImageSize(); im != nil {
				return sizeTuple(im), true
			}
			return starlark.None, true
		case "num_channels", "num_output_channels":
			if n, ok := x.NumChannels(); ok {
				return starlark.MakeInt(n), true
			}
			return starlark.None, true
		case "output_dim":
			return attrValue(brickAttrOf(x, "input_dim")), true
		}
	case *bricks.BatchNormalizedMLP:
		switch name {
		case "linear_transformations":
			var out []starlark.Value
			for _, l := range x.LinearTransformations {
				out = append(out, &Brick{l})
			}
			return starlark.NewList(out), true
		case "activations":
			var out []starlark.Value
			for _, a := range x.Activations {
				out = append(out, &Brick{a})
			}
			return starlark.NewList(out), true
		}
	}
	return nil, false
}
