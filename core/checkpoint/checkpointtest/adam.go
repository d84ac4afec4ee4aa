// Package checkpointtest holds what the checkpoint tests need that the
// project may not have yet: a stateful step rule (Blocks' Adam), with its
// state in ALGORITHM_BUFFER shared variables. Only tests (and binaries
// built with the tag blocks_checkpoint_adam) use it; the training code's
// own Adam replaces it where it exists.
package checkpointtest

import (
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/algorithms"
	"github.com/blocks-go/blocks/fuel/config"
)

// Adam is Blocks' Adam step rule (Kingma and Ba), with Blocks' defaults
// and formulas, including the decayed beta1.
type Adam struct {
	LearningRate                       *core.Variable
	Beta1, Beta2, Epsilon, DecayFactor float64
}

// NewAdam returns Adam(learning_rate) with Blocks' other defaults.
func NewAdam(learningRate float64) *Adam {
	return &Adam{LearningRate: algorithms.NewHyperparameter(learningRate, "learning_rate"),
		Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, DecayFactor: 1 - 1e-8}
}

// ComputeStep is Blocks' Adam.compute_step.
func (a *Adam) ComputeStep(parameter, previousStep *core.Variable) (*core.Variable, []core.Update, error) {
	mean, err := algorithms.NewBuffer(parameter, "mean")
	if err != nil {
		return nil, nil, err
	}
	variance, err := algorithms.NewBuffer(parameter, "variance")
	if err != nil {
		return nil, nil, err
	}
	time := algorithms.SharedFloatX(0, "time")
	core.AddRole(time, core.AlgorithmBuffer)
	fx := config.FloatX()
	c := func(x float64) *core.Variable { return core.Const(fx, x) }
	t1 := core.Add(time, c(1))
	beta1Decayed := core.Mul(c(a.Beta1), core.Pow(c(a.DecayFactor), core.Sub(t1, c(1))))
	lr := core.Div(core.Mul(a.LearningRate, core.Sqrt(core.Sub(c(1), core.Pow(c(a.Beta2), t1)))),
		core.Sub(c(1), core.Pow(c(a.Beta1), t1)))
	meanT := core.Add(core.Mul(beta1Decayed, mean), core.Mul(core.Sub(c(1), beta1Decayed), previousStep))
	varT := core.Add(core.Mul(c(a.Beta2), variance), core.Mul(c(1-a.Beta2), core.Sqr(previousStep)))
	step := core.Div(core.Mul(lr, meanT), core.Add(core.Sqrt(varT), c(a.Epsilon)))
	return step, []core.Update{{Shared: mean, Value: meanT}, {Shared: variance, Value: varT}, {Shared: time, Value: t1}}, nil
}

// ComputeSteps applies ComputeStep to every parameter.
func (a *Adam) ComputeSteps(parameters, previousSteps []*core.Variable) ([]*core.Variable, []core.Update, error) {
	return algorithms.ComputeStepsParameterwise(a, parameters, previousSteps)
}
