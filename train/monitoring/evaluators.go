package monitoring

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/parallel"
)

// ValidateVariableNames returns an error unless every variable has a
// name and the names are unique (they become record names).
func ValidateVariableNames(variables []*core.Variable) error {
	var unnamed []string
	count := map[string]int{}
	var order []string
	for _, v := range variables {
		if v.Name == "" {
			unnamed = append(unnamed, v.String())
			continue
		}
		if count[v.Name] == 0 {
			order = append(order, v.Name)
		}
		count[v.Name]++
	}
	if len(unnamed) > 0 {
		return fmt.Errorf("variables must have names: %s", strings.Join(unnamed, ", "))
	}
	var dups []string
	for _, n := range order {
		if count[n] > 1 {
			dups = append(dups, n)
		}
	}
	if len(dups) > 0 {
		return fmt.Errorf("variables should have unique names. Duplicates: %s", strings.Join(dups, ", "))
	}
	return nil
}

// dependsOnData reports whether v has a data input among its ancestors
// (ComputationGraph.has_inputs).
func dependsOnData(v *core.Variable) bool {
	for _, a := range core.Ancestors([]*core.Variable{v}) {
		if a.IsInput() {
			return true
		}
	}
	return false
}

// AggregationBuffer aggregates the values of variables over batches
// (Blocks' AggregationBuffer). Each variable is aggregated by the scheme in
// its Tag.Aggregation or, without one, by Mean(v, 1) when it depends on
// data. A variable that does not depend on data is, without a scheme,
// computed once at readout, or, with useTakeLast, taken from the last
// batch (TakeLast).
//
// Whoever computes the batches (an evaluator's function, the training
// function) computes Requires for each batch and passes their values to
// Aggregate.
type AggregationBuffer struct {
	variables   []*core.Variable
	names       []string
	useTakeLast bool

	aggs     []Aggregator // nil for a variable computed at readout
	requires []*core.Variable
	reqIdx   [][]int // per aggregator: index into requires, or -1 for a constant
	scratch  [][]*nd.Array

	readoutVars []*core.Variable
	readoutIdx  []int // variable index of each readout var
	readoutFn   *core.Function

	initialized bool
}

// NewAggregationBuffer makes the aggregators of variables, whose names
// must be set and unique. The readout of the variables that do not depend
// on data is compiled for dev (the zero Device is the CPU).
func NewAggregationBuffer(dev device.Device, variables []*core.Variable, useTakeLast bool) (*AggregationBuffer, error) {
	if err := ValidateVariableNames(variables); err != nil {
		return nil, err
	}
	b := &AggregationBuffer{variables: slices.Clone(variables), useTakeLast: useTakeLast}
	reqPos := map[*core.Variable]int{}
	for i, v := range variables {
		b.names = append(b.names, v.Name)
		var scheme Scheme
		switch s := v.Tag.Aggregation.(type) {
		case nil:
			switch {
			case dependsOnData(v):
				scheme = &Mean{v, oneLike(v)}
			case useTakeLast:
				scheme = &TakeLast{v}
			}
		case Scheme:
			scheme = s
		default:
			return nil, fmt.Errorf("variable %s has the aggregation scheme %T, which is not a monitoring.Scheme", v, v.Tag.Aggregation)
		}
		if scheme == nil {
			b.aggs = append(b.aggs, nil)
			b.reqIdx = append(b.reqIdx, nil)
			b.scratch = append(b.scratch, nil)
			b.readoutVars = append(b.readoutVars, v)
			b.readoutIdx = append(b.readoutIdx, i)
			continue
		}
		agg := scheme.NewAggregator()
		var idx []int
		for _, r := range agg.Requires() {
			if r.IsConstant() {
				idx = append(idx, -1)
				continue
			}
			p, ok := reqPos[r]
			if !ok {
				p = len(b.requires)
				reqPos[r] = p
				b.requires = append(b.requires, r)
			}
			idx = append(idx, p)
		}
		b.aggs = append(b.aggs, agg)
		b.reqIdx = append(b.reqIdx, idx)
		b.scratch = append(b.scratch, make([]*nd.Array, len(idx)))
	}
	if len(b.readoutVars) > 0 {
		fn, err := core.CompileFor(dev, nil, b.readoutVars, nil)
		if err != nil {
			return nil, fmt.Errorf("compiling the readout of data-independent variables: %w", err)
		}
		b.readoutFn = fn
	}
	return b, nil
}

// Names are the variables' names (the record names before any prefix), in
// order.
func (b *AggregationBuffer) Names() []string { return slices.Clone(b.names) }

// Variables are the aggregated variables.
func (b *AggregationBuffer) Variables() []*core.Variable { return slices.Clone(b.variables) }

// Requires are the variables whose values Aggregate takes for each batch,
// without duplicates or constants.
func (b *AggregationBuffer) Requires() []*core.Variable { return slices.Clone(b.requires) }

// Inputs are the data inputs Requires depend on, in core.Ancestors order.
func (b *AggregationBuffer) Inputs() []*core.Variable {
	var in []*core.Variable
	for _, v := range core.Ancestors(b.requires) {
		if v.IsInput() {
			in = append(in, v)
		}
	}
	return in
}

// InitializeAggregators forgets all aggregated batches.
func (b *AggregationBuffer) InitializeAggregators() {
	b.initialized = true
	for _, a := range b.aggs {
		if a != nil {
			a.Initialize()
		}
	}
}

// Aggregate adds one batch; values are those of Requires, in order.
func (b *AggregationBuffer) Aggregate(values []*nd.Array) error {
	if len(values) != len(b.requires) {
		return fmt.Errorf("aggregation buffer takes %d values per batch, got %d", len(b.requires), len(values))
	}
	for k, a := range b.aggs {
		if a == nil {
			continue
		}
		vals := b.scratch[k]
		reqs := a.Requires()
		for j, p := range b.reqIdx[k] {
			if p < 0 {
				vals[j] = reqs[j].Value()
			} else {
				vals[j] = values[p]
			}
		}
		if err := a.Aggregate(vals); err != nil {
			return err
		}
	}
	return nil
}

// GetAggregatedValues reads the aggregated values out, by variable name.
// Data-independent variables without a scheme are computed now.
func (b *AggregationBuffer) GetAggregatedValues() (map[string]*nd.Array, error) {
	if !b.initialized {
		return nil, errors.New("to readout you must first initialize, then process batches")
	}
	out := make(map[string]*nd.Array, len(b.names))
	if b.readoutFn != nil {
		vals, err := b.readoutFn.Call(nil)
		if err != nil {
			return nil, err
		}
		for k, i := range b.readoutIdx {
			out[b.names[i]] = vals[k]
		}
	}
	for i, a := range b.aggs {
		if a == nil {
			continue
		}
		v, err := a.Readout()
		if err != nil {
			return nil, err
		}
		out[b.names[i]] = v
	}
	return out, nil
}

// DatasetEvaluator computes variables over a whole epoch of a data stream
// (Blocks' DatasetEvaluator): one compiled function computes, for each
// batch, everything the aggregators need (plus the optional updates);
// variables that do not depend on data are computed once, at readout.
// Batch sources feed the input variables of the same name; sources no
// input needs are ignored.
type DatasetEvaluator struct {
	buffer  *AggregationBuffer
	updates []core.Update
	inputs  []*core.Variable
	fn      *core.Function
	args    []*nd.Array
	comm    parallel.Comm // see SetComm
	random  bool          // the evaluation draws random numbers
}

// NewDatasetEvaluator compiles the evaluation of variables (named, with
// unique names) for dev (the zero Device is the CPU). updates, rarely
// needed, are made with every batch.
func NewDatasetEvaluator(dev device.Device, variables []*core.Variable, updates []core.Update) (*DatasetEvaluator, error) {
	buf, err := NewAggregationBuffer(dev, variables, false)
	if err != nil {
		return nil, err
	}
	e := &DatasetEvaluator{buffer: buf, updates: slices.Clone(updates)}
	if len(buf.requires) > 0 {
		roots := slices.Clone(buf.requires)
		for _, u := range updates {
			roots = append(roots, u.Value)
		}
		for _, v := range core.Ancestors(roots) {
			if v.IsInput() {
				e.inputs = append(e.inputs, v)
			}
		}
		if err := algorithms.CheckInputNames(e.inputs); err != nil {
			return nil, err
		}
		fn, err := core.CompileFor(dev, e.inputs, buf.requires, updates)
		if err != nil {
			return nil, fmt.Errorf("compiling the monitoring function: %w", err)
		}
		e.fn = fn
		e.random = len(core.RandomOps(roots)) > 0
	}
	return e, nil
}

// Names are the variables' names, in order.
func (e *DatasetEvaluator) Names() []string { return e.buffer.Names() }

// Inputs are the data inputs the evaluation needs (nil when nothing
// depends on data).
func (e *DatasetEvaluator) Inputs() []*core.Variable { return slices.Clone(e.inputs) }

// InitializeAggregators starts a new evaluation.
func (e *DatasetEvaluator) InitializeAggregators() { e.buffer.InitializeAggregators() }

// ProcessBatch aggregates one batch.
func (e *DatasetEvaluator) ProcessBatch(batch map[string]*nd.Array) error {
	if e.fn == nil {
		return nil
	}
	args, err := algorithms.MatchSources(e.inputs, batch, algorithms.UnusedSourcesIgnore, "monitoring", e.args, nil)
	if err != nil {
		return err
	}
	e.args = args
	vals, err := e.fn.Call(args)
	if err != nil {
		return algorithms.ExplainInputError(err, e.inputs, args)
	}
	return e.buffer.Aggregate(vals)
}

// GetAggregatedValues reads the values out, by variable name.
func (e *DatasetEvaluator) GetAggregatedValues() (map[string]*nd.Array, error) {
	return e.buffer.GetAggregatedValues()
}

// Evaluate computes the variables over one epoch of stream and returns
// their values by name. When nothing depends on data the stream is not
// read.
func (e *DatasetEvaluator) Evaluate(stream fuel.Stream) (map[string]*nd.Array, error) {
	if e.split() {
		return e.evaluateSplit(stream)
	}
	e.InitializeAggregators()
	if e.fn != nil {
		it, err := stream.GetEpochIterator()
		if err != nil {
			return nil, err
		}
		fuel.Lend(it) // each batch is released once evaluated
		sources := stream.Sources()
		for {
			data, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			batch, err := BatchMap(sources, data)
			if err != nil {
				return nil, err
			}
			if err := e.ProcessBatch(batch); err != nil {
				return nil, err
			}
			for _, a := range data {
				a.Release() // evaluated: lent buffers go back to the stream
			}
		}
	}
	return e.GetAggregatedValues()
}

// BatchMap pairs a stream's sources with one item of its epoch iterator
// (Fuel's get_epoch_iterator(as_dict=True)).
func BatchMap(sources []string, data []*nd.Array) (map[string]*nd.Array, error) {
	if len(data) != len(sources) {
		return nil, fmt.Errorf("the stream gave %d arrays for %d sources %v", len(data), len(sources), sources)
	}
	m := make(map[string]*nd.Array, len(sources))
	for i, s := range sources {
		m[s] = data[i]
	}
	return m, nil
}
