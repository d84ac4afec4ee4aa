package bricks

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/core"
)

// Size is a tuple of sizes where 0 stands for Python's None (unknown):
// Blocks' image_size=(None, None).
type Size []int

// Known reports whether every entry is set.
func (s Size) Known() bool { return s != nil && !slices.Contains(s, 0) }

// DimBrick is a brick that knows the shapes of its inputs and outputs
// (Blocks' get_dim); a 0 entry is an unknown size.
type DimBrick interface {
	Brick
	GetDim(name string) (Size, error)
}

// channelBrick is a layer of a ConvolutionalSequence.
type channelBrick interface {
	DimBrick
	NumOutputChannels() (int, bool)
	setInputShape(numChannels int, imageSize Size)
}

// intsOr is v, or def when v is unset (nil).
func intsOr(v, def []int) []int {
	if v != nil {
		return v
	}
	return def
}

// sizeOr is s when it has n entries, else n unknown sizes.
func sizeOr(s Size, n int) Size {
	if len(s) == n {
		return s
	}
	return make(Size, n)
}

func pair(name string, v []int) ([2]int, error) {
	if len(v) != 2 {
		return [2]int{}, fmt.Errorf("%s must be a pair of ints, got %v", name, v)
	}
	return [2]int{v[0], v[1]}, nil
}

// Convolutional is Blocks' Convolutional brick: filters W of shape
// (num_filters, num_channels) + filter_size (role FILTER) and biases b,
// one per filter (tied_biases) or one per output pixel; apply computes
// Theano's conv2d (a true convolution) plus the biases.
type Convolutional struct {
	*Base
	InitConfig
	// FilterSize is (rows, cols) of the filters; NumFilters the number of
	// filters (output channels); NumChannels the number of input
	// channels. nil and 0 are unset (a ConvolutionalSequence pushes
	// NumChannels).
	FilterSize              []int
	NumFilters, NumChannels int
	// BatchSize is the batch size when known (a hint; 0 unknown);
	// ImageSize (rows, cols) of the input images, 0 entries (or nil)
	// unknown.
	BatchSize int
	ImageSize Size
	// Step is the (rows, cols) stride, (1, 1) when nil; BorderMode
	// 'valid' when nil; TiedBiases (one bias per filter, else one per
	// output pixel) true when nil.
	Step       []int
	BorderMode *core.Border
	TiedBiases *bool
	// OriginalImageSize and UnusedEdge are ConvolutionalTranspose's: the
	// (rows, cols) of its output (inferred when nil) and the rows and
	// cols the inference adds at the edge ((0, 0) when nil).
	OriginalImageSize Size
	UnusedEdge        []int
	W, B              *core.Variable
	transpose         bool
}

// NewConvolutional makes a Convolutional brick; unset allocation arguments
// are filled by a parent (ConvolutionalSequence) or set later.
func NewConvolutional(cfg *Config, name string) *Convolutional {
	c := &Convolutional{Base: &Base{}}
	c.initBase(c, cfg, name, "Convolutional")
	c.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: c.apply})
	return c
}

// NewConvolutionalTranspose makes Blocks' ConvolutionalTranspose: the
// transpose of a convolution (its gradient with respect to the images),
// mapping num_channels input channels to num_filters output channels of
// size original_image_size (inferred from image_size, step, border and
// unused_edge when None).
func NewConvolutionalTranspose(cfg *Config, name string) *Convolutional {
	c := &Convolutional{Base: &Base{}, transpose: true}
	c.initBase(c, cfg, name, "ConvolutionalTranspose")
	c.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: c.apply})
	return c
}

// IsTranspose reports whether c is a ConvolutionalTranspose.
func (c *Convolutional) IsTranspose() bool { return c.transpose }

func (c *Convolutional) missingAllocation() []string {
	var m []string
	if c.FilterSize == nil {
		m = append(m, "filter_size")
	}
	if c.NumFilters == 0 {
		m = append(m, "num_filters")
	}
	if c.NumChannels == 0 {
		m = append(m, "num_channels")
	}
	return m
}

func (c *Convolutional) border() core.Border {
	if c.BorderMode != nil {
		return *c.BorderMode
	}
	return core.Border{Mode: "valid"}
}

func (c *Convolutional) options() (core.Conv2dOptions, error) {
	step, err := pair(c.Name+".step", intsOr(c.Step, []int{1, 1}))
	if err != nil {
		return core.Conv2dOptions{}, err
	}
	return core.Conv2dOptions{Step: step, Border: c.border()}, nil
}

func (c *Convolutional) filterSize() ([2]int, error) {
	return pair(c.Name+".filter_size", c.FilterSize)
}

// AllocateHook creates W (num_filters, num_channels, rows, cols) and b.
func (c *Convolutional) AllocateHook() error {
	fs, err := c.filterSize()
	if err != nil {
		return err
	}
	nf, nc := c.NumFilters, c.NumChannels
	if c.transpose {
		// Blocks sets original_image_size when allocating.
		if o, err := c.originalImageSize(); err == nil {
			c.OriginalImageSize = o
		}
	}
	c.W = c.newParameter("W", core.Filter, nf, nc, fs[0], fs[1])
	c.B = nil
	if c.HasBias() {
		if c.TiedBiases == nil || *c.TiedBiases {
			c.B = c.newParameter("b", core.Bias, nf)
		} else {
			out, err := c.GetDim("output")
			if err != nil {
				return err
			}
			if !out.Known() {
				return fmt.Errorf("%s: Cannot infer bias size without image_size specified. If you use variable image_size, you should use tied_biases=True", c.AnnotationName())
			}
			c.B = c.newParameter("b", core.Bias, out...)
		}
	}
	return nil
}

// InitializeHook draws the biases, then the filters (Blocks' LinearLike).
func (c *Convolutional) InitializeHook() error {
	if c.B != nil {
		if err := c.initWith(c.B, c.BiasesInit, "biases_init"); err != nil {
			return err
		}
	}
	return c.initWith(c.W, c.WeightsInit, "weights_init")
}

// NamedParameter returns W or b.
func (c *Convolutional) NamedParameter(name string) *core.Variable {
	switch name {
	case "W":
		return c.W
	case "b":
		return c.B
	}
	return nil
}

// originalImageSize is ConvolutionalTranspose's output size.
func (c *Convolutional) originalImageSize() (Size, error) {
	if s := c.OriginalImageSize; s.Known() {
		return s, nil
	}
	im := sizeOr(c.ImageSize, 2)
	if !im.Known() {
		return nil, fmt.Errorf("%s: can't infer original_image_size, no image_size set", c.AnnotationName())
	}
	fs, err := c.filterSize()
	if err != nil {
		return nil, err
	}
	step := intsOr(c.Step, []int{1, 1})
	edge := intsOr(c.UnusedEdge, []int{0, 0})
	ph, pw := c.border().Pads(fs[0], fs[1])
	pad := []int{ph, pw}
	out := make(Size, 2)
	for a := 0; a < 2; a++ {
		out[a] = step[a]*(im[a]-1) + fs[a] - 2*pad[a] + edge[a]
	}
	return out, nil
}

// GetDim is Blocks' get_dim: input_ is (num_channels, rows, cols), output
// (num_filters, rows, cols); unknown sizes are 0.
func (c *Convolutional) GetDim(name string) (Size, error) {
	nc, nf := c.NumChannels, c.NumFilters
	im := sizeOr(c.ImageSize, 2)
	switch name {
	case "input_":
		return Size{nc, im[0], im[1]}, nil
	case "output":
		if c.transpose {
			o, err := c.originalImageSize()
			if err != nil {
				return nil, err
			}
			return Size{nf, o[0], o[1]}, nil
		}
		fs, err := c.filterSize()
		if err != nil {
			return nil, err
		}
		opts, err := c.options()
		if err != nil {
			return nil, err
		}
		ph, pw := opts.Border.Pads(fs[0], fs[1])
		out := Size{nf, 0, 0}
		if im[0] > 0 {
			out[1] = core.ConvOutputSize(im[0], fs[0], opts.Step[0], ph)
		}
		if im[1] > 0 {
			out[2] = core.ConvOutputSize(im[1], fs[1], opts.Step[1], pw)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: no dimension information for %s", c.AnnotationName(), name)
}

// NumOutputChannels is num_filters.
func (c *Convolutional) NumOutputChannels() (int, bool) { return c.NumFilters, c.NumFilters != 0 }

func (c *Convolutional) setInputShape(nc int, im Size) {
	if nc > 0 {
		c.NumChannels = nc
	}
	c.ImageSize = slices.Clone(im)
}

func (c *Convolutional) apply(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
	x := in[0]
	if x.NDim() != 4 {
		return nil, fmt.Errorf("input_ must be a 4-d variable (batch, channels, rows, cols), got %s (%s)", x, x.TypeString())
	}
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	var y *core.Variable
	if c.transpose {
		out, err := c.GetDim("output")
		if err != nil {
			return nil, err
		}
		wt, err := core.Dimshuffle(c.W, []int{1, 0, 2, 3})
		if err != nil {
			return nil, err
		}
		y, err = core.Conv2dGradInputs(x, wt, [2]int{out[1], out[2]}, opts)
		if err != nil {
			return nil, err
		}
	} else if c.B != nil && c.B.NDim() == 1 {
		// Tied biases: added inside the convolution's own pass.
		y, err := core.Conv2dBias(x, c.W, c.B, opts)
		return one(y), err
	} else if y, err = core.Conv2d(x, c.W, opts); err != nil {
		return nil, err
	}
	if c.B != nil {
		pattern := []int{-1, 0, -1, -1}
		if c.B.NDim() == 3 {
			pattern = []int{-1, 0, 1, 2}
		}
		b, err := core.Dimshuffle(c.B, pattern)
		if err != nil {
			return nil, err
		}
		y = core.Add(y, b)
	}
	return one(y), nil
}

// Pooling is Blocks' Pooling brick (MaxPooling, AveragePooling): Theano's
// pool_2d over the last two axes.
type Pooling struct {
	*Base
	// PoolingSize is (rows, cols) of the pooling window (nil: unset);
	// Step the stride (PoolingSize when nil); InputDim (channels, rows,
	// cols) of the input, 0 entries (or nil) unknown; IgnoreBorder drops
	// partial windows at the border (true when nil); Padding the (rows,
	// cols) zero padding ((0, 0) when nil); IncludePadding, an
	// AveragePooling's, counts the padding in the average (false when
	// nil).
	PoolingSize    []int
	Step           []int
	InputDim       Size
	IgnoreBorder   *bool
	Padding        []int
	IncludePadding *bool
	mode           string
	average        bool // AveragePooling
}

// NewPooling makes MaxPooling (class "MaxPooling") or AveragePooling
// (class "AveragePooling", which also takes include_padding).
func NewPooling(cfg *Config, class, name string) (*Pooling, error) {
	if class != "MaxPooling" && class != "AveragePooling" {
		return nil, fmt.Errorf("unknown pooling class %s", class)
	}
	p := &Pooling{Base: &Base{}, mode: core.PoolMax, average: class == "AveragePooling"}
	if class == "AveragePooling" {
		p.mode = core.PoolAverageExc
	}
	p.initBase(p, cfg, name, class)
	p.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: p.apply})
	return p, nil
}

// Mode is the pooling mode as Blocks' Pooling.mode has it: "max",
// "average_exc_pad" or "average_inc_pad" (AveragePooling's
// include_padding).
func (p *Pooling) Mode() string {
	if p.mode == core.PoolAverageExc && p.IncludePadding != nil && *p.IncludePadding {
		return core.PoolAverageInc
	}
	return p.mode
}

// SetMode sets the pooling mode (Blocks' Pooling.mode is a plain
// attribute): "max", "average_exc_pad" or "average_inc_pad".
func (p *Pooling) SetMode(mode string) error {
	switch mode {
	case core.PoolMax, core.PoolAverageExc, core.PoolAverageInc:
	default:
		return fmt.Errorf("%s.mode must be 'max', 'average_exc_pad' or 'average_inc_pad', got %q", p.Name, mode)
	}
	p.mode = mode
	if p.average && mode != core.PoolMax {
		p.mode = core.PoolAverageExc
		p.IncludePadding = new(mode == core.PoolAverageInc)
	}
	return nil
}

func (p *Pooling) missingAllocation() []string {
	if p.PoolingSize == nil {
		return []string{"pooling_size"}
	}
	return nil
}

func (p *Pooling) options() (core.PoolOptions, error) {
	o := core.PoolOptions{Mode: p.Mode(), IgnoreBorder: p.IgnoreBorder == nil || *p.IgnoreBorder}
	var err error
	if o.Size, err = pair(p.Name+".pooling_size", p.PoolingSize); err != nil {
		return o, err
	}
	if o.Step, err = pair(p.Name+".step", intsOr(p.Step, o.Size[:])); err != nil {
		return o, err
	}
	if o.Pad, err = pair(p.Name+".padding", intsOr(p.Padding, []int{0, 0})); err != nil {
		return o, err
	}
	return o, nil
}

func (p *Pooling) apply(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	y, err := core.Pool2d(in[0], o)
	return one(y), err
}

// GetDim: input_ is input_dim, output the pooled (channels, rows, cols).
func (p *Pooling) GetDim(name string) (Size, error) {
	in := sizeOr(p.InputDim, 3)
	switch name {
	case "input_":
		return in, nil
	case "output":
		o, err := p.options()
		if err != nil {
			return nil, err
		}
		out := slices.Clone(in)
		for a := 0; a < 2; a++ {
			if in[1+a] > 0 {
				out[1+a] = core.PoolOutputSize(in[1+a], o.Size[a], o.Step[a], o.Pad[a], o.IgnoreBorder)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: no dimension information for %s", p.AnnotationName(), name)
}

// NumOutputChannels is input_dim[0].
func (p *Pooling) NumOutputChannels() (int, bool) {
	in := sizeOr(p.InputDim, 3)
	return in[0], in[0] > 0
}

func (p *Pooling) setInputShape(nc int, im Size) {
	in := slices.Clone(sizeOr(p.InputDim, 3))
	if nc > 0 {
		in[0] = nc
	}
	in[1], in[2] = im[0], im[1]
	p.InputDim = in
}

// ConvolutionalSequence is Blocks' ConvolutionalSequence: a Sequence of
// convolution, pooling and activation layers whose num_channels and
// image_size (and border_mode, tied_biases, batch_size, use_bias when set)
// are pushed down the sequence, each layer's output shape becoming the
// next one's input.
type ConvolutionalSequence struct {
	Sequence
	InitConfig
	// NumChannels is the number of input channels (0: unset),
	// BatchSize the batch size when known, ImageSize (rows, cols) of the
	// input images (0 entries or nil unknown). BatchSize, BorderMode and
	// TiedBiases, when set, are pushed to every convolution.
	NumChannels int
	BatchSize   int
	ImageSize   Size
	BorderMode  *core.Border
	TiedBiases  *bool
	Layers      []Brick
}

// NewConvolutionalSequence makes a ConvolutionalSequence of layers
// (bricks or their applications).
func NewConvolutionalSequence(cfg *Config, name string, layers []AppRef) *ConvolutionalSequence {
	s := &ConvolutionalSequence{Sequence: Sequence{Base: &Base{}}}
	for _, l := range layers {
		s.Layers = append(s.Layers, l.Brick)
	}
	s.initBase(s, cfg, name, "ConvolutionalSequence")
	s.setApps(layers)
	s.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: s.apply})
	return s
}

// PushAllocationConfigHook walks the layers, giving each its input shape
// and reading its output shape for the next.
func (s *ConvolutionalSequence) PushAllocationConfigHook() error {
	// Without num_channels (Blocks allows it) the layers get the
	// sequence's settings but no input shape: allocation needs it later.
	nc, haveNC := s.NumChannels, s.NumChannels != 0
	im := slices.Clone(sizeOr(s.ImageSize, 2))
	for _, l := range s.Layers {
		lb := l.BaseBrick()
		layer, ok := l.(channelBrick)
		if !ok {
			if isActivation(l) {
				continue
			}
			return fmt.Errorf("%s: layer %s is neither a convolution, a pooling nor an activation", s.AnnotationName(), lb.AnnotationName())
		}
		if conv, ok := l.(*Convolutional); ok {
			if s.BorderMode != nil {
				conv.BorderMode = new(*s.BorderMode)
			}
			if s.TiedBiases != nil {
				conv.TiedBiases = new(*s.TiedBiases)
			}
			if s.BatchSize != 0 {
				conv.BatchSize = s.BatchSize
			}
		}
		if s.UseBias != nil {
			if ic, ok := l.(Initializable); ok && IsInitializable(l) {
				ub := *s.UseBias
				ic.Initialization().UseBias = &ub
			}
		}
		if !haveNC {
			if err := PushAllocationConfig(l); err != nil {
				return err
			}
			if c, ok := layer.NumOutputChannels(); ok {
				nc, haveNC = c, true
			}
			continue
		}
		layer.setInputShape(nc, im)
		if err := PushAllocationConfig(l); err != nil {
			return err
		}
		if im.Known() {
			out, err := layer.GetDim("output")
			if err != nil {
				return err
			}
			im = Size{out[1], out[2]}
		}
		if c, ok := layer.NumOutputChannels(); ok {
			nc = c
		}
	}
	return nil
}

func (s *ConvolutionalSequence) missingAllocation() []string {
	if s.NumChannels == 0 {
		return []string{"num_channels"}
	}
	return nil
}

// GetDim: input_ is (num_channels, rows, cols); output is the last layer's
// output that can say it (the input when none can).
func (s *ConvolutionalSequence) GetDim(name string) (Size, error) {
	switch name {
	case "input_":
		im := sizeOr(s.ImageSize, 2)
		return Size{s.NumChannels, im[0], im[1]}, nil
	case "output":
		for i := len(s.Layers) - 1; i >= 0; i-- {
			if d, ok := s.Layers[i].(DimBrick); ok {
				if out, err := d.GetDim("output"); err == nil {
					return out, nil
				}
			}
		}
		return s.GetDim("input_")
	}
	return nil, fmt.Errorf("%s: no dimension information for %s", s.AnnotationName(), name)
}

// Flattener is Blocks' Flattener: (batch, ...) to (batch, features).
type Flattener struct {
	*Base
}

// NewFlattener makes Blocks' Flattener: (batch, ...) to (batch, features).
func NewFlattener(cfg *Config, name string) *Flattener {
	f := &Flattener{Base: &Base{}}
	f.initBase(f, cfg, name, "Flattener")
	f.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
		y, err := core.Flatten(in[0], 2)
		return one(y), err
	}})
	return f
}

// Maxout is Blocks' Maxout(num_pieces): the maximum over groups of
// num_pieces consecutive features of the last axis.
type Maxout struct {
	*Base
	NumPieces int // pieces per output feature (0: unset)
}

// NewMaxout makes a Maxout brick.
func NewMaxout(cfg *Config, name string) *Maxout {
	m := &Maxout{Base: &Base{}}
	m.initBase(m, cfg, name, "Maxout")
	m.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
		if m.NumPieces == 0 {
			return nil, fmt.Errorf("num_pieces is not set")
		}
		y, err := core.Maxout(in[0], m.NumPieces)
		return one(y), err
	}})
	return m
}

// LinearMaxout is Blocks' LinearMaxout(input_dim, output_dim, num_pieces):
// a Linear child to output_dim·num_pieces features, then a Maxout child.
type LinearMaxout struct {
	*Base
	InitConfig
	// InputDim, OutputDim and NumPieces are the dimensions of the input
	// and the output and the pieces per output feature (0: unset).
	InputDim, OutputDim, NumPieces int
	Linear                         *Linear
	Maxout                         *Maxout
}

// NewLinearMaxout makes a LinearMaxout brick.
func NewLinearMaxout(cfg *Config, name string) *LinearMaxout {
	lm := &LinearMaxout{Base: &Base{}, Linear: NewLinear(cfg, ""), Maxout: NewMaxout(cfg, "")}
	lm.initBase(lm, cfg, name, "LinearMaxout")
	lm.SetChildren([]Brick{lm.Linear, lm.Maxout})
	lm.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
		pre, err := Apply(lm.Linear, "apply", in[0])
		if err != nil {
			return nil, err
		}
		return Apply(lm.Maxout, "apply", pre[0])
	}})
	return lm
}

// PushAllocationConfigHook sizes the Linear child and the Maxout.
func (lm *LinearMaxout) PushAllocationConfigHook() error {
	in, out, k := lm.InputDim, lm.OutputDim, lm.NumPieces
	if in == 0 || out == 0 || k == 0 {
		return fmt.Errorf("%s: input_dim, output_dim and num_pieces must be set", lm.AnnotationName())
	}
	lm.Linear.InputDim = in
	lm.Linear.OutputDim = out * k
	if lm.UseBias != nil {
		lm.Linear.UseBias = new(*lm.UseBias)
	}
	lm.Maxout.NumPieces = k
	return nil
}

func (m *Maxout) missingAllocation() []string {
	if m.NumPieces == 0 {
		return []string{"num_pieces"}
	}
	return nil
}

func (lm *LinearMaxout) missingAllocation() []string {
	var m []string
	for _, d := range []struct {
		v    int
		name string
	}{{lm.InputDim, "input_dim"}, {lm.OutputDim, "output_dim"}, {lm.NumPieces, "num_pieces"}} {
		if d.v == 0 {
			m = append(m, d.name)
		}
	}
	return m
}
