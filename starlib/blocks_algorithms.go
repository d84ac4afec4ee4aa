package starlib

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/algorithms"
)

// Step rules and UpdatesAlgorithm of blocks.algorithms, with Blocks'
// defaults:
//
//	BasicMomentum(momentum=0.)                          step = momentum*velocity + previous step
//	Momentum(learning_rate=1.0, momentum=0.)            [Scale, BasicMomentum]
//	AdaDelta(decay_rate=0.95, epsilon=1e-6)
//	BasicRMSProp(decay_rate=0.9, max_scaling=1e5)       step / max(rms, 1/max_scaling)
//	RMSProp(learning_rate=1.0, decay_rate=0.9, max_scaling=1e5)   [BasicRMSProp, Scale]
//	AdaGrad(learning_rate=0.002, epsilon=1e-6)
//	Adam(learning_rate=0.002, beta1=0.9, beta2=0.999, epsilon=1e-8, decay_factor=1)
//	StepClipping(threshold=None)                        rescales the whole step to norm <= threshold
//	VariableClipping(threshold, axis=None)              max-norm of each parameter after the update
//	RemoveNotFinite(scaler=1)                           a NaN/inf step becomes (1-scaler)*parameter
//	Restrict(step_rule, variables)                      applies step_rule to variables only
//	UpdatesAlgorithm(updates, on_unused_sources="raise")  applies updates with every batch
//
// Hyperparameters are attributes holding shared variables
// (adam.learning_rate.set_value(0.001), or SharedVariableModifier).
func init() {
	Extend("blocks.algorithms", starlark.StringDict{
		"BasicMomentum":    NewBuiltin("BasicMomentum", stepRuleBuiltin),
		"Momentum":         NewBuiltin("Momentum", stepRuleBuiltin),
		"AdaDelta":         NewBuiltin("AdaDelta", stepRuleBuiltin),
		"BasicRMSProp":     NewBuiltin("BasicRMSProp", stepRuleBuiltin),
		"RMSProp":          NewBuiltin("RMSProp", stepRuleBuiltin),
		"AdaGrad":          NewBuiltin("AdaGrad", stepRuleBuiltin),
		"Adam":             NewBuiltin("Adam", stepRuleBuiltin),
		"StepClipping":     NewBuiltin("StepClipping", stepRuleBuiltin),
		"VariableClipping": NewBuiltin("VariableClipping", stepRuleBuiltin),
		"RemoveNotFinite":  NewBuiltin("RemoveNotFinite", stepRuleBuiltin),
		"Restrict":         NewBuiltin("Restrict", stepRuleBuiltin),
		"UpdatesAlgorithm": NewBuiltin("UpdatesAlgorithm", updatesAlgorithm),
	})
}

func stepRuleBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name := b.Name()
	unpack := func(pairs ...any) error { return starlark.UnpackArgs(name, args, kwargs, pairs...) }
	attrs := map[string]*core.Variable{}
	var rule algorithms.StepRule
	switch name {
	case "BasicMomentum":
		m := FloatArg(0)
		if err := unpack("momentum?", &m); err != nil {
			return nil, err
		}
		r := algorithms.NewBasicMomentum(FloatX(thread), float64(m))
		rule, attrs["momentum"] = r, r.Momentum
	case "Momentum":
		lr, m := FloatArg(1), FloatArg(0)
		if err := unpack("learning_rate?", &lr, "momentum?", &m); err != nil {
			return nil, err
		}
		r := algorithms.NewMomentum(FloatX(thread), float64(lr), float64(m))
		rule, attrs["learning_rate"], attrs["momentum"] = r, r.LearningRate, r.Momentum
	case "AdaDelta":
		d, e := FloatArg(0.95), FloatArg(1e-6)
		if err := unpack("decay_rate?", &d, "epsilon?", &e); err != nil {
			return nil, err
		}
		r, err := algorithms.NewAdaDelta(FloatX(thread), float64(d), float64(e))
		if err != nil {
			return nil, err
		}
		rule, attrs["decay_rate"], attrs["epsilon"] = r, r.DecayRate, r.Epsilon
	case "BasicRMSProp", "RMSProp":
		lr, d, m := FloatArg(1), FloatArg(0.9), FloatArg(1e5)
		var err error
		if name == "RMSProp" {
			err = unpack("learning_rate?", &lr, "decay_rate?", &d, "max_scaling?", &m)
		} else {
			err = unpack("decay_rate?", &d, "max_scaling?", &m)
		}
		if err != nil {
			return nil, err
		}
		if name == "RMSProp" {
			r, err := algorithms.NewRMSProp(FloatX(thread), float64(lr), float64(d), float64(m))
			if err != nil {
				return nil, err
			}
			rule, attrs["learning_rate"], attrs["decay_rate"] = r, r.LearningRate, r.DecayRate
		} else {
			r, err := algorithms.NewBasicRMSProp(FloatX(thread), float64(d), float64(m))
			if err != nil {
				return nil, err
			}
			rule, attrs["decay_rate"] = r, r.DecayRate
		}
	case "AdaGrad":
		lr, e := FloatArg(0.002), FloatArg(1e-6)
		if err := unpack("learning_rate?", &lr, "epsilon?", &e); err != nil {
			return nil, err
		}
		r := algorithms.NewAdaGrad(FloatX(thread), float64(lr), float64(e))
		rule, attrs["learning_rate"], attrs["epsilon"] = r, r.LearningRate, r.Epsilon
	case "Adam":
		lr, b1, b2 := FloatArg(algorithms.AdamLearningRate), FloatArg(algorithms.AdamBeta1), FloatArg(algorithms.AdamBeta2)
		e, df := FloatArg(algorithms.AdamEpsilon), FloatArg(algorithms.AdamDecayFactor)
		if err := unpack("learning_rate?", &lr, "beta1?", &b1, "beta2?", &b2, "epsilon?", &e, "decay_factor?", &df); err != nil {
			return nil, err
		}
		r := algorithms.NewAdam(FloatX(thread), float64(lr), float64(b1), float64(b2), float64(e), float64(df))
		rule = r
		attrs["learning_rate"], attrs["beta1"], attrs["beta2"], attrs["epsilon"], attrs["decay_factor"] =
			r.LearningRate, r.Beta1, r.Beta2, r.Epsilon, r.DecayFactor
	case "StepClipping":
		var th starlark.Value = starlark.None
		if err := unpack("threshold?", &th); err != nil {
			return nil, err
		}
		var t *float64
		if th != starlark.None {
			f, ok := starlark.AsFloat(th)
			if !ok {
				return nil, fmt.Errorf("StepClipping: threshold must be a number or None, got %s", th.Type())
			}
			t = &f
		}
		r := algorithms.NewStepClipping(FloatX(thread), t)
		rule = r
		if r.Threshold != nil {
			attrs["threshold"] = r.Threshold
		}
	case "VariableClipping":
		var th FloatArg
		var axis starlark.Value = starlark.None
		if err := unpack("threshold", &th, "axis?", &axis); err != nil {
			return nil, err
		}
		var axes []int
		switch a := axis.(type) {
		case starlark.NoneType:
		case starlark.Int:
			n, _ := a.Int64()
			axes = []int{int(n)}
		case starlark.Indexable:
			for i := 0; i < a.Len(); i++ {
				var n int
				if err := starlark.AsInt(a.Index(i), &n); err != nil {
					return nil, fmt.Errorf("VariableClipping: axis must be an int or a sequence of ints, got %s", a.Index(i).Type())
				}
				axes = append(axes, n)
			}
		default:
			return nil, fmt.Errorf("VariableClipping: axis must be an int or a sequence of ints, got %s", axis.Type())
		}
		r, err := algorithms.NewVariableClipping(FloatX(thread), float64(th), axes)
		if err != nil {
			return nil, err
		}
		rule, attrs["threshold"] = r, r.Threshold
	case "RemoveNotFinite":
		s := FloatArg(1)
		if err := unpack("scaler?", &s); err != nil {
			return nil, err
		}
		rule = algorithms.NewRemoveNotFinite(float64(s))
	case "Restrict":
		var inner *StepRule
		var vars starlark.Value
		if err := unpack("step_rule", &inner, "variables", &vars); err != nil {
			return nil, err
		}
		vs, err := stepKeys(thread, "Restrict: variables", vars)
		if err != nil {
			return nil, err
		}
		rule = algorithms.NewRestrict(inner.R, vs)
	default:
		return nil, fmt.Errorf("unknown step rule %s", name)
	}
	return &StepRule{R: rule, name: name, attrs: attrs}, nil
}

func updatesAlgorithm(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var ups starlark.Value = starlark.NewList(nil)
	onUnused := "raise"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "updates?", &ups, "on_unused_sources?", &onUnused); err != nil {
		return nil, err
	}
	us, err := updatesOf(thread, ups)
	if err != nil {
		return nil, fmt.Errorf("UpdatesAlgorithm: updates: %v", err)
	}
	ua, err := algorithms.NewUpdatesAlgorithm(us, onUnused)
	if err != nil {
		return nil, err
	}
	ua.Warn = func(msg string) { thread.Print(thread, "WARNING: "+msg) }
	return &Algorithm{UA: ua}, nil
}
