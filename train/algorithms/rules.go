package algorithms

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// Blocks' step rules beyond Scale and CompositeRule
// (blocks/algorithms/__init__.py), with Blocks' defaults. Stateful rules
// keep their state in ALGORITHM_BUFFER shared variables (NewBuffer) and
// compute the step and the new buffer values in one fused pass per
// parameter (kernels.go); the stateless ones are symbolic.

// newBuffers makes a rule's buffers for parameter, of the rule's floatX.
func newBuffers(floatX nd.DType, parameter *core.Variable, names ...string) ([]*core.Variable, error) {
	out := make([]*core.Variable, len(names))
	for i, n := range names {
		b, err := NewBuffer(parameter, n, floatX)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// BasicMomentum accumulates the step with exponential discount:
// velocity = momentum·velocity + previous_step, and the step is the new
// velocity. Use it after Scale, or use Momentum.
type BasicMomentum struct {
	// Momentum is a 0-d shared hyperparameter named "momentum".
	Momentum *core.Variable
}

// NewBasicMomentum returns Blocks' BasicMomentum(momentum=0).
func NewBasicMomentum(floatX nd.DType, momentum float64) *BasicMomentum {
	return &BasicMomentum{Momentum: NewHyperparameter(floatX, momentum, "momentum")}
}

// ComputeStep makes the velocity buffer and the fused step.
func (r *BasicMomentum) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	bufs, err := newBuffers(r.Momentum.DType(), parameter, "velocity")
	if err != nil {
		return nil, nil, err
	}
	out, err := fuse(momentumKernel(), []*core.Variable{previousStep, bufs[0]}, r.Momentum)
	if err != nil {
		return nil, nil, fmt.Errorf("BasicMomentum: %w", err)
	}
	return out[0], []core.Update{{Shared: bufs[0], Value: out[0]}}, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (r *BasicMomentum) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(r, parameters, previousSteps)
}

// Momentum is Blocks' Momentum: CompositeRule(Scale(learning_rate),
// BasicMomentum(momentum)).
type Momentum struct {
	CompositeRule
	LearningRate, Momentum *core.Variable
}

// NewMomentum returns Blocks' Momentum(learning_rate=1.0, momentum=0).
func NewMomentum(floatX nd.DType, learningRate, momentum float64) *Momentum {
	s, m := NewScale(floatX, learningRate), NewBasicMomentum(floatX, momentum)
	return &Momentum{CompositeRule: CompositeRule{Components: []StepRule{s, m}}, LearningRate: s.LearningRate, Momentum: m.Momentum}
}

// AdaDelta is Zeiler's AdaDelta, as Blocks computes it, with buffers
// mean_square_step_tm1 and mean_square_delta_x_tm1.
type AdaDelta struct {
	DecayRate, Epsilon *core.Variable
}

// NewAdaDelta returns Blocks' AdaDelta(decay_rate=0.95, epsilon=1e-6).
func NewAdaDelta(floatX nd.DType, decayRate, epsilon float64) (*AdaDelta, error) {
	if decayRate < 0 || decayRate > 1 {
		return nil, fmt.Errorf("AdaDelta: decay rate needs to be in [0, 1], got %v", decayRate)
	}
	return &AdaDelta{DecayRate: NewHyperparameter(floatX, decayRate, "decay_rate"), Epsilon: NewHyperparameter(floatX, epsilon, "epsilon")}, nil
}

// ComputeStep makes the buffers and the fused step.
func (r *AdaDelta) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	bufs, err := newBuffers(r.DecayRate.DType(), parameter, "mean_square_step_tm1", "mean_square_delta_x_tm1")
	if err != nil {
		return nil, nil, err
	}
	out, err := fuse(adaDeltaKernel(), []*core.Variable{previousStep, bufs[0], bufs[1]}, r.DecayRate, r.Epsilon)
	if err != nil {
		return nil, nil, fmt.Errorf("AdaDelta: %w", err)
	}
	return out[0], []core.Update{{Shared: bufs[0], Value: out[1]}, {Shared: bufs[1], Value: out[2]}}, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (r *AdaDelta) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(r, parameters, previousSteps)
}

// BasicRMSProp divides the step by a running root mean square:
// step = previous / max(sqrt(ms_t), 1/max_scaling), with the buffer
// mean_square_step_tm1.
type BasicRMSProp struct {
	DecayRate *core.Variable
	// Epsilon is 1/max_scaling (a constant, as in Blocks).
	Epsilon float64
}

// NewBasicRMSProp returns Blocks' BasicRMSProp(decay_rate=0.9,
// max_scaling=1e5).
func NewBasicRMSProp(floatX nd.DType, decayRate, maxScaling float64) (*BasicRMSProp, error) {
	if decayRate < 0 || decayRate > 1 {
		return nil, fmt.Errorf("BasicRMSProp: decay rate needs to be in [0, 1], got %v", decayRate)
	}
	if maxScaling <= 0 {
		return nil, fmt.Errorf("BasicRMSProp: max. scaling needs to be greater than 0, got %v", maxScaling)
	}
	return &BasicRMSProp{DecayRate: NewHyperparameter(floatX, decayRate, "decay_rate"), Epsilon: 1 / maxScaling}, nil
}

// ComputeStep makes the buffer and the fused step.
func (r *BasicRMSProp) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	bufs, err := newBuffers(r.DecayRate.DType(), parameter, "mean_square_step_tm1")
	if err != nil {
		return nil, nil, err
	}
	out, err := fuse(rmsPropKernel(r.Epsilon), []*core.Variable{previousStep, bufs[0]}, r.DecayRate)
	if err != nil {
		return nil, nil, fmt.Errorf("BasicRMSProp: %w", err)
	}
	return out[0], []core.Update{{Shared: bufs[0], Value: out[1]}}, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (r *BasicRMSProp) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(r, parameters, previousSteps)
}

// RMSProp is Blocks' RMSProp: CompositeRule(BasicRMSProp, Scale).
type RMSProp struct {
	CompositeRule
	LearningRate, DecayRate *core.Variable
}

// NewRMSProp returns Blocks' RMSProp(learning_rate=1.0, decay_rate=0.9,
// max_scaling=1e5).
func NewRMSProp(floatX nd.DType, learningRate, decayRate, maxScaling float64) (*RMSProp, error) {
	b, err := NewBasicRMSProp(floatX, decayRate, maxScaling)
	if err != nil {
		return nil, fmt.Errorf("RMSProp: %w", err)
	}
	s := NewScale(floatX, learningRate)
	return &RMSProp{CompositeRule: CompositeRule{Components: []StepRule{b, s}}, LearningRate: s.LearningRate, DecayRate: b.DecayRate}, nil
}

// AdaGrad is Duchi et al.'s AdaGrad: ssq += g²; step = lr·g/(sqrt(ssq)+ε).
// Its buffer is named adagrad_sqs_<parameter name>, as in Blocks.
type AdaGrad struct {
	LearningRate, Epsilon *core.Variable
}

// NewAdaGrad returns Blocks' AdaGrad(learning_rate=0.002, epsilon=1e-6).
func NewAdaGrad(floatX nd.DType, learningRate, epsilon float64) *AdaGrad {
	return &AdaGrad{LearningRate: NewHyperparameter(floatX, learningRate, "learning_rate"), Epsilon: NewHyperparameter(floatX, epsilon, "epsilon")}
}

// ComputeStep makes the buffer and the fused step.
func (r *AdaGrad) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	name := "adagrad_sqs"
	if parameter.Name != "" {
		name += "_" + parameter.Name
	}
	bufs, err := newBuffers(r.LearningRate.DType(), parameter, name)
	if err != nil {
		return nil, nil, err
	}
	out, err := fuse(adaGradKernel(), []*core.Variable{previousStep, bufs[0]}, r.LearningRate, r.Epsilon)
	if err != nil {
		return nil, nil, fmt.Errorf("AdaGrad: %w", err)
	}
	return out[0], []core.Update{{Shared: bufs[0], Value: out[1]}}, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (r *AdaGrad) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(r, parameters, previousSteps)
}

// Adam is Kingma and Ba's Adam as Blocks computes it: buffers mean,
// variance and a per-parameter 0-d time; with t = time+1 and β1' =
// β1·decay_factor^(t-1), lr_t = lr·sqrt(1-β2^t)/(1-β1'^t).
type Adam struct {
	LearningRate, Beta1, Beta2, Epsilon, DecayFactor *core.Variable
}

// Adam's defaults in Blocks.
const (
	AdamLearningRate = 0.002
	AdamBeta1        = 0.9
	AdamBeta2        = 0.999
	AdamEpsilon      = 1e-8
	AdamDecayFactor  = 1.0
)

// NewAdam returns Blocks' Adam(learning_rate=0.002, beta1=0.9,
// beta2=0.999, epsilon=1e-8, decay_factor=1).
func NewAdam(floatX nd.DType, learningRate, beta1, beta2, epsilon, decayFactor float64) *Adam {
	return &Adam{
		LearningRate: NewHyperparameter(floatX, learningRate, "learning_rate"),
		Beta1:        NewHyperparameter(floatX, beta1, "beta1"),
		Beta2:        NewHyperparameter(floatX, beta2, "beta2"),
		Epsilon:      NewHyperparameter(floatX, epsilon, "epsilon"),
		DecayFactor:  NewHyperparameter(floatX, decayFactor, "decay_factor"),
	}
}

// ComputeStep makes the buffers, the scalar schedule of the rates and
// the fused step.
func (r *Adam) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	bufs, err := newBuffers(r.LearningRate.DType(), parameter, "mean", "variance")
	if err != nil {
		return nil, nil, err
	}
	time := core.NewShared(nd.Scalar(r.LearningRate.DType(), 0), "time")
	core.AddRole(time, core.AlgorithmBuffer)
	time.Tag.ForParameter = parameter
	dt := time.DType()
	one := core.Const(dt, 1)
	t1 := core.Add(time, one)
	beta1Decayed := core.Mul(r.Beta1, core.Pow(r.DecayFactor, core.Sub(t1, one)))
	lr := core.Div(core.Mul(r.LearningRate, core.Sqrt(core.Sub(one, core.Pow(r.Beta2, t1)))),
		core.Sub(one, core.Pow(beta1Decayed, t1)))
	out, err := fuse(adamKernel(), []*core.Variable{previousStep, bufs[0], bufs[1]}, lr, beta1Decayed, r.Beta2, r.Epsilon)
	if err != nil {
		return nil, nil, fmt.Errorf("Adam: %w", err)
	}
	return out[0], []core.Update{{Shared: bufs[0], Value: out[1]}, {Shared: bufs[1], Value: out[2]}, {Shared: time, Value: t1}}, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (r *Adam) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(r, parameters, previousSteps)
}

// StepClipping rescales the whole step when its L2 norm (over every
// parameter together) exceeds Threshold; with no threshold it does
// nothing. Applied to the gradients, it is gradient clipping.
type StepClipping struct {
	// Threshold is a 0-d shared hyperparameter named "threshold", or nil.
	Threshold *core.Variable
}

// NewStepClipping returns Blocks' StepClipping(threshold); nil is
// threshold=None.
func NewStepClipping(floatX nd.DType, threshold *float64) *StepClipping {
	if threshold == nil {
		return &StepClipping{}
	}
	return &StepClipping{Threshold: NewHyperparameter(floatX, *threshold, "threshold")}
}

// ComputeSteps multiplies every step by min(1, threshold/norm).
func (r *StepClipping) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	if r.Threshold == nil {
		return slices.Clone(previousSteps), nil, nil
	}
	norm := L2Norm(previousSteps)
	mult := core.Switch(core.LT(norm, r.Threshold), core.Const(norm.DType(), 1), core.Div(r.Threshold, norm))
	steps := make([]*core.Variable, len(previousSteps))
	for i, s := range previousSteps {
		steps[i] = core.Mul(s, mult)
	}
	return steps, nil, nil
}

// VariableClipping bounds the norm of each parameter after the update
// (max-norm regularisation): where the norm of parameter - step (over
// Axes, or the whole tensor when Axes is empty) exceeds Threshold, the
// step becomes the one that lands on the threshold.
type VariableClipping struct {
	Threshold *core.Variable
	Axes      []int
}

// NewVariableClipping returns Blocks' VariableClipping(threshold,
// axis=None).
func NewVariableClipping(floatX nd.DType, threshold float64, axes []int) (*VariableClipping, error) {
	seen := map[int]bool{}
	for _, a := range axes {
		if seen[a] {
			return nil, fmt.Errorf("VariableClipping: axis must be unique, got %v", axes)
		}
		seen[a] = true
	}
	ax := slices.Clone(axes)
	slices.Sort(ax)
	return &VariableClipping{Threshold: NewHyperparameter(floatX, threshold, "threshold"), Axes: ax}, nil
}

// ComputeStep clips one parameter.
func (r *VariableClipping) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	for _, a := range r.Axes {
		if a < 0 || a >= previousStep.NDim() {
			return nil, nil, fmt.Errorf("VariableClipping: invalid axis %v for %s, ndim=%d", r.Axes, parameter, previousStep.NDim())
		}
	}
	next := core.Sub(parameter, previousStep)
	var norms *core.Variable
	if len(r.Axes) == 0 {
		norms = L2Norm([]*core.Variable{next})
	} else {
		s, err := core.Sum(core.Sqr(next), r.Axes, true, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("VariableClipping: %w", err)
		}
		norms = core.Sqrt(s)
	}
	shrinking := core.Sub(parameter, core.Mul(core.Div(r.Threshold, norms), next))
	return core.Switch(core.GT(norms, r.Threshold), shrinking, previousStep), nil, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (r *VariableClipping) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(r, parameters, previousSteps)
}

// RemoveNotFinite replaces a step that holds a NaN or an infinity by
// (1-scaler)·parameter (with the default scaler 1, the parameter is left
// unchanged). Apply it last.
type RemoveNotFinite struct {
	Scaler float64
}

// NewRemoveNotFinite returns Blocks' RemoveNotFinite(scaler=1).
func NewRemoveNotFinite(scaler float64) *RemoveNotFinite { return &RemoveNotFinite{Scaler: scaler} }

// ComputeStep tests the sum of the step: it is finite unless the step
// holds a NaN or an infinity (or overflows).
func (r *RemoveNotFinite) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	s := core.SumAll(previousStep)
	notFinite := core.NEQ(core.Sub(s, s), core.Const(s.DType(), 0)) // inf-inf and NaN-NaN are NaN
	replacement := core.Mul(core.Const(previousStep.DType(), 1-r.Scaler), parameter)
	return core.Switch(notFinite, replacement, previousStep), nil, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (r *RemoveNotFinite) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(r, parameters, previousSteps)
}

// Restrict applies StepRule only to Variables; the other parameters keep
// their previous steps.
type Restrict struct {
	StepRule  StepRule
	Variables []*core.Variable
}

// NewRestrict returns Blocks' Restrict(step_rule, variables).
func NewRestrict(rule StepRule, variables []*core.Variable) *Restrict {
	return &Restrict{StepRule: rule, Variables: slices.Clone(variables)}
}

// ComputeSteps runs the rule on the restricted parameters, in their order
// among parameters.
func (r *Restrict) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	var ps, prev []*core.Variable
	var idx []int
	for i, p := range parameters {
		if slices.Contains(r.Variables, p) {
			ps = append(ps, p)
			prev = append(prev, previousSteps[i])
			idx = append(idx, i)
		}
	}
	steps := slices.Clone(previousSteps)
	if len(ps) == 0 {
		return steps, nil, nil
	}
	sub, updates, err := r.StepRule.ComputeSteps(ps, prev)
	if err != nil {
		return nil, nil, err
	}
	if len(sub) != len(ps) {
		return nil, nil, fmt.Errorf("Restrict: the step rule returned %d steps for %d parameters", len(sub), len(ps))
	}
	for k, i := range idx {
		steps[i] = sub[k]
	}
	return steps, updates, nil
}
