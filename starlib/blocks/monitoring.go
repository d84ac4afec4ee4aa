package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/monitoring"
)

// Module blocks.monitoring.aggregation: how a monitored variable is
// aggregated over the batches of an epoch (a variable without a scheme is
// averaged over batches, unweighted).
//
//	mean(numerator, denominator=1)   sum of numerator / sum of denominator over batches
//	take_last(variable)              the last batch's value
//	minimum(variable), maximum(variable)   elementwise over batches
//	concatenate(variable)            the batches' values stacked on a new first axis
//	perplexity(log_likelihood, n_examples)   exp(-sum(log_likelihood) / sum(n_examples))
//	MonitoredQuantity(requires, name, aggregate, initial=None, readout=None)
//	    a quantity computed in the script from the per-batch values of the variables
//	    `requires`: state = initial at the start of each epoch, state = aggregate(state,
//	    *values) per batch, readout(state) (or the state itself) is recorded. Put it among
//	    the variables of DataStreamMonitoring or TrainingDataMonitoring.
//	    As the base of a script class (Blocks' form, script_quantity.go):
//	    MonitoredQuantity.__init__(self, requires=None, name=None); the subclass defines
//	    initialize(self), aggregate(self, *values) and get_aggregated_value(self).
func monitoringModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.monitoring.aggregation", Members: starlark.StringDict{
		"mean":              starlib.NewBuiltin("mean", aggregationBuiltin),
		"take_last":         starlib.NewBuiltin("take_last", aggregationBuiltin),
		"minimum":           starlib.NewBuiltin("minimum", aggregationBuiltin),
		"maximum":           starlib.NewBuiltin("maximum", aggregationBuiltin),
		"concatenate":       starlib.NewBuiltin("concatenate", aggregationBuiltin),
		"perplexity":        starlib.NewBuiltin("perplexity", aggregationBuiltin),
		"MonitoredQuantity": monitoredQuantityClass(),
	}})
	return
}

func aggregationBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, c starlark.Value = nil, starlark.None
	var err error
	switch b.Name() {
	case "mean":
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "numerator", &a, "denominator?", &c)
	case "perplexity":
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "log_likelihood", &a, "n_examples", &c)
	default:
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "variable", &a)
	}
	if err != nil {
		return nil, err
	}
	x, err := starlib.AsVariable(thread, a)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	var y *core.Variable
	if b.Name() == "perplexity" && c == starlark.None {
		return nil, fmt.Errorf("%s: n_examples must be a variable or a number, got None", b.Name())
	}
	if c != starlark.None {
		if y, err = starlib.AsVariable(thread, c); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
	}
	var v *core.Variable
	switch b.Name() {
	case "mean":
		v = monitoring.MeanOf(x, y)
	case "perplexity":
		v = monitoring.PerplexityOf(x, y)
	case "take_last":
		v = monitoring.TakeLastOf(x)
	case "minimum":
		v = monitoring.MinimumOf(x)
	case "maximum":
		v = monitoring.MaximumOf(x)
	case "concatenate":
		v = monitoring.ConcatenateOf(x)
	}
	return starlib.NewVariable(thread, v), nil
}

// starlarkQuantity folds the per-batch values with Starlark functions.
type starlarkQuantity struct {
	thread             *starlark.Thread
	name               string
	initial            starlark.Value
	aggregate, readout starlark.Callable
	state              starlark.Value
}

func (q *starlarkQuantity) Initialize() error {
	q.state = q.initial
	return nil
}

func (q *starlarkQuantity) Aggregate(values []*nd.Array) error {
	args := starlark.Tuple{q.state}
	for _, v := range values {
		args = append(args, goValue(v))
	}
	s, err := starlark.Call(q.thread, q.aggregate, args, nil)
	if err != nil {
		return scriptError(err)
	}
	q.state = s
	return nil
}

func (q *starlarkQuantity) Readout() (*nd.Array, error) {
	v := q.state
	if q.readout != nil {
		r, err := starlark.Call(q.thread, q.readout, starlark.Tuple{q.state}, nil)
		if err != nil {
			return nil, scriptError(err)
		}
		v = r
	}
	a, err := starlib.ToArray(v, nil)
	if err != nil {
		return nil, fmt.Errorf("the value %s is not a number or an array: %v", v.Type(), err)
	}
	return a, nil
}

func monitoredQuantity(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var requires starlark.Value
	var name string
	var aggregate starlark.Callable
	var initial, readout starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "requires", &requires, "name", &name, "aggregate", &aggregate,
		"initial?", &initial, "readout?", &readout); err != nil {
		return nil, err
	}
	reqs, err := variablesOf(thread, "MonitoredQuantity: requires", requires)
	if err != nil {
		return nil, err
	}
	var ro starlark.Callable
	if readout != starlark.None {
		c, ok := readout.(starlark.Callable)
		if !ok {
			return nil, fmt.Errorf("MonitoredQuantity: readout must be a function, got %s", readout.Type())
		}
		ro = c
	}
	initial.Freeze() // the same start value every epoch
	q := &monitoring.MonitoredQuantity{Name: name, Requires: reqs, New: func() monitoring.QuantityAccumulator {
		return &starlarkQuantity{thread: thread, name: name, initial: initial, aggregate: aggregate, readout: ro}
	}}
	v, err := q.Variable()
	if err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, v), nil
}
