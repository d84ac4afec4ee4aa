package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
)

// Constructors from a config struct for the bricks whose Blocks
// arguments are plain attributes (Linear, Bias, Maxout, LinearMaxout,
// Convolutional, ConvolutionalTranspose, MaxPooling, AveragePooling): one
// field per argument, in Blocks' order, copied into the brick's own typed
// fields. A zero field (0, nil) is an argument left out: the brick's
// default holds, or, for a lazy allocation argument, it stays unset until
// a parent pushes it. The same fields can be set on the brick directly
// (l := NewLinear(cfg, name); l.InputDim = 784).

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
	c.set(b)
	return b, configure(b, &c.Init)
}

// NewConvolutionalTransposeWith makes a ConvolutionalTranspose from its
// arguments.
func NewConvolutionalTransposeWith(cfg *Config, name string, c ConvolutionalConfig) (*Convolutional, error) {
	b := NewConvolutionalTranspose(cfg, name)
	c.set(b)
	b.OriginalImageSize, b.UnusedEdge = c.OriginalImageSize, c.UnusedEdge
	return b, configure(b, &c.Init)
}

func (c ConvolutionalConfig) set(b *Convolutional) {
	b.FilterSize, b.NumFilters, b.NumChannels = c.FilterSize, c.NumFilters, c.NumChannels
	b.BatchSize, b.ImageSize, b.Step = c.BatchSize, c.ImageSize, c.Step
	b.BorderMode, b.TiedBiases = c.BorderMode, c.TiedBiases
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
	p.PoolingSize, p.Step, p.InputDim = c.PoolingSize, c.Step, c.InputDim
	p.IgnoreBorder, p.Padding, p.IncludePadding = c.IgnoreBorder, c.Padding, c.IncludePadding
	return p, nil
}

// configure sets init's arguments on an Initializable brick.
func configure(b Brick, init *Init) error {
	if init.Seed != nil {
		if err := b.BaseBrick().SetSeed(*init.Seed); err != nil {
			return err
		}
	}
	ic, ok := b.(Initializable)
	if !ok {
		return fmt.Errorf("%s is not Initializable", b.BaseBrick().AnnotationName())
	}
	c := ic.Initialization()
	c.WeightsInit, c.BiasesInit, c.UseBias = init.WeightsInit, init.BiasesInit, init.UseBias
	return nil
}
