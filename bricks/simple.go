package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
)

func one(v *core.Variable) []*core.Variable { return []*core.Variable{v} }

// Linear is y = xW + b, W of shape (InputDim, OutputDim).
type Linear struct {
	*Base
	// InputDim and OutputDim are the dimensions of the input and the
	// output; 0 is unset (a parent such as an MLP pushes them).
	InputDim, OutputDim int
	InitConfig
	W, B *core.Variable
}

// NewLinear makes a Linear; its dimensions may be left unset for a parent
// to push.
func NewLinear(cfg *Config, name string) *Linear {
	l := &Linear{Base: &Base{}}
	l.initBase(l, cfg, name, "Linear")
	l.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: l.apply})
	return l
}

func (l *Linear) missingAllocation() []string {
	var m []string
	if l.InputDim == 0 {
		m = append(m, "input_dim")
	}
	if l.OutputDim == 0 {
		m = append(m, "output_dim")
	}
	return m
}

// AllocateHook creates W and, unless UseBias is false, b.
func (l *Linear) AllocateHook() error {
	in, out := l.InputDim, l.OutputDim
	l.W = l.newParameter("W", core.Weight, in, out)
	l.AuxiliaryVariables = nil
	l.addAuxiliaryVariable(norm2(l.W), "W_norm")
	l.B = nil
	if l.HasBias() {
		l.B = l.newParameter("b", core.Bias, out)
		l.addAuxiliaryVariable(norm2(l.B), "b_norm")
	}
	return nil
}

// InitializeHook draws the biases, then the weights (Blocks' LinearLike).
func (l *Linear) InitializeHook() error {
	if l.B != nil {
		if err := l.initWith(l.B, l.BiasesInit, "biases_init"); err != nil {
			return err
		}
	}
	return l.initWith(l.W, l.WeightsInit, "weights_init")
}

func (l *Linear) apply(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
	x := in[0]
	if x.NDim() < 1 {
		return nil, fmt.Errorf("input_ must be a vector, a matrix (batch, input_dim) or a tensor (..., input_dim), got the scalar %s", x)
	}
	y, err := core.DotND(x, l.W) // as Theano's dot: over the last axis
	if err != nil {
		return nil, err
	}
	if l.B != nil {
		y = core.Add(y, l.B)
	}
	return one(y), nil
}

// Bias adds a learned vector b of length Dim.
type Bias struct {
	*Base
	Dim int // 0: unset (a parent pushes it)
	// InitConfig's BiasesInit draws b (a parent's WeightsInit and UseBias
	// are kept and not used).
	InitConfig
	B *core.Variable
}

// NewBias makes a Bias brick.
func NewBias(cfg *Config, name string) *Bias {
	b := &Bias{Base: &Base{}}
	b.initBase(b, cfg, name, "Bias")
	b.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
		return one(core.Add(in[0], b.B)), nil
	}})
	return b
}

func (b *Bias) missingAllocation() []string {
	if b.Dim == 0 {
		return []string{"dim"}
	}
	return nil
}

// AllocateHook creates b.
func (b *Bias) AllocateHook() error {
	b.B = b.newParameter("b", core.Bias, b.Dim)
	return nil
}

// InitializeHook draws b.
func (b *Bias) InitializeHook() error { return b.initWith(b.B, b.BiasesInit, "biases_init") }

// Activation is an elementwise brick without parameters.
type Activation struct {
	*Base
	// Leak is a LeakyRectifier's slope for negative inputs, read when the
	// brick is applied (unused by the other activations).
	Leak float64
}

// LeakyRectifierLeak is LeakyRectifier's default leak (Blocks' 0.01).
const LeakyRectifierLeak = 0.01

// NewActivation makes one of Blocks' activation bricks: Identity, Tanh,
// Logistic, Softplus, Rectifier, LeakyRectifier (leak, its attribute:
// the slope for negative inputs, read when the brick is applied).
// The constructors NewIdentity, NewTanh, ... make each class.
func NewActivation(cfg *Config, class, name string, leak float64) (*Activation, error) {
	a := &Activation{Base: &Base{}}
	var f func(x *core.Variable) *core.Variable
	switch class {
	case "Identity":
		f = func(x *core.Variable) *core.Variable { return x }
	case "Tanh":
		f = core.Tanh
	case "Logistic":
		f = core.Sigmoid
	case "Softplus":
		f = core.Softplus
	case "Rectifier":
		f = core.Relu
	case "LeakyRectifier":
		f = func(x *core.Variable) *core.Variable {
			return core.Switch(core.GT(x, core.Const(x.DType(), 0)), x, core.Mul(core.Const(x.DType(), a.Leak), x))
		}
	default:
		return nil, fmt.Errorf("unknown activation %s", class)
	}
	a.initBase(a, cfg, name, class)
	a.Leak = leak
	a.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
		return one(f(in[0])), nil
	}})
	return a, nil
}

// mustActivation is NewActivation of a class it knows.
func mustActivation(cfg *Config, class, name string, leak float64) *Activation {
	a, err := NewActivation(cfg, class, name, leak)
	if err != nil {
		panic(err) // unreachable: the callers name known classes
	}
	return a
}

// NewIdentity makes an Identity activation (y = x).
func NewIdentity(cfg *Config, name string) *Activation {
	return mustActivation(cfg, "Identity", name, 0)
}

// NewTanh makes a Tanh activation.
func NewTanh(cfg *Config, name string) *Activation { return mustActivation(cfg, "Tanh", name, 0) }

// NewLogistic makes a Logistic activation (the sigmoid).
func NewLogistic(cfg *Config, name string) *Activation {
	return mustActivation(cfg, "Logistic", name, 0)
}

// NewSoftplus makes a Softplus activation.
func NewSoftplus(cfg *Config, name string) *Activation {
	return mustActivation(cfg, "Softplus", name, 0)
}

// NewRectifier makes a Rectifier activation (y = max(x, 0)).
func NewRectifier(cfg *Config, name string) *Activation {
	return mustActivation(cfg, "Rectifier", name, 0)
}

// NewLeakyRectifier makes a LeakyRectifier with slope leak for negative
// inputs (Blocks' default LeakyRectifierLeak).
func NewLeakyRectifier(cfg *Config, name string, leak float64) *Activation {
	return mustActivation(cfg, "LeakyRectifier", name, leak)
}

// Softmax is the softmax brick: apply, log_probabilities and
// categorical_cross_entropy.
type Softmax struct{ *Base }

// NewSoftmax makes a Softmax brick.
func NewSoftmax(cfg *Config, name string) *Softmax {
	s := &Softmax{Base: &Base{}}
	s.initBase(s, cfg, name, "Softmax")
	s.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
		y, err := core.Softmax(in[0])
		return one(y), err
	}})
	s.addApplication(&Application{Name: "log_probabilities", Inputs: []string{"input_"}, Outputs: []string{"output"}, Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
		y, err := core.LogSoftmax(in[0])
		return one(y), err
	}})
	s.addApplication(&Application{Name: "categorical_cross_entropy", Inputs: []string{"y", "x"}, Outputs: []string{"output"}, Fn: s.crossEntropy})
	return s
}

// crossEntropy is −log softmax(x)[y] per example (integer y) or
// −Σ y·log softmax(x) (one-hot or soft y), from the stable log-softmax.
func (s *Softmax) crossEntropy(call *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
	y, x := in[0], in[1]
	lp, err := Apply(s, "log_probabilities", x)
	if err != nil {
		return nil, err
	}
	logp := lp[0]
	aux := logp.Copy()
	call.AddAuxiliaryVariable(aux, "log_probabilities")
	switch {
	case y.NDim() == logp.NDim()-1:
		p, err := core.Pick(logp, y)
		if err != nil {
			return nil, err
		}
		return one(core.Neg(p)), nil
	case y.NDim() == logp.NDim():
		sum, err := core.Sum(core.Mul(logp, y), []int{1}, false, nil)
		if err != nil {
			return nil, err
		}
		return one(core.Neg(sum)), nil
	}
	return nil, fmt.Errorf("y must be %d-d (class indices) or %d-d (probabilities), got %d-d", logp.NDim()-1, logp.NDim(), y.NDim())
}
