package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/algorithms"
)

// The step rules of blocks.algorithms, one table each (classtable.go):
// Blocks' parameters and defaults, and the train/algorithms constructor.
// Hyperparameters are attributes holding shared variables
// (adam.learning_rate.set_value(0.001), or SharedVariableModifier).
func stepsTableModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.algorithms", Members: registerClasses(false, stepRuleTables...)})
	return
}

func num(name, def string) classParam { return classParam{Name: name, Default: def, Kind: argFloat} }

// stepRule wraps a rule with its hyperparameters as attributes.
func stepRule(c *classCall, r algorithms.StepRule, attrs ...any) *StepRule {
	m := map[string]*core.Variable{}
	for i := 0; i+1 < len(attrs); i += 2 {
		if v := attrs[i+1].(*core.Variable); v != nil {
			m[attrs[i].(string)] = v
		}
	}
	return &StepRule{R: r, name: c.table.Name, attrs: m}
}

var stepRuleTables = []*classTable{
	{Module: "blocks.algorithms", Name: "Scale", Doc: "step = learning_rate * gradient",
		Params: []classParam{num("learning_rate", "1.0")},
		New: func(c *classCall) (starlark.Value, error) {
			r := algorithms.NewScale(starlib.FloatX(c.thread), c.Float("learning_rate"))
			return stepRule(c, r, "learning_rate", r.LearningRate), nil
		}},
	{Module: "blocks.algorithms", Name: "CompositeRule", Doc: "applies step rules in turn",
		Params: []classParam{{Name: "components", Kind: argList}},
		New: func(c *classCall) (starlark.Value, error) {
			items, _ := starlib.Elems(c.Value("components"))
			var rules []algorithms.StepRule
			for i, it := range items {
				r, ok := it.(*StepRule)
				if !ok {
					return nil, fmt.Errorf("CompositeRule: components[%d] is %s, want a step rule", i, it.Type())
				}
				rules = append(rules, r.R)
			}
			return stepRule(c, algorithms.NewCompositeRule(rules...)), nil
		}},
	{Module: "blocks.algorithms", Name: "BasicMomentum", Doc: "step = momentum*velocity + previous step",
		Params: []classParam{num("momentum", "0.0")},
		New: func(c *classCall) (starlark.Value, error) {
			r := algorithms.NewBasicMomentum(starlib.FloatX(c.thread), c.Float("momentum"))
			return stepRule(c, r, "momentum", r.Momentum), nil
		}},
	{Module: "blocks.algorithms", Name: "Momentum", Doc: "[Scale(learning_rate), BasicMomentum(momentum)]",
		Params: []classParam{num("learning_rate", "1.0"), num("momentum", "0.0")},
		New: func(c *classCall) (starlark.Value, error) {
			r := algorithms.NewMomentum(starlib.FloatX(c.thread), c.Float("learning_rate"), c.Float("momentum"))
			return stepRule(c, r, "learning_rate", r.LearningRate, "momentum", r.Momentum), nil
		}},
	{Module: "blocks.algorithms", Name: "AdaDelta", Doc: "Zeiler's AdaDelta",
		Params: []classParam{num("decay_rate", "0.95"), num("epsilon", "1e-06")},
		New: func(c *classCall) (starlark.Value, error) {
			r, err := algorithms.NewAdaDelta(starlib.FloatX(c.thread), c.Float("decay_rate"), c.Float("epsilon"))
			if err != nil {
				return nil, err
			}
			return stepRule(c, r, "decay_rate", r.DecayRate, "epsilon", r.Epsilon), nil
		}},
	{Module: "blocks.algorithms", Name: "BasicRMSProp", Doc: "step / max(rms, 1/max_scaling)",
		Params: []classParam{num("decay_rate", "0.9"), num("max_scaling", "100000.0")},
		New: func(c *classCall) (starlark.Value, error) {
			r, err := algorithms.NewBasicRMSProp(starlib.FloatX(c.thread), c.Float("decay_rate"), c.Float("max_scaling"))
			if err != nil {
				return nil, err
			}
			return stepRule(c, r, "decay_rate", r.DecayRate), nil
		}},
	{Module: "blocks.algorithms", Name: "RMSProp", Doc: "[BasicRMSProp, Scale(learning_rate)]",
		Params: []classParam{num("learning_rate", "1.0"), num("decay_rate", "0.9"), num("max_scaling", "100000.0")},
		New: func(c *classCall) (starlark.Value, error) {
			r, err := algorithms.NewRMSProp(starlib.FloatX(c.thread), c.Float("learning_rate"), c.Float("decay_rate"), c.Float("max_scaling"))
			if err != nil {
				return nil, err
			}
			return stepRule(c, r, "learning_rate", r.LearningRate, "decay_rate", r.DecayRate), nil
		}},
	{Module: "blocks.algorithms", Name: "AdaGrad", Doc: "Duchi et al.'s AdaGrad",
		Params: []classParam{num("learning_rate", "0.002"), num("epsilon", "1e-06")},
		New: func(c *classCall) (starlark.Value, error) {
			r := algorithms.NewAdaGrad(starlib.FloatX(c.thread), c.Float("learning_rate"), c.Float("epsilon"))
			return stepRule(c, r, "learning_rate", r.LearningRate, "epsilon", r.Epsilon), nil
		}},
	{Module: "blocks.algorithms", Name: "Adam", Doc: "Kingma and Ba's Adam (bias-corrected moments)",
		Params: []classParam{num("learning_rate", "0.002"), num("beta1", "0.9"), num("beta2", "0.999"),
			num("epsilon", "1e-08"), num("decay_factor", "1")},
		New: func(c *classCall) (starlark.Value, error) {
			r := algorithms.NewAdam(starlib.FloatX(c.thread), c.Float("learning_rate"), c.Float("beta1"), c.Float("beta2"),
				c.Float("epsilon"), c.Float("decay_factor"))
			return stepRule(c, r, "learning_rate", r.LearningRate, "beta1", r.Beta1, "beta2", r.Beta2,
				"epsilon", r.Epsilon, "decay_factor", r.DecayFactor), nil
		}},
	{Module: "blocks.algorithms", Name: "StepClipping", Doc: "rescales the whole step to norm <= threshold",
		Params: []classParam{num("threshold", "None")},
		New: func(c *classCall) (starlark.Value, error) {
			var t *float64
			if !c.IsNone("threshold") {
				f := c.Float("threshold")
				t = &f
			}
			r := algorithms.NewStepClipping(starlib.FloatX(c.thread), t)
			return stepRule(c, r, "threshold", r.Threshold), nil
		}},
	{Module: "blocks.algorithms", Name: "VariableClipping", Doc: "max-norm of each parameter after the update",
		Params: []classParam{num("threshold", ""), {Name: "axis", Default: "None"}},
		New: func(c *classCall) (starlark.Value, error) {
			var axes starlib.Axes
			if err := axes.Unpack(c.Value("axis")); err != nil {
				return nil, fmt.Errorf("VariableClipping: axis must be an int or a sequence of ints: %v", err)
			}
			if len(axes.Axes) == 0 {
				axes.Axes = nil // () as None: every axis
			}
			r, err := algorithms.NewVariableClipping(starlib.FloatX(c.thread), c.Float("threshold"), axes.Axes)
			if err != nil {
				return nil, err
			}
			return stepRule(c, r, "threshold", r.Threshold), nil
		}},
	{Module: "blocks.algorithms", Name: "RemoveNotFinite", Doc: "a NaN/inf step becomes (1-scaler)*parameter",
		Params: []classParam{num("scaler", "1")},
		New: func(c *classCall) (starlark.Value, error) {
			return stepRule(c, algorithms.NewRemoveNotFinite(c.Float("scaler"))), nil
		}},
	{Module: "blocks.algorithms", Name: "Restrict", Doc: "applies step_rule to variables only",
		Params: []classParam{{Name: "step_rule", Kind: argStepRule}, {Name: "variables"}},
		New: func(c *classCall) (starlark.Value, error) {
			vs, err := stepKeys(c.thread, "Restrict: variables", c.Value("variables"))
			if err != nil {
				return nil, err
			}
			return stepRule(c, algorithms.NewRestrict(c.Value("step_rule").(*StepRule).R, vs)), nil
		}},
}
