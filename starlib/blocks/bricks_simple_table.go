package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/starlib"
)

// The brick classes of blocks.bricks (simple, sequences, batch
// normalization), blocks.bricks.cost and blocks.bricks.conv as tables;
// and NDimensionalSoftmax, Blocks' Softmax wrapped by WithExtraDims.
func bricksSimpleTableModules() (mods []*starlarkstruct.Module) {
	simple := registerClasses(true, simpleBrickTables()...)
	// Blocks' class NDimensionalSoftmax(Softmax): decorators = [WithExtraDims()].
	simple["NDimensionalSoftmax"] = &wrappedBrickClass{base: simple["Softmax"].(brickClassValue), class: "NDimensionalSoftmax"}
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks", Members: simple})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.cost", Members: registerClasses(true, costBrickTables()...)})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.conv", Members: registerClasses(true, convBrickTables()...)})
	return
}

func simpleBrickTables() []*classTable {
	const m = "blocks.bricks"
	activation := func(class, doc string) *classTable {
		return brickTable(m, class, doc, ps(namePositional), nil, func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
			return bricks.NewActivation(cfg, class, name, 0.01)
		})
	}
	mlp := func(c *classCall, cfg *bricks.Config, name string, bn bool) (bricks.Brick, error) {
		class := c.table.Name
		acts, err := brickList(class+": activations", activationBricks(c.Take("activations")), !bn)
		if err != nil {
			return nil, err
		}
		var dims []int
		if d := c.Take("dims"); d != nil && d != starlark.None {
			if dims, err = starlib.AsInts(d); err != nil {
				return nil, fmt.Errorf("%s: dims: %v", class, err)
			}
		}
		if bn {
			return bricks.NewBatchNormalizedMLP(cfg, name, acts, dims)
		}
		proto, err := mlpPrototype(c.Take("prototype"))
		if err != nil {
			return nil, err
		}
		if proto == nil {
			return bricks.NewMLP(cfg, name, acts, dims)
		}
		layers, err := copyPrototype(c.thread, "MLP", proto, len(acts)) // script_bricks.go
		if err != nil {
			return nil, err
		}
		return bricks.NewMLPOf(cfg, name, acts, dims, layers)
	}
	bnParams := ps(lazy("input_dim"), opt("broadcastable", "None"), opt("conserve_memory", "True"), opt("epsilon", "0.0001"),
		classParam{Name: "scale_init", Default: "None", Stored: "Constant(1)"}, classParam{Name: "shift_init", Default: "None", Stored: "Constant(0)"}, opt("mean_only", "False"), opt("learn_scale", "True"),
		opt("learn_shift", "True"), nameParam, kw("seed", "None"))
	bn := func(class string) *classTable {
		return brickTable(m, class, "normalizes its input by population or minibatch statistics", bnParams, nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				var b *bricks.BatchNormalization
				if class == "SpatialBatchNormalization" {
					b = bricks.NewSpatialBatchNormalization(cfg, name)
				} else {
					b = bricks.NewBatchNormalization(cfg, name)
				}
				if v := c.Take("broadcastable"); v != starlark.None {
					bs, err := boolTuple(class, v)
					if err != nil {
						return nil, err
					}
					b.Broadcastable = bs
				}
				if v, ok := c.given["epsilon"]; ok {
					if f, ok := starlark.AsFloat(v); ok {
						c.given["epsilon"] = starlark.Float(f) // an int epsilon is a float attribute
					}
				}
				return b, nil
			})
	}
	return []*classTable{
		brickTable(m, "Linear", "y = x·W + b", params(ps(lazy("input_dim"), lazy("output_dim")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewLinear(cfg, name), nil
			}),
		brickTable(m, "Bias", "y = x + b", ps(lazy("dim"), nameParam, kw("biases_init", "None")), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewBias(cfg, name), nil
			}),
		brickTable(m, "MLP", "Linear bricks interleaved with activations",
			params(ps(req("activations"), lazy("dims"), opt("prototype", "None")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return mlp(c, cfg, name, false)
			}),
		brickTable(m, "Sequence", "applies the application methods in turn", ps(req("application_methods"), nameParam), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				apps, err := appList("Sequence", c.Take("application_methods"))
				if err != nil {
					return nil, err
				}
				return bricks.NewSequence(cfg, name, apps), nil
			}),
		brickTable(m, "FeedforwardSequence", "a Sequence with input_dim and output_dim", ps(req("application_methods"), nameParam), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				apps, err := appList("FeedforwardSequence", c.Take("application_methods"))
				if err != nil {
					return nil, err
				}
				return bricks.NewFeedforwardSequence(cfg, name, apps), nil
			}),
		activation("Identity", "y = x"),
		activation("Tanh", "y = tanh(x)"),
		activation("Logistic", "y = 1 / (1 + exp(-x))"),
		activation("Softplus", "y = log(1 + exp(x))"),
		activation("Rectifier", "y = max(x, 0)"),
		brickTable(m, "LeakyRectifier", "y = x if x > 0 else leak*x", ps(classParam{Name: "leak", Default: "0.01", Kind: argFloat}, nameParam), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewActivation(cfg, "LeakyRectifier", name, c.Float("leak"))
			}),
		brickTable(m, "Softmax", "softmax over the last axis; log_probabilities, categorical_cross_entropy", ps(namePositional), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewSoftmax(cfg, name), nil
			}),
		brickTable(m, "Maxout", "the maximum over num_pieces pieces of the last axis", ps(lazy("num_pieces"), nameParam), setConvBrickAttrOf("Maxout"),
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewMaxout(cfg, name), nil
			}),
		brickTable(m, "LinearMaxout", "Linear then Maxout", params(ps(lazy("input_dim"), lazy("output_dim"), lazy("num_pieces")), initKw),
			setConvBrickAttrOf("LinearMaxout"),
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewLinearMaxout(cfg, name), nil
			}),
		bn("BatchNormalization"),
		bn("SpatialBatchNormalization"),
		brickTable(m, "BatchNormalizedMLP", "an MLP with a BatchNormalization before each activation",
			params(ps(req("activations"), lazy("dims"), nameParam, kw("weights_init", "None"), kw("biases_init", "None"),
				kw("use_bias", "False"), kw("seed", "None"), kw("conserve_memory", "True"), kw("mean_only", "False"),
				kw("learn_scale", "True"), kw("learn_shift", "True"))), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return mlp(c, cfg, name, true)
			}),
	}
}

// boolTuple reads a tuple of bools (BatchNormalization's broadcastable).
func boolTuple(class string, v starlark.Value) ([]bool, error) {
	items, ok := starlib.Elems(v)
	if !ok {
		return nil, fmt.Errorf("%s: broadcastable must be a tuple of bools, got %s", class, v.Type())
	}
	out := make([]bool, len(items))
	for i, x := range items {
		b, ok := x.(starlark.Bool)
		if !ok {
			return nil, fmt.Errorf("%s: broadcastable must be a tuple of bools, got an item %s", class, x.Type())
		}
		out[i] = bool(b)
	}
	return out, nil
}

func costBrickTables() []*classTable {
	const m = "blocks.bricks.cost"
	cost := func(class, doc string, p []classParam) *classTable {
		return brickTable(m, class, doc, p, nil, func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
			topK := 1
			if class == "MisclassificationRate" {
				topK = c.Int("top_k")
			}
			return bricks.NewCost(cfg, class, name, topK)
		})
	}
	return []*classTable{
		cost("CategoricalCrossEntropy", "mean -log p of the targets: apply(y, y_hat)", ps(namePositional)),
		cost("MisclassificationRate", "the fraction of examples whose target is not among the top_k", ps(classParam{Name: "top_k", Default: "1", Kind: argInt}, nameParam)),
		cost("SquaredError", "mean over examples of the summed squared errors", ps(namePositional)),
		cost("AbsoluteError", "mean over examples of the summed absolute errors", ps(namePositional)),
		cost("BinaryCrossEntropy", "mean binary cross-entropy", ps(namePositional)),
	}
}

// setConvBrickAttrOf is setConvBrickAttr with errors naming the class.
func setConvBrickAttrOf(class string) brickAttrSetter {
	return func(b bricks.Brick, k string, v starlark.Value) error {
		if err := setConvBrickAttr(b, k, v); err != nil {
			return fmt.Errorf("%s: %v", class, err)
		}
		return nil
	}
}

func convBrickTables() []*classTable {
	const m = "blocks.bricks.conv"
	convKw := ps(kw("batch_size", "None"), kw("image_size", "(None, None)"), kw("step", "(1, 1)"), kw("border_mode", "'valid'"), kw("tied_biases", "True"))
	pooling := func(class string, extra ...classParam) *classTable {
		p := params(ps(lazy("pooling_size"), opt("step", "None"), classParam{Name: "input_dim", Default: "None", Stored: "(None, None, None)"}, opt("ignore_border", "True"), opt("padding", "(0, 0)")), extra, brickKw)
		return brickTable(m, class, "pooling over the last two axes", p, setConvBrickAttrOf(class),
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewPooling(cfg, class, name)
			})
	}
	return []*classTable{
		brickTable(m, "Convolutional", "2-d convolution with num_filters filters of filter_size, plus biases",
			params(ps(lazy("filter_size"), lazy("num_filters"), lazy("num_channels")), unkw(convKw), initKw), setConvBrickAttrOf("Convolutional"),
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewConvolutional(cfg, name), nil
			}),
		brickTable(m, "ConvolutionalTranspose", "the transpose of a convolution",
			params(ps(lazy("filter_size"), lazy("num_filters"), lazy("num_channels"), opt("original_image_size", "None"), opt("unused_edge", "(0, 0)")), convKw, initKw),
			setConvBrickAttrOf("ConvolutionalTranspose"),
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewConvolutionalTranspose(cfg, name), nil
			}),
		pooling("MaxPooling"),
		pooling("AveragePooling", opt("include_padding", "False")),
		brickTable(m, "ConvolutionalSequence", "convolutions, poolings and activations in turn",
			params(ps(req("layers"), lazy("num_channels"), opt("batch_size", "None"), opt("image_size", "(None, None)"), opt("border_mode", "None"), opt("tied_biases", "None")), initKw),
			setConvBrickAttrOf("ConvolutionalSequence"),
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				layers, err := layerList(c.Take("layers"))
				if err != nil {
					return nil, err
				}
				return bricks.NewConvolutionalSequence(cfg, name, layers), nil
			}),
		brickTable(m, "Flattener", "(batch, ...) to (batch, features)", ps(namePositional), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewFlattener(cfg, name), nil
			}),
	}
}

// unkw makes keyword parameters positional (Convolutional's own).
func unkw(p []classParam) []classParam {
	out := append([]classParam(nil), p...)
	for i := range out {
		out[i].Keyword = false
	}
	return out
}
