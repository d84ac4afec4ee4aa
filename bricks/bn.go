package bricks

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// BatchNormalization is Blocks' BatchNormalization brick: it normalizes its
// input by a mean and a standard deviation, then scales by a learned scale
// (gamma, "batch_norm_scale") and shifts by a learned shift (beta,
// "batch_norm_shift").
//
// By default the brick runs in inference mode, normalizing by the
// population statistics population_mean (zeros) and population_stdev
// (ones), shared variables with roles BATCH_NORM_POPULATION_MEAN and
// BATCH_NORM_POPULATION_STDEV that are not trained by the cost. In training
// mode (Enter, or graph.ApplyBatchNormalization on an inference graph) it
// normalizes by the minibatch mean and sqrt(var + epsilon), with roles
// BATCH_NORM_MINIBATCH_ESTIMATE. Either way the offset and divisor carry the
// roles BATCH_NORM_OFFSET and BATCH_NORM_DIVISOR and the application call
// records them as metadata "offset" and "divisor" (without the batch axis),
// from which graph.BatchNormalizationUpdates pairs them with the population
// variables.
type BatchNormalization struct {
	*Base
	spatial bool // SpatialBatchNormalization
	// Broadcastable says, per axis of one example, which axes are averaged
	// over besides the batch axis (nil: none).
	Broadcastable []bool
	// Scale and Shift are the learned parameters (nil when not learned);
	// PopulationMean and PopulationStdev the population statistics
	// (PopulationStdev nil with mean_only).
	Scale, Shift                    *core.Variable
	PopulationMean, PopulationStdev *core.Variable

	// InputDim is the shape of one example (the batch axis is
	// prepended), 0 entries unknown, nil unset; InputDimTuple says it was
	// given as a tuple (else it is the int InputDim[0]).
	InputDim      Size
	InputDimTuple bool
	// ConserveMemory is Blocks' low-memory implementation (true by
	// default; the results are the same here); Epsilon is added to the
	// minibatch variance (1e-4 by default).
	ConserveMemory bool
	Epsilon        float64
	// ScaleInit and ShiftInit initialize the scale and the shift
	// (Constant(1) and Constant(0) when nil).
	ScaleInit, ShiftInit initialization.Scheme
	// MeanOnly subtracts the mean only (false by default); LearnScale and
	// LearnShift learn a scale and a shift (true by default).
	MeanOnly, LearnScale, LearnShift bool

	training int
}

// NewBatchNormalization makes a BatchNormalization brick; input_dim may be
// set later (or pushed by a parent).
func NewBatchNormalization(cfg *Config, name string) *BatchNormalization {
	return newBN(cfg, name, "BatchNormalization")
}

// NewSpatialBatchNormalization makes a SpatialBatchNormalization brick:
// input_dim is (channels, height, width, ...) and every axis but the
// channels is averaged over.
func NewSpatialBatchNormalization(cfg *Config, name string) *BatchNormalization {
	return newBN(cfg, name, "SpatialBatchNormalization")
}

func newBN(cfg *Config, name, class string) *BatchNormalization {
	b := &BatchNormalization{Base: &Base{}, spatial: class == "SpatialBatchNormalization"}
	b.initBase(b, cfg, name, class)
	b.ConserveMemory, b.Epsilon, b.LearnScale, b.LearnShift = true, 1e-4, true, true
	b.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: b.apply})
	return b
}

// Enter puts the brick in training mode (Blocks' __enter__); Exit leaves
// it. They nest.
func (b *BatchNormalization) Enter() { b.training++ }

// Exit undoes one Enter.
func (b *BatchNormalization) Exit() {
	if b.training > 0 {
		b.training--
	}
}

// TrainingMode reports whether applications now use minibatch statistics.
func (b *BatchNormalization) TrainingMode() bool { return b.training > 0 }

// inputDim is input_dim as a tuple (an int n is (n,)), 0 for an unknown
// entry, and whether it was given as a tuple.
func (b *BatchNormalization) inputDim() (dims Size, isTuple bool) {
	if b.InputDim == nil {
		return nil, false
	}
	if !b.InputDimTuple {
		return b.InputDim[:1], false
	}
	return b.InputDim, true
}

func (b *BatchNormalization) missingAllocation() []string {
	if b.InputDim == nil {
		return []string{"input_dim"}
	}
	return nil
}

func (b *BatchNormalization) varDim() ([]int, []bool, error) {
	dims, isTuple := b.inputDim()
	bc := b.Broadcastable
	if b.spatial {
		if !isTuple || len(dims) < 2 {
			return nil, nil, fmt.Errorf("%s: expected input_dim to be length >= 2 e.g. (channels, height, width), got %s", b.AnnotationName(), b.dimString())
		}
		bc = make([]bool, len(dims))
		for i := 1; i < len(dims); i++ {
			bc[i] = true
		}
	}
	if bc == nil {
		bc = make([]bool, len(dims))
	}
	if len(bc) != len(dims) {
		return nil, nil, fmt.Errorf("%s: input_dim and broadcastable must be same length (input_dim %s, broadcastable %v)", b.AnnotationName(), b.dimString(), bc)
	}
	if !dims.Known() {
		return nil, nil, fmt.Errorf("%s: input_dim %s has unknown sizes (None)", b.AnnotationName(), b.dimString())
	}
	vd := make([]int, len(dims))
	for i, d := range dims {
		vd[i] = d
		if bc[i] {
			vd[i] = 1
		}
	}
	return vd, bc, nil
}

// dimString prints input_dim as Python would.
func (b *BatchNormalization) dimString() string {
	dims, isTuple := b.inputDim()
	if dims == nil {
		return "None"
	}
	if !isTuple {
		return fmt.Sprint(dims[0])
	}
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = "None"
		if d != 0 {
			parts[i] = fmt.Sprint(d)
		}
	}
	return nd.TupleString(parts)
}

// ImageSize is Blocks' image_size property: input_dim without its first
// (channels) entry.
func (b *BatchNormalization) ImageSize() Size {
	dims, isTuple := b.inputDim()
	if !isTuple || len(dims) < 1 {
		return nil
	}
	return slices.Clone(dims[1:])
}

// SetImageSize is Blocks' image_size setter: input_dim becomes (channels,)
// + size, channels None when input_dim was not a tuple.
func (b *BatchNormalization) SetImageSize(size Size) {
	dims, isTuple := b.inputDim()
	c := 0
	if isTuple && len(dims) > 0 {
		c = dims[0]
	}
	b.InputDim, b.InputDimTuple = append(Size{c}, size...), true
}

// NumChannels is Blocks' num_channels property: input_dim[0].
func (b *BatchNormalization) NumChannels() (int, bool) {
	dims, _ := b.inputDim()
	if len(dims) == 0 || dims[0] == 0 {
		return 0, false
	}
	return dims[0], true
}

// SetNumChannels is Blocks' num_channels setter.
func (b *BatchNormalization) SetNumChannels(n int) {
	dims, isTuple := b.inputDim()
	rest := Size{0, 0}
	if isTuple && len(dims) > 0 {
		rest = slices.Clone(dims[1:])
	}
	b.InputDim, b.InputDimTuple = append(Size{n}, rest...), true
}

// GetDim is Blocks' get_dim: input and output are input_dim.
func (b *BatchNormalization) GetDim(name string) (Size, error) {
	switch name {
	case "input", "input_", "output":
		dims, _ := b.inputDim()
		return slices.Clone(dims), nil
	}
	return nil, fmt.Errorf("%s: no dimension information for %s", b.AnnotationName(), name)
}

// NumOutputChannels is num_channels (a layer of a ConvolutionalSequence).
func (b *BatchNormalization) NumOutputChannels() (int, bool) { return b.NumChannels() }

func (b *BatchNormalization) setInputShape(numChannels int, imageSize Size) {
	b.SetNumChannels(numChannels)
	b.SetImageSize(imageSize)
}

// AllocateHook makes the shift, the scale and the population statistics.
func (b *BatchNormalization) AllocateHook() error {
	vd, _, err := b.varDim()
	if err != nil {
		return err
	}
	b.Shift, b.Scale, b.PopulationStdev = nil, nil, nil
	if b.LearnShift {
		b.Shift = b.newParameter("batch_norm_shift", core.BatchNormShiftParameter, vd...)
	}
	b.PopulationMean = b.newStatistic("population_mean", core.BatchNormPopulationMean, 0, vd)
	if b.LearnScale && !b.MeanOnly {
		b.Scale = b.newParameter("batch_norm_scale", core.BatchNormScaleParameter, vd...)
	}
	if !b.MeanOnly {
		b.PopulationStdev = b.newStatistic("population_stdev", core.BatchNormPopulationStdev, 1, vd)
	}
	return nil
}

// newStatistic makes a population statistic: a shared floatX variable
// filled with value, annotated with the brick, not among its Parameters.
func (b *BatchNormalization) newStatistic(name string, role *core.Role, value float64, shape []int) *core.Variable {
	a := nd.New(b.cfg.FloatX, shape...)
	for i := range a.Size() {
		a.SetFlat(i, value)
	}
	v := core.NewShared(a, name)
	v.Tag.Name = name
	core.AddRole(v, role)
	v.Tag.Annotations = append(v.Tag.Annotations, b.self.(core.Annotation))
	return v
}

// PopulationStatistics are the brick's population mean and (unless
// mean_only) standard deviation.
func (b *BatchNormalization) PopulationStatistics() []*core.Variable {
	out := []*core.Variable{}
	if b.PopulationMean != nil {
		out = append(out, b.PopulationMean)
	}
	if b.PopulationStdev != nil {
		out = append(out, b.PopulationStdev)
	}
	return out
}

// InitializeHook draws the shift and scale (Constant(0) and Constant(1)
// unless shift_init and scale_init say otherwise).
func (b *BatchNormalization) InitializeHook() error {
	init := func(p *core.Variable, s initialization.Scheme, def float64) error {
		if p == nil {
			return nil
		}
		if s == nil {
			s = initialization.Constant{Value: def}
		}
		p.BeforeWrite()
		if err := initialization.Initialize(s, p.Value(), b.RNG()); err != nil {
			return fmt.Errorf("%s: %v", b.AnnotationName(), err)
		}
		return nil
	}
	if err := init(b.Shift, b.ShiftInit, 0); err != nil {
		return err
	}
	return init(b.Scale, b.ScaleInit, 1)
}

func padLeft(v *core.Variable) *core.Variable {
	p := []int{-1}
	for i := range v.NDim() {
		p = append(p, i)
	}
	w, _ := core.Dimshuffle(v, p)
	w.Name = "shape_padleft(" + v.Name + ")"
	return w
}

func annotate(v *core.Variable, role *core.Role, b *BatchNormalization, call *core.ApplicationCall) {
	core.AddRole(v, role)
	v.Tag.Annotations = append(v.Tag.Annotations, b.self.(core.Annotation), call)
}

func (b *BatchNormalization) apply(call *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
	x := in[0]
	vd, bc, err := b.varDim()
	if err != nil {
		return nil, err
	}
	if x.NDim() != len(vd)+1 {
		return nil, fmt.Errorf("input_ must be %d-d (batch axis plus input_dim %v), got a %d-d variable %s", len(vd)+1, vd, x.NDim(), x)
	}
	if !x.DType().IsFloat() {
		return nil, fmt.Errorf("input_ must be a float variable, got %s", x.TypeString())
	}
	var mean, stdev *core.Variable
	training := b.TrainingMode()
	if training {
		axes := []int{0}
		for i, v := range bc {
			if v {
				axes = append(axes, i+1)
			}
		}
		if mean, err = core.Mean(x, axes, true, nil); err != nil {
			return nil, err
		}
		core.AddRole(mean, core.BatchNormMinibatchEstimate)
		if !b.MeanOnly {
			v, err := core.Mean(core.Sqr(core.Sub(x, mean)), axes, true, nil)
			if err != nil {
				return nil, err
			}
			stdev = core.Sqrt(core.Add(v, core.Const(x.DType(), b.Epsilon)))
			core.AddRole(stdev, core.BatchNormMinibatchEstimate)
		}
	} else {
		mean = padLeft(b.PopulationMean)
		if !b.MeanOnly {
			stdev = padLeft(b.PopulationStdev)
		}
	}
	call.Metadata["training_mode"] = training
	first := []core.Index{{I: 0}}
	if call.Metadata["offset"], err = core.Subtensor(mean, first); err != nil {
		return nil, err
	}
	annotate(mean, core.BatchNormOffset, b, call)
	y := core.Sub(x, mean)
	if stdev != nil {
		if call.Metadata["divisor"], err = core.Subtensor(stdev, first); err != nil {
			return nil, err
		}
		annotate(stdev, core.BatchNormDivisor, b, call)
		y = core.Div(y, stdev)
	}
	if b.Scale != nil {
		y = core.Mul(y, padLeft(b.Scale))
	}
	if b.Shift != nil {
		y = core.Add(y, padLeft(b.Shift))
	}
	return one(y), nil
}

// BatchNormalizedMLP is Blocks' BatchNormalizedMLP: an MLP whose every
// activation is wrapped in a Sequence batch_norm_activation_i of a
// BatchNormalization brick and the activation; its Linear bricks have no
// biases unless use_bias is set (the shifts take their place).
type BatchNormalizedMLP struct {
	MLP
	BNs []*BatchNormalization
	// ConserveMemory is passed on to the BatchNormalization bricks at
	// once by SetConserveMemory; MeanOnly, LearnScale and LearnShift when
	// the allocation configuration is pushed.
	ConserveMemory, MeanOnly, LearnScale, LearnShift bool
}

// NewBatchNormalizedMLP makes a BatchNormalizedMLP; dims may be nil for a
// parent to push. conserve_memory, mean_only, learn_scale and learn_shift
// are pushed to the BatchNormalization bricks (conserve_memory when set,
// the others at allocation).
func NewBatchNormalizedMLP(cfg *Config, name string, activations []Brick, dims []int) (*BatchNormalizedMLP, error) {
	if dims != nil && len(dims) != len(activations)+1 {
		return nil, fmt.Errorf("BatchNormalizedMLP: %d activations need %d dims, got %d", len(activations), len(activations)+1, len(dims))
	}
	m := &BatchNormalizedMLP{MLP: MLP{Sequence: Sequence{Base: &Base{}}}}
	var apps []AppRef
	for i, a := range activations {
		if a == nil {
			return nil, fmt.Errorf("BatchNormalizedMLP: activation %d is None", i)
		}
		l := NewLinear(cfg, fmt.Sprintf("linear_%d", i))
		m.LinearTransformations = append(m.LinearTransformations, l)
		bn := NewBatchNormalization(cfg, "")
		m.BNs = append(m.BNs, bn)
		seq := NewSequence(cfg, fmt.Sprintf("batch_norm_activation_%d", i), []AppRef{{bn, "apply"}, {a, "apply"}})
		m.Activations = append(m.Activations, seq)
		apps = append(apps, AppRef{l, "apply"}, AppRef{seq, "apply"})
	}
	m.initBase(m, cfg, name, "BatchNormalizedMLP")
	m.setApps(apps)
	m.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: m.apply})
	m.Dims = dims
	m.UseBias = new(false)
	m.ConserveMemory, m.LearnScale, m.LearnShift = true, true, true
	return m, nil
}

// PushAllocationConfigHook pushes the MLP's configuration, then gives each
// BatchNormalization brick its input_dim and settings.
func (m *BatchNormalizedMLP) PushAllocationConfigHook() error {
	if err := m.MLP.PushAllocationConfigHook(); err != nil {
		return err
	}
	dims := m.Dims
	for i, bn := range m.BNs {
		bn.InputDim, bn.InputDimTuple = Size{dims[i+1]}, false
		bn.MeanOnly, bn.LearnScale, bn.LearnShift = m.MeanOnly, m.LearnScale, m.LearnShift
	}
	return nil
}

// SetConserveMemory sets conserve_memory and passes it on to the
// BatchNormalization bricks at once (it has an effect after allocation
// too, in Blocks).
func (m *BatchNormalizedMLP) SetConserveMemory(v bool) {
	m.ConserveMemory = v
	for _, bn := range m.BNs {
		bn.ConserveMemory = v
	}
}

// FindBatchNormalizations returns the BatchNormalization bricks among the
// bricks and their descendants, each once, in depth-first order (Blocks'
// find_bricks).
func FindBatchNormalizations(roots ...Brick) []*BatchNormalization {
	var out []*BatchNormalization
	seen := map[*Base]bool{}
	var walk func(Brick)
	walk = func(x Brick) {
		b := x.BaseBrick()
		if seen[b] {
			return
		}
		seen[b] = true
		if bn, ok := b.self.(*BatchNormalization); ok {
			out = append(out, bn)
		}
		for _, c := range b.Children {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}
