package extensions

import (
	"fmt"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/monitoring"
)

// Separator joins prefix, name and suffix of a record name.
const Separator = "_"

// RecordName is Blocks' MonitoringExtension._record_name: prefix, name
// and suffix joined by "_", leaving out an empty prefix or suffix.
func RecordName(prefix, name, suffix string) string {
	var parts []string
	for _, p := range []string{prefix, name, suffix} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, Separator)
}

func addRecords(log *mainloop.TrainingLog, prefix, suffix string, names []string, values map[string]*nd.Array) error {
	row := log.CurrentRow()
	for _, n := range names {
		if n == "" {
			return fmt.Errorf("monitor variable without name")
		}
		row[RecordName(prefix, n, suffix)] = values[n]
	}
	return nil
}

// DataStreamMonitoring computes variables over one epoch of a data stream
// and records them as prefix_name_suffix (Blocks' DataStreamMonitoring).
// Defaults: before_first_epoch and after_epoch.
type DataStreamMonitoring struct {
	*SimpleExtension
	Prefix, Suffix string
	DataStream     fuel.Stream
	Evaluator      *monitoring.DatasetEvaluator
}

// DataStreamMonitoringDefaults are DataStreamMonitoring's default
// triggers.
var DataStreamMonitoringDefaults = Triggers{TriggerBeforeFirstEpoch: true, TriggerAfterEpoch: true}

// NewDataStreamMonitoring returns Blocks' DataStreamMonitoring(variables,
// data_stream, updates, prefix=, suffix=, **triggers), its evaluation
// compiled for dev (the zero Device is the CPU). updates may be nil; an
// empty prefix or suffix is none.
func NewDataStreamMonitoring(dev device.Device, variables []*core.Variable, dataStream fuel.Stream, updates []core.Update, prefix, suffix string, triggers Triggers) (*DataStreamMonitoring, error) {
	ev, err := monitoring.NewDatasetEvaluator(dev, variables, updates)
	if err != nil {
		return nil, fmt.Errorf("DataStreamMonitoring: %w", err)
	}
	d := &DataStreamMonitoring{Prefix: prefix, Suffix: suffix, DataStream: dataStream, Evaluator: ev}
	se, err := newSimple("DataStreamMonitoring", d.do, triggers, DataStreamMonitoringDefaults)
	if err != nil {
		return nil, err
	}
	d.SimpleExtension = se
	return d, nil
}

func (d *DataStreamMonitoring) do(c Call) error {
	values, err := d.Evaluator.Evaluate(d.DataStream)
	if err != nil {
		return fmt.Errorf("DataStreamMonitoring: %w", err)
	}
	return addRecords(c.MainLoop.Log, d.Prefix, d.Suffix, d.Evaluator.Names(), values)
}

// OutputsAdder is a training algorithm that can compute extra outputs in
// its training function and hand them over after each batch
// (algorithms.GradientDescent). TrainingDataMonitoring needs one.
type OutputsAdder interface {
	AddOutputs(outputs []*core.Variable, receive func(values []*nd.Array) error) error
}

// TrainingDataMonitoring monitors variables on the training batches,
// computed in the training step itself (before the parameter update, with
// no second forward pass), and aggregated over the batches since it last
// recorded (Blocks' TrainingDataMonitoring). Variables that do not depend
// on data are recorded as their value at the last batch.
//
// Its default trigger is before_training only, where it hooks into the
// algorithm; give it the triggers at which to record, e.g.
// {"after_batch": true} or {"after_epoch": true}.
type TrainingDataMonitoring struct {
	*SimpleExtension
	Prefix, Suffix string
	Buffer         *monitoring.AggregationBuffer
}

const justAggregate = "just_aggregate"

// NewTrainingDataMonitoring returns Blocks' TrainingDataMonitoring(
// variables, prefix=, suffix=, **triggers). The variables are computed by
// the training function, on the algorithm's device; those that do not
// depend on data are read out by a function compiled for dev (the zero
// Device is the CPU).
func NewTrainingDataMonitoring(dev device.Device, variables []*core.Variable, prefix, suffix string, triggers Triggers) (*TrainingDataMonitoring, error) {
	buf, err := monitoring.NewAggregationBuffer(dev, variables, true)
	if err != nil {
		return nil, fmt.Errorf("TrainingDataMonitoring: %w", err)
	}
	t := &TrainingDataMonitoring{Prefix: prefix, Suffix: suffix, Buffer: buf}
	se, err := newSimple("TrainingDataMonitoring", t.do, triggers, Triggers{TriggerBeforeTraining: true})
	if err != nil {
		return nil, err
	}
	if err := se.AddCondition([]mainloop.Callback{mainloop.AfterBatch}, nil, justAggregate); err != nil {
		return nil, err
	}
	t.SimpleExtension = se
	return t, nil
}

var _ mainloop.StatefulExtension = (*TrainingDataMonitoring)(nil)

// CheckpointState is the partial aggregates of the batches since the last
// record, which a checkpoint taken mid-epoch saves.
func (t *TrainingDataMonitoring) CheckpointState() ([][]*nd.Array, error) {
	return t.Buffer.State()
}

// RestoreCheckpointState puts back what CheckpointState gave.
func (t *TrainingDataMonitoring) RestoreCheckpointState(state [][]*nd.Array) error {
	return t.Buffer.SetState(state)
}

func (t *TrainingDataMonitoring) do(c Call) error {
	if c.Callback == mainloop.BeforeTraining {
		alg, ok := c.MainLoop.Algorithm.(OutputsAdder)
		if !ok {
			return fmt.Errorf("TrainingDataMonitoring needs an algorithm that computes extra outputs with each batch (such as GradientDescent), got %T", c.MainLoop.Algorithm)
		}
		if err := alg.AddOutputs(t.Buffer.Requires(), t.Buffer.Aggregate); err != nil {
			return fmt.Errorf("TrainingDataMonitoring: %w", err)
		}
		t.Buffer.InitializeAggregators()
		return nil
	}
	if len(c.Args) == 1 && c.Args[0] == justAggregate {
		// The aggregation itself happens in the algorithm's hook.
		return nil
	}
	values, err := t.Buffer.GetAggregatedValues()
	if err != nil {
		return fmt.Errorf("TrainingDataMonitoring: %w", err)
	}
	if err := addRecords(c.MainLoop.Log, t.Prefix, t.Suffix, t.Buffer.Names(), values); err != nil {
		return err
	}
	t.Buffer.InitializeAggregators()
	return nil
}
