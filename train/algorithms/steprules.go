package algorithms

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// StepRule computes the steps of a gradient descent algorithm (Blocks'
// StepRule.compute_steps). parameters and previousSteps are parallel: the
// parameters being trained and, for each, the gradient of the cost or the
// step an earlier rule proposed. The result holds one step per parameter,
// in the same order, and the updates of the rule's own state (buffers).
//
// GradientDescent subtracts the steps from the parameters: a rule returns
// what to subtract, not what to add.
type StepRule interface {
	ComputeSteps(parameters, previousSteps []*core.Variable) (steps []*core.Variable, updates []core.Update, err error)
}

// ParameterwiseRule is a step rule that treats every parameter on its own
// (Blocks' StepRule.compute_step). ComputeStepsParameterwise turns it into
// a StepRule.
type ParameterwiseRule interface {
	ComputeStep(parameter, previousStep *core.Variable) (step *core.Variable, updates []core.Update, err error)
}

// ComputeStepsParameterwise is Blocks' default compute_steps: rule's
// ComputeStep for each parameter in order, the updates concatenated.
func ComputeStepsParameterwise(rule ParameterwiseRule, parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	if len(parameters) != len(previousSteps) {
		return nil, nil, fmt.Errorf("compute_steps: %d parameters but %d previous steps", len(parameters), len(previousSteps))
	}
	steps := make([]*core.Variable, len(parameters))
	var updates []core.Update
	for i, p := range parameters {
		s, u, err := rule.ComputeStep(p, previousSteps[i])
		if err != nil {
			return nil, nil, err
		}
		steps[i] = s
		updates = append(updates, u...)
	}
	return steps, updates, nil
}

// NewHyperparameter returns a 0-d shared variable of floatX holding value
// (Blocks' shared_floatx), tagged ALGORITHM_HYPERPARAMETER: the way step
// rules store their settings so that schedules (SharedVariableModifier)
// can change them during training. floatX is the run's (Theano's
// config.floatX), which every step rule's constructor takes.
func NewHyperparameter(floatX nd.DType, value float64, name string) *core.Variable {
	v := core.NewShared(nd.Scalar(floatX, value), name)
	core.AddRole(v, core.AlgorithmHyperparameter)
	return v
}

// NewBuffer returns a shared variable of zeros of dtype shaped like the
// parameter's value, tagged ALGORITHM_BUFFER and recorded as made for
// parameter (Blocks' _create_algorithm_buffer_for). Stateful step rules
// keep their state in such buffers, of their floatX.
func NewBuffer(parameter *core.Variable, name string, dtype nd.DType) (*core.Variable, error) {
	val := parameter.Value()
	if val == nil {
		return nil, fmt.Errorf("algorithm buffer %q: %s is not a shared variable", name, parameter)
	}
	b := core.NewShared(nd.New(dtype, val.Shape...), name)
	core.AddRole(b, core.AlgorithmBuffer)
	b.Tag.ForParameter = parameter
	return b, nil
}

// DefaultLearningRate is Scale's default learning rate.
const DefaultLearningRate = 1.0

// Scale is a step proportional to the previous step: step = learning_rate ·
// previous_step. Alone in GradientDescent it is steepest descent.
type Scale struct {
	// LearningRate is a 0-d shared floatX variable named "learning_rate"
	// with role ALGORITHM_HYPERPARAMETER: set its value to change the
	// learning rate during training.
	LearningRate *core.Variable
}

// NewScale returns Blocks' Scale(learning_rate).
func NewScale(floatX nd.DType, learningRate float64) *Scale {
	return &Scale{LearningRate: NewHyperparameter(floatX, learningRate, "learning_rate")}
}

// ComputeStep returns learning_rate · previousStep and no updates.
func (s *Scale) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	return core.Mul(s.LearningRate, previousStep), nil, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (s *Scale) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return ComputeStepsParameterwise(s, parameters, previousSteps)
}

// CompositeRule chains step rules: each component gets the steps of the
// one before it (the first gets the gradients), and the updates of all are
// concatenated in order.
type CompositeRule struct {
	Components []StepRule
}

// NewCompositeRule returns Blocks' CompositeRule(components).
func NewCompositeRule(components ...StepRule) *CompositeRule {
	return &CompositeRule{Components: components}
}

// ComputeSteps runs the components in order.
func (c *CompositeRule) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	steps := previousSteps
	var updates []core.Update
	for _, rule := range c.Components {
		s, u, err := rule.ComputeSteps(parameters, steps)
		if err != nil {
			return nil, nil, err
		}
		if len(s) != len(parameters) {
			return nil, nil, fmt.Errorf("step rule %T returned %d steps for %d parameters", rule, len(s), len(parameters))
		}
		steps = s
		updates = append(updates, u...)
	}
	return steps, updates, nil
}
