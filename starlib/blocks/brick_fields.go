package blocks

import (
	"fmt"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
)

// The Starlark face of the bricks' attributes: Python's names for the
// typed fields of the Go bricks (Linear.InputDim is input_dim,
// InitConfig.WeightsInit weights_init, ...), a table per class
// (typedBrickFields) with each attribute's kind, laziness and the
// conversions to and from the field. The class tables (brick_defaults.go)
// hold the defaults a never-set attribute reads; a script class's own
// attributes live with its instance (script_bricks.go).

// attrKind is the type of a brick attribute.
type attrKind int

// Attribute kinds.
const (
	attrInt   attrKind = iota
	attrInts           // []int
	attrFloat          // float64
	attrBool
	attrInit // initialization.Scheme
	attrString
	// attrSize is a tuple of sizes some of which may be None (a
	// bricks.Size, 0 for None): image_size, input_dim of pooling.
	attrSize
	// attrBorder is a convolution's border mode (a core.Border).
	attrBorder
	// attrDim is a shape kept as given: an int or a bricks.Size (a tuple
	// whose entries may be None), as BatchNormalization's input_dim.
	attrDim
)

// lazyStage says when an attribute must be set: for allocation (Blocks'
// @lazy allocation arguments), for initialization, or never.
type lazyStage int

// Lazy stages.
const (
	notLazy lazyStage = iota
	forAllocation
	forInitialization
)

// attrSpec declares an attribute under its Blocks name.
type attrSpec struct {
	Name string
	Kind attrKind
	Lazy lazyStage
	Doc  string
	// NonNegative lets an attrInt be 0 (which otherwise must be positive).
	NonNegative bool
}

// brickField is one attribute of a typed brick.
type brickField struct {
	spec attrSpec
	get  func() any        // the value; nil is None
	set  func(v any) error // v of the spec's kind, or nil for None
	// isSet reports whether the attribute holds a value of its own
	// (else the class default reads, brick_defaults.go).
	isSet func() bool
	// plain says the field always has a value (None sets its default):
	// set to None, it reads None until set again.
	plain bool
}

// typedBrickFields lists br's typed attributes (none for a brick still on
// bricks.Base's attributes).
func typedBrickFields(br bricks.Brick) []brickField {
	switch b := br.(type) {
	case *bricks.Linear:
		return append([]brickField{
			intField(b, &b.InputDim, "input_dim", "dimension of the input"),
			intField(b, &b.OutputDim, "output_dim", "dimension of the output"),
		}, initFields(b, &b.InitConfig, true)...)
	case *bricks.Bias:
		return []brickField{
			intField(b, &b.Dim, "dim", "dimension of the bias"),
			schemeField(b, &b.BiasesInit, "biases_init", "initialization scheme of the biases"),
		}
	case *bricks.Activation:
		if isInstance(b, "LeakyRectifier") {
			return []brickField{leakField(b)}
		}
	case *bricks.MLP:
		return mlpFields(b)
	case *bricks.BatchNormalizedMLP:
		doc := "pushed to the BatchNormalization bricks"
		conserve := plainBoolField(b, &b.ConserveMemory, true, "conserve_memory", doc)
		conserve.set = func(v any) error { // passed on at once
			x, ok := v.(bool)
			if v == nil {
				x, ok = true, true
			}
			if !ok {
				return fieldTypeError(b, "conserve_memory", v)
			}
			b.SetConserveMemory(x)
			return nil
		}
		return append(mlpFields(&b.MLP), conserve,
			plainBoolField(b, &b.MeanOnly, false, "mean_only", doc),
			plainBoolField(b, &b.LearnScale, true, "learn_scale", doc),
			plainBoolField(b, &b.LearnShift, true, "learn_shift", doc))
	case *bricks.BatchNormalization:
		return []brickField{
			dimField(b),
			plainBoolField(b, &b.ConserveMemory, true, "conserve_memory", "low-memory implementation (default True; same results here)"),
			floatField(b, &b.Epsilon, 1e-4, "epsilon", "added to the minibatch variance (default 1e-4)"),
			schemeField(b, &b.ScaleInit, "scale_init", "initialization of the scale (default Constant(1))"),
			schemeField(b, &b.ShiftInit, "shift_init", "initialization of the shift (default Constant(0))"),
			plainBoolField(b, &b.MeanOnly, false, "mean_only", "subtract the mean only (default False)"),
			plainBoolField(b, &b.LearnScale, true, "learn_scale", "learn a scale (default True)"),
			plainBoolField(b, &b.LearnShift, true, "learn_shift", "learn a shift (default True)"),
		}
	case *bricks.Parallel:
		return append([]brickField{
			optional(intsField(b, &b.InputDims, "input_dims", "input dimensions, one per input name")),
			optional(intsField(b, &b.OutputDims, "output_dims", "output dimensions, one per input name")),
			optional(intField(b, &b.InputDim, "input_dim", "the input dimension (Fork)")),
			optional(intField(b, &b.OutputDim, "output_dim", "the output dimension (Merge)")),
			optional(intField(b, &b.SourceDim, "source_dim", "the source's dimension (Distribute)")),
			optional(intsField(b, &b.TargetDims, "target_dims", "the targets' dimensions (Distribute)")),
		}, initFields(b, &b.InitConfig, true)...)
	case *bricks.LookupTable:
		c := b.Initialization()
		return []brickField{
			intField(b, &b.Length, "length", "number of rows (the vocabulary size)"),
			intField(b, &b.Dim, "dim", "dimension of the embeddings"),
			schemeField(b, &c.WeightsInit, "weights_init", "initialization scheme of W"),
			schemeField(b, &c.BiasesInit, "biases_init", "unused"),
		}
	case *bricks.Maxout:
		return []brickField{intField(b, &b.NumPieces, "num_pieces", "pieces per output feature")}
	case *bricks.LinearMaxout:
		return append([]brickField{
			intField(b, &b.InputDim, "input_dim", "dimension of the input"),
			intField(b, &b.OutputDim, "output_dim", "dimension of the output"),
			intField(b, &b.NumPieces, "num_pieces", "pieces per output feature"),
		}, initFields(b, &b.InitConfig, true)...)
	case *bricks.Cost:
		if isInstance(b, "MisclassificationRate") {
			return []brickField{valueIntField(b, &b.TopK, "top_k", "a target among the k best is not an error (default 1)")}
		}
	case *bricks.Convolutional:
		out := []brickField{
			intsField(b, &b.FilterSize, "filter_size", "(rows, cols) of the filters"),
			intField(b, &b.NumFilters, "num_filters", "number of filters (output channels)"),
			intField(b, &b.NumChannels, "num_channels", "number of input channels"),
			optional(intField(b, &b.BatchSize, "batch_size", "batch size, when known (a hint)")),
			sizeField(b, &b.ImageSize, "image_size", "(rows, cols) of the input images, entries may be None"),
			optional(intsField(b, &b.Step, "step", "(rows, cols) stride, default (1, 1)")),
			borderField(b, &b.BorderMode, "border_mode", "'valid' (default), 'full', 'half' or a (rows, cols) padding"),
			boolField(b, &b.TiedBiases, "tied_biases", "one bias per filter (default True) or one per output pixel"),
		}
		if b.IsTranspose() {
			out = append(out,
				sizeField(b, &b.OriginalImageSize, "original_image_size", "(rows, cols) of the output; inferred when None"),
				optional(intsField(b, &b.UnusedEdge, "unused_edge", "rows and cols the inference adds at the edge, default (0, 0)")))
		}
		return append(out, initFields(b, &b.InitConfig, true)...)
	case *bricks.Pooling:
		out := []brickField{
			intsField(b, &b.PoolingSize, "pooling_size", "(rows, cols) of the pooling window"),
			optional(intsField(b, &b.Step, "step", "(rows, cols) stride, default pooling_size")),
			sizeField(b, &b.InputDim, "input_dim", "(channels, rows, cols) of the input, entries may be None"),
			boolField(b, &b.IgnoreBorder, "ignore_border", "drop partial windows at the border (default True)"),
			optional(intsField(b, &b.Padding, "padding", "(rows, cols) zero padding, default (0, 0)")),
		}
		if isInstance(b, "AveragePooling") {
			out = append(out, boolField(b, &b.IncludePadding, "include_padding", "count the padding in the average (default False)"))
		}
		return out
	case *bricks.ConvolutionalSequence:
		return append([]brickField{
			intField(b, &b.NumChannels, "num_channels", "number of input channels"),
			optional(intField(b, &b.BatchSize, "batch_size", "batch size, when known")),
			sizeField(b, &b.ImageSize, "image_size", "(rows, cols) of the input images, entries may be None"),
			borderField(b, &b.BorderMode, "border_mode", "border mode pushed to every convolution when set"),
			boolField(b, &b.TiedBiases, "tied_biases", "tied_biases pushed to every convolution when set"),
		}, initFields(b, &b.InitConfig, true)...)
	case *bricks.SimpleRecurrent:
		return recurrentFields(b, &b.Dim)
	case *bricks.LSTM:
		return recurrentFields(b, &b.Dim)
	case *bricks.GatedRecurrent:
		return recurrentFields(b, &b.Dim)
	case *bricks.SoftmaxEmitter:
		return append([]brickField{
			nonNegative(valueIntField(b, &b.InitialOutput, "initial_output", "the output before the first step (default 0)")),
			nonNegative(optional(intField(b, &b.ReadoutDim, "readout_dim", "number of symbols (pushed by the Readout)"))),
		}, initFields(b, &b.InitConfig, true)...)
	case *bricks.TrivialEmitter:
		return []brickField{intField(b, &b.ReadoutDim, "readout_dim", "dimension of the readouts and outputs")}
	case *bricks.LookupFeedback:
		return append([]brickField{
			intField(b, &b.NumOutputs, "num_outputs", "number of symbols"),
			intField(b, &b.FeedbackDim, "feedback_dim", "dimension of the embedding"),
		}, initFields(b, &b.InitConfig, true)...)
	case *bricks.TrivialFeedback:
		return []brickField{intField(b, &b.OutputDim, "output_dim", "dimension of the outputs")}
	case *bricks.Readout:
		return append([]brickField{
			intField(b, &b.ReadoutDim, "readout_dim", "dimension of the readouts"),
			intsField(b, &b.SourceDims, "source_dims", "dimensions of the sources (pushed by the generator)"),
		}, initFields(b, &b.InitConfig, true)...)
	case *bricks.SequenceContentAttention:
		return append([]brickField{
			intsField(b, &b.StateDims, "state_dims", "dimensions of the states"),
			intField(b, &b.AttendedDim, "attended_dim", "dimension of the attended sequence"),
			intField(b, &b.MatchDim, "match_dim", "dimension of the match vectors"),
		}, initFields(b, &b.InitConfig, true)...)
	case bricks.Initializable:
		// The other Initializable bricks: weights_init, biases_init and
		// use_bias (a script class's brick and a container when their
		// class is Initializable).
		if isInstance(br, "Initializable") {
			return initFields(b, b.Initialization(), true)
		}
	}
	return nil
}

// recurrentFields are a recurrent transition's dim and Initializable's
// attributes.
func recurrentFields(b bricks.Initializable, dim *int) []brickField {
	return append([]brickField{intField(b, dim, "dim", "dimension of the hidden state")}, initFields(b, b.Initialization(), true)...)
}

func mlpFields(m *bricks.MLP) []brickField {
	return append([]brickField{intsField(m, &m.Dims, "dims", "dimensions of the input, hidden layers and output")},
		initFields(m, &m.InitConfig, true)...)
}

// initFields are Initializable's weights_init (withWeights), biases_init
// and use_bias.
func initFields(b bricks.Brick, c *bricks.InitConfig, withWeights bool) []brickField {
	var out []brickField
	if withWeights {
		out = append(out, schemeField(b, &c.WeightsInit, "weights_init", "initialization scheme of the weights"))
	}
	return append(out,
		schemeField(b, &c.BiasesInit, "biases_init", "initialization scheme of the biases"),
		brickField{
			spec: attrSpec{Name: "use_bias", Kind: attrBool, Doc: "whether the brick has biases (default True)"},
			get: func() any {
				if c.UseBias == nil {
					return nil
				}
				return *c.UseBias
			},
			set: func(v any) error {
				if v == nil {
					c.UseBias = nil
					return nil
				}
				x, ok := v.(bool)
				if !ok {
					return fieldTypeError(b, "use_bias", v)
				}
				c.UseBias = &x
				return nil
			},
			isSet: func() bool { return c.UseBias != nil },
		})
}

// intField is a lazy allocation dimension (0: unset).
func intField(b bricks.Brick, p *int, name, doc string) brickField {
	return unsetWhen(b, p, attrSpec{Name: name, Kind: attrInt, Lazy: forAllocation, Doc: doc}, func(x int) bool { return x == 0 })
}

// intsField is a lazy allocation list of dimensions (nil: unset).
func intsField(b bricks.Brick, p *[]int, name, doc string) brickField {
	return unsetWhen(b, p, attrSpec{Name: name, Kind: attrInts, Lazy: forAllocation, Doc: doc}, func(x []int) bool { return x == nil })
}

// valueIntField is an int that always has a value (None sets 0).
func valueIntField(b bricks.Brick, p *int, name, doc string) brickField {
	f := optional(intField(b, p, name, doc))
	f.get = func() any { return *p }
	f.isSet = func() bool { return true }
	f.plain = true
	return f
}

// nonNegative lets f be set to 0.
func nonNegative(f brickField) brickField {
	f.spec.NonNegative = true
	return f
}

// sizeField is a tuple of sizes, entries may be None (nil: unset).
func sizeField(b bricks.Brick, p *bricks.Size, name, doc string) brickField {
	return unsetWhen(b, p, attrSpec{Name: name, Kind: attrSize, Doc: doc}, func(x bricks.Size) bool { return x == nil })
}

// borderField is a convolution's border mode (nil: unset).
func borderField(b bricks.Brick, p **core.Border, name, doc string) brickField {
	return pointerField(b, p, attrSpec{Name: name, Kind: attrBorder, Doc: doc})
}

// boolField is a setting with a class default (nil: unset).
func boolField(b bricks.Brick, p **bool, name, doc string) brickField {
	return pointerField(b, p, attrSpec{Name: name, Kind: attrBool, Doc: doc})
}

// plainBoolField is a bool that always has a value (None sets def).
func plainBoolField(b bricks.Brick, p *bool, def bool, name, doc string) brickField {
	return plainField(b, p, def, attrSpec{Name: name, Kind: attrBool, Doc: doc})
}

// floatField is a number that always has a value (None sets def).
func floatField(b bricks.Brick, p *float64, def float64, name, doc string) brickField {
	return plainField(b, p, def, attrSpec{Name: name, Kind: attrFloat, Doc: doc})
}

// dimField is BatchNormalization's input_dim: an int or a tuple whose
// entries may be None.
func dimField(b *bricks.BatchNormalization) brickField {
	return brickField{
		spec: attrSpec{Name: "input_dim", Kind: attrDim, Lazy: forAllocation, Doc: "shape of one example, an int or a tuple (the batch axis is prepended)"},
		get: func() any {
			switch {
			case b.InputDim == nil:
				return nil
			case !b.InputDimTuple:
				return b.InputDim[0]
			}
			return b.InputDim
		},
		set: func(v any) error {
			switch x := v.(type) {
			case nil:
				b.InputDim, b.InputDimTuple = nil, false
			case int:
				b.InputDim, b.InputDimTuple = bricks.Size{x}, false
			case bricks.Size:
				b.InputDim, b.InputDimTuple = x, true
			default:
				return fieldTypeError(b, "input_dim", v)
			}
			return nil
		},
		isSet: func() bool { return b.InputDim != nil },
	}
}

// optional makes f an attribute that Allocate does not require.
func optional(f brickField) brickField {
	f.spec.Lazy = notLazy
	return f
}

// schemeField is an initialization scheme (nil: unset).
func schemeField(b bricks.Brick, p *initialization.Scheme, name, doc string) brickField {
	return unsetWhen(b, p, attrSpec{Name: name, Kind: attrInit, Lazy: forInitialization, Doc: doc},
		func(x initialization.Scheme) bool { return x == nil })
}

// leakField is LeakyRectifier's leak (None sets Blocks' default).
func leakField(a *bricks.Activation) brickField {
	return brickField{
		spec: attrSpec{Name: "leak", Kind: attrFloat, Doc: "the slope for negative inputs (default 0.01)"},
		get:  func() any { return a.Leak },
		set: func(v any) error {
			if v == nil {
				a.Leak = bricks.LeakyRectifierLeak
				return nil
			}
			x, ok := v.(float64)
			if !ok {
				return fieldTypeError(a, "leak", v)
			}
			a.Leak = x
			return nil
		},
		isSet: func() bool { return true },
		plain: true,
	}
}

// unsetWhen is an attribute kept in a field of its own type whose value
// unset reports as left out (None sets the zero value).
func unsetWhen[T any](b bricks.Brick, p *T, spec attrSpec, unset func(T) bool) brickField {
	return brickField{
		spec: spec,
		get: func() any {
			if unset(*p) {
				return nil
			}
			return *p
		},
		set: func(v any) error {
			if v == nil {
				var zero T
				*p = zero
				return nil
			}
			x, ok := v.(T)
			if !ok {
				return fieldTypeError(b, spec.Name, v)
			}
			*p = x
			return nil
		},
		isSet: func() bool { return !unset(*p) },
	}
}

// pointerField is an attribute kept behind a pointer (nil: unset).
func pointerField[T any](b bricks.Brick, p **T, spec attrSpec) brickField {
	return brickField{
		spec: spec,
		get: func() any {
			if *p == nil {
				return nil
			}
			return **p
		},
		set: func(v any) error {
			if v == nil {
				*p = nil
				return nil
			}
			x, ok := v.(T)
			if !ok {
				return fieldTypeError(b, spec.Name, v)
			}
			*p = &x
			return nil
		},
		isSet: func() bool { return *p != nil },
	}
}

// plainField is an attribute that always has a value (None sets def).
func plainField[T any](b bricks.Brick, p *T, def T, spec attrSpec) brickField {
	return brickField{
		spec: spec,
		get:  func() any { return *p },
		set: func(v any) error {
			if v == nil {
				*p = def
				return nil
			}
			x, ok := v.(T)
			if !ok {
				return fieldTypeError(b, spec.Name, v)
			}
			*p = x
			return nil
		},
		isSet: func() bool { return true },
		plain: true,
	}
}

func fieldTypeError(b bricks.Brick, name string, v any) error {
	return fmt.Errorf("%s.%s: got %T", b.BaseBrick().AnnotationName(), name, v)
}

func typedBrickField(br bricks.Brick, name string) (brickField, bool) {
	for _, f := range typedBrickFields(br) {
		if f.spec.Name == name {
			return f, true
		}
	}
	return brickField{}, false
}

// brickSpecs lists br's declared attributes.
func brickSpecs(br bricks.Brick) []attrSpec {
	var out []attrSpec
	for _, f := range typedBrickFields(br) {
		out = append(out, f.spec)
	}
	return out
}

// brickSpec is the declaration of br's attribute name.
func brickSpec(br bricks.Brick, name string) (attrSpec, bool) {
	f, ok := typedBrickField(br, name)
	return f.spec, ok
}

// brickAttrOf is the value of br's attribute name (nil: None). A typed
// attribute set to None reads None while its field stays unset (a parent
// may push a value since).
func brickAttrOf(br bricks.Brick, name string) any {
	if f, ok := typedBrickField(br, name); ok {
		if br.BaseBrick().IsNone(name) && (f.plain || !f.isSet()) {
			return nil
		}
		return f.get()
	}
	return nil
}

// brickAttrIsSet reports whether br's attribute name holds a value of its
// own (else the class default reads).
func brickAttrIsSet(br bricks.Brick, name string) bool {
	if f, ok := typedBrickField(br, name); ok {
		return f.isSet() || br.BaseBrick().IsNone(name)
	}
	return false
}

// setBrickAttrOf sets br's declared attribute name to v (of the
// attribute's kind, or nil for None).
func setBrickAttrOf(br bricks.Brick, name string, v any) error {
	if f, ok := typedBrickField(br, name); ok {
		if err := f.set(v); err != nil {
			return err
		}
		br.BaseBrick().SetNone(name, v == nil)
		return nil
	}
	return fmt.Errorf("%s has no attribute %s", br.BaseBrick().AnnotationName(), name)
}
