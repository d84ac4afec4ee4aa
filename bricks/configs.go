package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
)

// Typed constructors for the bricks whose Blocks arguments are plain
// attributes (Linear, Bias, Maxout, LinearMaxout, Convolutional,
// ConvolutionalTranspose, MaxPooling, AveragePooling): a config struct
// with one field per argument, in Blocks' order, for Go programs. A zero
// field (0, nil) is an argument left out: the brick's default holds, or,
// for a lazy allocation argument, it stays unset until a parent pushes
// it. The Starlark face reaches the same attributes through the bricks'
// AttrSpecs (their names, kinds and laziness).

// Init holds Initializable's arguments (Blocks' **kwargs of most bricks).
type Init struct {
	WeightsInit initialization.Scheme // nil: unset (pushed by a parent, or none)
	BiasesInit  initialization.Scheme
	UseBias     *bool  // nil: unset (True unless a parent pushes False)
	Seed        *int64 // nil: drawn from the run's seed generator
}

// LinearConfig is Linear(input_dim, output_dim, **kwargs).
type LinearConfig struct {
	InputDim, OutputDim int
	Init
}

// NewLinearWith makes a Linear from its arguments.
func NewLinearWith(cfg *Config, name string, c LinearConfig) (*Linear, error) {
	l := NewLinear(cfg, name)
	l.InputDim, l.OutputDim = c.InputDim, c.OutputDim
	return l, configure(l, &c.Init)
}

// BiasConfig is Bias(dim, biases_init=None).
type BiasConfig struct {
	Dim        int
	BiasesInit initialization.Scheme
}

// NewBiasWith makes a Bias from its arguments.
func NewBiasWith(cfg *Config, name string, c BiasConfig) (*Bias, error) {
	b := NewBias(cfg, name)
	b.Dim, b.BiasesInit = c.Dim, c.BiasesInit
	return b, nil
}

// MaxoutConfig is Maxout(num_pieces).
type MaxoutConfig struct{ NumPieces int }

// NewMaxoutWith makes a Maxout from its arguments.
func NewMaxoutWith(cfg *Config, name string, c MaxoutConfig) (*Maxout, error) {
	m := NewMaxout(cfg, name)
	m.NumPieces = c.NumPieces
	return m, nil
}

// LinearMaxoutConfig is LinearMaxout(input_dim, output_dim, num_pieces, **kwargs).
type LinearMaxoutConfig struct {
	InputDim, OutputDim, NumPieces int
	Init
}

// NewLinearMaxoutWith makes a LinearMaxout from its arguments.
func NewLinearMaxoutWith(cfg *Config, name string, c LinearMaxoutConfig) (*LinearMaxout, error) {
	m := NewLinearMaxout(cfg, name)
	m.InputDim, m.OutputDim, m.NumPieces = c.InputDim, c.OutputDim, c.NumPieces
	return m, configure(m, &c.Init)
}

// ConvolutionalConfig is Convolutional(filter_size, num_filters,
// num_channels, batch_size=None, image_size=(None, None), step=(1, 1),
// border_mode='valid', tied_biases=True, **kwargs); OriginalImageSize and
// UnusedEdge are ConvolutionalTranspose's.
type ConvolutionalConfig struct {
	FilterSize              []int // (rows, cols)
	NumFilters, NumChannels int
	BatchSize               int
	ImageSize               Size  // 0 entries unknown
	Step                    []int // default (1, 1)
	BorderMode              *core.Border
	TiedBiases              *bool
	OriginalImageSize       Size  // ConvolutionalTranspose only
	UnusedEdge              []int // ConvolutionalTranspose only
	Init
}

// NewConvolutionalWith makes a Convolutional from its arguments.
func NewConvolutionalWith(cfg *Config, name string, c ConvolutionalConfig) (*Convolutional, error) {
	if c.OriginalImageSize != nil || c.UnusedEdge != nil {
		return nil, fmt.Errorf("Convolutional: original_image_size and unused_edge are ConvolutionalTranspose's")
	}
	b := NewConvolutional(cfg, name)
	return b, configure(b, &c.Init, c.pairs()...)
}

// NewConvolutionalTransposeWith makes a ConvolutionalTranspose from its
// arguments.
func NewConvolutionalTransposeWith(cfg *Config, name string, c ConvolutionalConfig) (*Convolutional, error) {
	b := NewConvolutionalTranspose(cfg, name)
	return b, configure(b, &c.Init, append(c.pairs(), "original_image_size", c.OriginalImageSize, "unused_edge", c.UnusedEdge)...)
}

func (c ConvolutionalConfig) pairs() []any {
	return []any{"filter_size", c.FilterSize, "num_filters", c.NumFilters, "num_channels", c.NumChannels,
		"batch_size", c.BatchSize, "image_size", c.ImageSize, "step", c.Step, "border_mode", c.BorderMode,
		"tied_biases", c.TiedBiases}
}

// PoolingConfig is MaxPooling(pooling_size, step=None, input_dim=None,
// ignore_border=True, padding=(0, 0)); IncludePadding is AveragePooling's.
type PoolingConfig struct {
	PoolingSize    []int
	Step           []int // default pooling_size
	InputDim       Size  // (channels, rows, cols), 0 entries unknown
	IgnoreBorder   *bool
	Padding        []int
	IncludePadding *bool // AveragePooling only
}

// NewPoolingWith makes a MaxPooling or AveragePooling (class) from its
// arguments.
func NewPoolingWith(cfg *Config, class, name string, c PoolingConfig) (*Pooling, error) {
	if c.IncludePadding != nil && class != "AveragePooling" {
		return nil, fmt.Errorf("%s: include_padding is AveragePooling's", class)
	}
	p, err := NewPooling(cfg, class, name)
	if err != nil {
		return nil, err
	}
	pairs := []any{"pooling_size", c.PoolingSize, "step", c.Step, "input_dim", c.InputDim,
		"ignore_border", c.IgnoreBorder, "padding", c.Padding}
	if class == "AveragePooling" {
		pairs = append(pairs, "include_padding", c.IncludePadding)
	}
	return p, configure(p, nil, pairs...)
}

// configure sets the attributes given as name, value pairs, skipping the
// zero values (arguments left out), then init's arguments.
func configure(b Brick, init *Init, pairs ...any) error {
	base := b.BaseBrick()
	for i := 0; i+1 < len(pairs); i += 2 {
		name, v := pairs[i].(string), pairs[i+1]
		switch x := v.(type) {
		case int:
			if x == 0 {
				continue
			}
		case []int:
			if x == nil {
				continue
			}
		case Size:
			if x == nil {
				continue
			}
		case *bool:
			if x == nil {
				continue
			}
			v = *x
		case *core.Border:
			if x == nil {
				continue
			}
			v = *x
		case initialization.Scheme:
			if x == nil {
				continue
			}
		case nil:
			continue
		}
		if err := base.SetAttr(name, v); err != nil {
			return fmt.Errorf("%s: %w", base.Class(), err)
		}
	}
	if init == nil {
		return nil
	}
	if init.Seed != nil {
		if err := base.SetSeed(*init.Seed); err != nil {
			return err
		}
	}
	ic, ok := b.(Initializable)
	if !ok {
		return fmt.Errorf("%s is not Initializable", base.AnnotationName())
	}
	c := ic.Initialization()
	c.WeightsInit, c.BiasesInit, c.UseBias = init.WeightsInit, init.BiasesInit, init.UseBias
	return nil
}
