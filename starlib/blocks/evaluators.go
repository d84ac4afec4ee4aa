package blocks

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
	"github.com/blocks-go/blocks/train/monitoring"
)

// Blocks' aggregation scheme classes, added to blocks.monitoring.aggregation
// (set one as var.tag.aggregation_scheme; the lower-case functions return a
// tagged variable instead):
//
//	Mean(numerator, denominator)       sum of numerator / sum of denominator over batches
//	Perplexity(numerator, denominator) exp(-sum(numerator) / sum(denominator))
//	TakeLast(variable)                 the last batch's value
//	Minimum(variable), Maximum(variable)   elementwise over batches
//	Concatenate(variable)              the batches' values stacked on a new first axis
//
// Module blocks.monitoring.evaluators:
//
//	DatasetEvaluator(variables, updates=None)
//	    evaluate(data_stream) -> {name: value} over one epoch of data_stream, each
//	    variable aggregated by its scheme (the mean over batches without one);
//	    initialize_aggregators(), process_batch(batch), get_aggregated_values()
//	AggregationBuffer(variables, use_take_last=False)
//	    the aggregators of named variables (names unique): variable_names,
//	    initialize_aggregators(), get_aggregated_values()
func evaluatorsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.monitoring.aggregation", Members: starlark.StringDict{
		"Mean":        starlib.NewBuiltin("Mean", newAggregationScheme),
		"Perplexity":  starlib.NewBuiltin("Perplexity", newAggregationScheme),
		"TakeLast":    starlib.NewBuiltin("TakeLast", newAggregationScheme),
		"Minimum":     starlib.NewBuiltin("Minimum", newAggregationScheme),
		"Maximum":     starlib.NewBuiltin("Maximum", newAggregationScheme),
		"Concatenate": starlib.NewBuiltin("Concatenate", newAggregationScheme),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.monitoring.evaluators", Members: starlark.StringDict{
		"DatasetEvaluator":  starlib.NewBuiltin("DatasetEvaluator", newDatasetEvaluator),
		"AggregationBuffer": starlib.NewBuiltin("AggregationBuffer", newAggregationBuffer),
	}})
	return
}

// AggregationScheme is one of Blocks' aggregation schemes as a Starlark
// value.
type AggregationScheme struct {
	S     monitoring.Scheme
	class string
}

func (a *AggregationScheme) String() string       { return "<" + a.class + " aggregation scheme>" }
func (a *AggregationScheme) Type() string         { return a.class }
func (a *AggregationScheme) Freeze()              {}
func (a *AggregationScheme) Truth() starlark.Bool { return true }

func newAggregationScheme(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	var err error
	switch b.Name() {
	case "Mean", "Perplexity":
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "numerator", &x, "denominator", &y)
	default:
		err = starlark.UnpackArgs(b.Name(), args, kwargs, "variable", &x)
	}
	if err != nil {
		return nil, err
	}
	vs, err := starlib.Variables(thread, b.Name(), []string{"numerator", "denominator"}, x)
	if err != nil {
		return nil, err
	}
	v := vs[0]
	var s monitoring.Scheme
	switch b.Name() {
	case "Mean", "Perplexity":
		d, err := starlib.AsVariable(thread, y)
		if err != nil {
			return nil, fmt.Errorf("%s: for parameter denominator: %v", b.Name(), err)
		}
		if b.Name() == "Mean" {
			s = &monitoring.Mean{Numerator: v, Denominator: d}
		} else {
			s = &monitoring.Perplexity{Numerator: v, Denominator: d}
		}
	case "TakeLast":
		s = &monitoring.TakeLast{Variable: v}
	case "Minimum":
		s = &monitoring.Minimum{Variable: v}
	case "Maximum":
		s = &monitoring.Maximum{Variable: v}
	case "Concatenate":
		s = &monitoring.Concatenate{Variable: v}
	}
	return &AggregationScheme{S: s, class: b.Name()}, nil
}

// schemeValue is a variable's Tag.Aggregation as a Starlark value.
func schemeValue(x any) (starlark.Value, bool) {
	s, ok := x.(monitoring.Scheme)
	if !ok {
		return nil, false
	}
	class := fmt.Sprintf("%T", s)
	switch s.(type) {
	case *monitoring.Mean:
		class = "Mean"
	case *monitoring.Perplexity:
		class = "Perplexity"
	case *monitoring.TakeLast:
		class = "TakeLast"
	case *monitoring.Minimum:
		class = "Minimum"
	case *monitoring.Maximum:
		class = "Maximum"
	case *monitoring.Concatenate:
		class = "Concatenate"
	case *monitoring.MonitoredQuantity:
		class = "MonitoredQuantity"
	}
	return &AggregationScheme{S: s, class: class}, true
}

// aggregatedValues converts an evaluation's values to a dict, in the
// order of names.
func aggregatedValues(names []string, vals map[string]*nd.Array) *starlark.Dict {
	d := starlark.NewDict(len(vals))
	seen := map[string]bool{}
	for _, n := range names {
		if a, ok := vals[n]; ok && !seen[n] {
			seen[n] = true
			_ = d.SetKey(starlark.String(n), goValue(a))
		}
	}
	var rest []string
	for n := range vals {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		_ = d.SetKey(starlark.String(n), goValue(vals[n]))
	}
	return d
}

// DatasetEvaluator is Blocks' DatasetEvaluator as a Starlark value.
type DatasetEvaluator struct{ E *monitoring.DatasetEvaluator }

func (e *DatasetEvaluator) String() string       { return "<DatasetEvaluator>" }
func (e *DatasetEvaluator) Type() string         { return "DatasetEvaluator" }
func (e *DatasetEvaluator) Freeze()              {}
func (e *DatasetEvaluator) Truth() starlark.Bool { return true }
func (e *DatasetEvaluator) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable: DatasetEvaluator")
}

func newDatasetEvaluator(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var vars, updates starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "variables", &vars, "updates?", &updates); err != nil {
		return nil, err
	}
	vs, err := monitoredVariablesOf(thread, b.Name()+": variables", vars)
	if err != nil {
		return nil, err
	}
	var us []core.Update
	if updates != starlark.None {
		if us, err = updatesOf(thread, updates); err != nil {
			return nil, fmt.Errorf("%s: updates: %v", b.Name(), err)
		}
	}
	e, err := monitoring.NewDatasetEvaluator(starlib.Device(thread), vs, us)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return &DatasetEvaluator{E: e}, nil
}

// AttrNames lists the evaluator's methods.
func (e *DatasetEvaluator) AttrNames() []string {
	return []string{"evaluate", "get_aggregated_values", "initialize_aggregators", "process_batch"}
}

// Attr returns a method.
func (e *DatasetEvaluator) Attr(name string) (starlark.Value, error) {
	var fn starlib.BuiltinFunc
	switch name {
	case "evaluate":
		fn = func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var s *starfuel.Stream
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data_stream", &s); err != nil {
				return nil, err
			}
			vals, err := e.E.Evaluate(s.S)
			if err != nil {
				return nil, fmt.Errorf("evaluate: %w", err)
			}
			return aggregatedValues(e.E.Names(), vals), nil
		}
	case "initialize_aggregators":
		fn = func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			e.E.InitializeAggregators()
			return starlark.None, nil
		}
	case "process_batch":
		fn = func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var d *starlark.Dict
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "batch", &d); err != nil {
				return nil, err
			}
			batch := map[string]*nd.Array{}
			for _, it := range d.Items() {
				k, ok := starlark.AsString(it[0])
				if !ok {
					return nil, fmt.Errorf("process_batch: batch keys are source names, got %s", it[0].Type())
				}
				a, err := starlib.ToArray(it[1], nil)
				if err != nil {
					return nil, fmt.Errorf("process_batch: %s: %v", k, err)
				}
				batch[k] = a
			}
			if err := e.E.ProcessBatch(batch); err != nil {
				return nil, fmt.Errorf("process_batch: %w", err)
			}
			return starlark.None, nil
		}
	case "get_aggregated_values":
		fn = func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			vals, err := e.E.GetAggregatedValues()
			if err != nil {
				return nil, fmt.Errorf("get_aggregated_values: %w", err)
			}
			return aggregatedValues(e.E.Names(), vals), nil
		}
	default:
		return nil, nil
	}
	return starlib.NewBuiltin(name, fn).BindReceiver(e), nil
}

// AggregationBuffer is Blocks' AggregationBuffer as a Starlark value.
type AggregationBuffer struct{ B *monitoring.AggregationBuffer }

func (a *AggregationBuffer) String() string       { return "<AggregationBuffer>" }
func (a *AggregationBuffer) Type() string         { return "AggregationBuffer" }
func (a *AggregationBuffer) Freeze()              {}
func (a *AggregationBuffer) Truth() starlark.Bool { return true }
func (a *AggregationBuffer) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable: AggregationBuffer")
}

func newAggregationBuffer(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var vars starlark.Value
	takeLast := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "variables", &vars, "use_take_last?", &takeLast); err != nil {
		return nil, err
	}
	vs, err := monitoredVariablesOf(thread, b.Name()+": variables", vars)
	if err != nil {
		return nil, err
	}
	buf, err := monitoring.NewAggregationBuffer(starlib.Device(thread), vs, takeLast)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return &AggregationBuffer{B: buf}, nil
}

// AttrNames lists the buffer's attributes.
func (a *AggregationBuffer) AttrNames() []string {
	return []string{"get_aggregated_values", "initialize_aggregators", "variable_names"}
}

// Attr returns an attribute.
func (a *AggregationBuffer) Attr(name string) (starlark.Value, error) {
	switch name {
	case "variable_names":
		return starlib.StringList(a.B.Names()), nil
	case "initialize_aggregators":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			a.B.InitializeAggregators()
			return starlark.None, nil
		}).BindReceiver(a), nil
	case "get_aggregated_values":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			vals, err := a.B.GetAggregatedValues()
			if err != nil {
				return nil, fmt.Errorf("get_aggregated_values: %w", err)
			}
			return aggregatedValues(a.B.Names(), vals), nil
		}).BindReceiver(a), nil
	}
	return nil, nil
}
