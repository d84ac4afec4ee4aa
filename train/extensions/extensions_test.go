package extensions

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/monitoring"
)

// memStream is a fuel.Stream over in-memory arrays: batches of batchSize
// examples in order (the last one short), or single examples when
// batchSize is 0.
type memStream struct {
	sources   []string
	data      []*nd.Array
	batchSize int
}

func (s *memStream) Sources() []string               { return s.sources }
func (s *memStream) AxisLabels() map[string][]string { return nil }
func (s *memStream) ProducesExamples() bool          { return s.batchSize == 0 }
func (s *memStream) GetEpochIterator() (fuel.EpochIterator, error) {
	return &memIterator{s: s}, nil
}

type memIterator struct {
	s   *memStream
	pos int
}

func (it *memIterator) Next() ([]*nd.Array, error) {
	n := it.s.data[0].Shape[0]
	if it.pos >= n {
		return nil, io.EOF
	}
	out := make([]*nd.Array, len(it.s.data))
	if it.s.batchSize == 0 {
		for i, a := range it.s.data {
			row := a.Slice(it.pos, it.pos+1).Copy()
			out[i], _ = row.Reshape(a.Shape[1:]...)
		}
		it.pos++
		return out, nil
	}
	stop := min(it.pos+it.s.batchSize, n)
	for i, a := range it.s.data {
		out[i] = a.Slice(it.pos, stop).Copy()
	}
	it.pos = stop
	return out, nil
}

func rangeStream(n, batchSize int) *memStream {
	a := nd.New(nd.Float32, n)
	for i := range n {
		a.F32()[i] = float32(i)
	}
	return &memStream{sources: []string{"data"}, data: []*nd.Array{a}, batchSize: batchSize}
}

type nopAlgorithm struct{}

func (nopAlgorithm) Initialize() error                       { return nil }
func (nopAlgorithm) ProcessBatch(map[string]*nd.Array) error { return nil }

// recordAfterBatch writes name=value to the row after each batch.
type recordAfterBatch struct {
	mainloop.TrainingExtension
	name  string
	value func(m *mainloop.MainLoop) any
}

func (r *recordAfterBatch) AfterBatch(mainloop.Batch) error {
	m, _ := r.MainLoop()
	m.Log.CurrentRow()[r.name] = r.value(m)
	return nil
}

// must panics on err: constructors in these tests are not expected to fail.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestPrintingFormat(t *testing.T) {
	var out bytes.Buffer
	cost := &recordAfterBatch{name: "cost", value: func(m *mainloop.MainLoop) any {
		return nd.Scalar(nd.Float32, 0.25*float64(m.Status().IterationsDone))
	}}
	hidden := &recordAfterBatch{name: "_hidden", value: func(*mainloop.MainLoop) any { return 1 }}
	m := mainloop.New(nopAlgorithm{}, rangeStream(2, 0), nil, nil, []mainloop.Extension{
		cost, hidden,
		must(NewFinishAfter(Triggers{"after_n_epochs": 1})),
		must(NewPrinting(&out, nil)),
	})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	dashes := strings.Repeat("-", 79)
	status := func(started, epochs, iters int, first bool) string {
		return "Training status:\n" +
			"\t batch_interrupt_received: False\n" +
			"\t epoch_interrupt_received: False\n" +
			"\t epoch_started: " + map[bool]string{true: "True", false: "False"}[started == 1] + "\n" +
			"\t epochs_done: " + string(rune('0'+epochs)) + "\n" +
			"\t iterations_done: " + string(rune('0'+iters)) + "\n" +
			"\t received_first_batch: " + map[bool]string{true: "True", false: "False"}[first] + "\n" +
			"\t resumed_from: None\n" +
			"\t training_started: True\n"
	}
	want := "\n" + dashes + "\nBEFORE FIRST EPOCH\n" + dashes + "\n" +
		status(1, 0, 0, false) +
		"Log records from the iteration 0:\n" +
		"\n" +
		"\n" + dashes + "\nAFTER ANOTHER EPOCH\n" + dashes + "\n" +
		status(0, 1, 2, true) +
		"Log records from the iteration 2:\n" +
		"\t cost: 0.5\n" +
		"\t training_finish_requested: True\n" +
		"\n" +
		"\n" + dashes + "\nTRAINING HAS BEEN FINISHED:\n" + dashes + "\n" +
		status(0, 1, 2, true) +
		"Log records from the iteration 2:\n" +
		"\t cost: 0.5\n" +
		"\t training_finish_requested: True\n" +
		"\t training_finished: True\n" +
		"\n"
	if out.String() != want {
		t.Errorf("Printing wrote\n%s\nwant\n%s", out.String(), want)
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{nil, "None"}, {true, "True"}, {3, "3"}, {1.0, "1.0"}, {0.1, "0.1"}, {1e-5, "1e-05"},
		{1e16, "1e+16"}, {123456789.0, "123456789.0"}, {float32(0.1), "0.1"}, {math.NaN(), "nan"},
		{[]int{10, 20}, "[10, 20]"}, {"path.tar", "path.tar"}, {[]any{"a", 1}, "['a', 1]"},
		{nd.Scalar(nd.Float32, 2.5), "2.5"},
		// Blocks' log takes any value: a batch dict, tuples, as Python prints them.
		{mainloop.Dict{Keys: []any{"data", 2}, Values: []any{3, mainloop.Tuple{"a"}}}, "{'data': 3, 2: ('a',)}"},
		{mainloop.Tuple{1, 0.5}, "(1, 0.5)"},
	}
	for _, c := range cases {
		if got := FormatValue(c.v); got != c.want {
			t.Errorf("FormatValue(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// counter counts the calls of Do by callback and records the iteration.
func counter(t *testing.T, triggers Triggers) (*SimpleExtension, *[]string) {
	var calls []string
	var e *SimpleExtension
	e = must(NewSimpleExtension("counter", func(c Call) error {
		calls = append(calls, string(c.Callback)+"@"+itoa(c.MainLoop.Status().IterationsDone))
		return nil
	}, triggers))
	return e, &calls
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestTriggers(t *testing.T) {
	cases := []struct {
		triggers Triggers
		want     []string
	}{
		{Triggers{"every_n_batches": 3}, []string{"after_batch@3", "after_batch@6", "after_batch@9", "after_batch@12"}},
		{Triggers{"after_n_batches": 5}, []string{"after_batch@5"}},
		{Triggers{"before_first_epoch": true}, []string{"before_epoch@0"}},
		{Triggers{"before_epoch": true}, []string{"before_epoch@0", "before_epoch@4", "before_epoch@8"}},
		{Triggers{"every_n_epochs": 2, "after_n_epochs": 1}, []string{"after_epoch@4", "after_epoch@8"}},
		{Triggers{"before_training": true, "after_training": true, "after_n_batches": 0, "after_epoch": false},
			[]string{"before_training@0", "after_training@12"}},
	}
	for _, c := range cases {
		ext, calls := counter(t, c.triggers)
		m := mainloop.New(nopAlgorithm{}, rangeStream(4, 0), nil, nil, []mainloop.Extension{
			ext, must(NewFinishAfter(Triggers{"after_n_epochs": 3}))})
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*calls, c.want) {
			t.Errorf("%v: calls %v, want %v", c.triggers, *calls, c.want)
		}
	}
	if _, err := NewSimpleExtension("x", nil, Triggers{"after_n_epoch": 2}); err == nil || !strings.Contains(err.Error(), "invalid condition: after_n_epoch") {
		t.Errorf("bad trigger: %v", err)
	}
	if _, err := NewSimpleExtension("x", nil, Triggers{"every_n_batches": true}); err == nil {
		t.Error("bool for an integer trigger: no error")
	}
	// Defaults can be switched off.
	p := must(NewPrinting(io.Discard, Triggers{"after_epoch": false}))
	if len(p.conditions) != 4 {
		t.Errorf("Printing with after_epoch=False has %d conditions", len(p.conditions))
	}
}

func TestAddConditionWithArguments(t *testing.T) {
	var got [][]any
	ext := must(NewSimpleExtension("x", func(c Call) error {
		got = append(got, c.Args)
		if c.Batch == nil {
			t.Error("after_batch without the batch")
		}
		return nil
	}, nil))
	if err := ext.AddCondition([]mainloop.Callback{mainloop.AfterBatch}, func(l *mainloop.TrainingLog) bool {
		return l.Status.IterationsDone == 2
	}, "a", 1); err != nil {
		t.Fatal(err)
	}
	if err := ext.AddCondition([]mainloop.Callback{"before_frist_epoch"}, nil); err == nil {
		t.Error("invalid callback name: no error")
	}
	m := mainloop.New(nopAlgorithm{}, rangeStream(3, 0), nil, nil, []mainloop.Extension{ext, must(NewFinishAfter(Triggers{"after_epoch": true}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, [][]any{{"a", 1}}) {
		t.Errorf("calls %v", got)
	}
	if n := len(ext.Conditions()); n != 1 {
		t.Errorf("%d conditions, want 1", n)
	}
}

// before_first_epoch, as a callback name of AddCondition, is before_epoch
// while no epoch is done (Blocks accepts the name).
func TestAddConditionBeforeFirstEpoch(t *testing.T) {
	var epochs []int
	ext := must(NewSimpleExtension("x", func(c Call) error {
		if c.Callback != mainloop.BeforeEpoch {
			t.Errorf("ran in %s", c.Callback)
		}
		epochs = append(epochs, c.MainLoop.Log.Status.EpochsDone)
		return nil
	}, nil))
	if err := ext.AddCondition([]mainloop.Callback{"before_first_epoch", "before_epoch"}, nil); err != nil {
		t.Fatal(err)
	}
	m := mainloop.New(nopAlgorithm{}, rangeStream(3, 0), nil, nil, []mainloop.Extension{ext, must(NewFinishAfter(Triggers{"after_n_epochs": 2}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	// Epoch 0: both conditions; epoch 1: before_epoch only.
	if !reflect.DeepEqual(epochs, []int{0, 0, 1}) {
		t.Errorf("ran before epochs %v, want [0 0 1]", epochs)
	}
}

func TestDataStreamMonitoring(t *testing.T) {
	x := core.NewInput("data", nd.Float32, 1)
	mean := core.MeanAll(x)
	mean.Name = "mean_x"
	W := core.NewShared(nd.Scalar(nd.Float32, 3), "W")
	// A 5-example stream in batches of 2: batch means 0.5, 2.5 and 4
	// weigh equally.
	dsm := must(NewDataStreamMonitoring(device.Device{}, []*core.Variable{mean, W}, rangeStream(5, 2), nil, "valid", "", nil))
	suffixed := must(NewDataStreamMonitoring(device.Device{}, []*core.Variable{mean}, rangeStream(4, 4), nil, "", "all", Triggers{"before_first_epoch": false}))
	m := mainloop.New(nopAlgorithm{}, rangeStream(3, 0), nil, nil, []mainloop.Extension{
		dsm, suffixed, must(NewFinishAfter(Triggers{"after_n_epochs": 2}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	for _, it := range []int{0, 3, 6} {
		row, _ := m.Log.Lookup(it)
		v, ok := row["valid_mean_x"].(*nd.Array)
		if !ok || v.F32()[0] != float32(7)/3 {
			t.Errorf("row %d: valid_mean_x = %v, want %v", it, row["valid_mean_x"], float32(7)/3)
		}
		if w, ok := row["valid_W"].(*nd.Array); !ok || w.Flat(0) != 3 {
			t.Errorf("row %d: valid_W = %v", it, row["valid_W"])
		}
		_, has := row["mean_x_all"]
		if has != (it > 0) {
			t.Errorf("row %d: mean_x_all present %v", it, has)
		}
	}
	if RecordName("", "x", "") != "x" || RecordName("a", "x", "b") != "a_x_b" {
		t.Error("RecordName")
	}
}

// Blocks' tests/extensions/test_monitoring.py::test_training_data_monitoring
// (without MonitoredQuantity).
func TestTrainingDataMonitoring(t *testing.T) {
	weights := []float32{-1, 1}
	feats := []float32{1, 2, 3, 5, 5, 8}
	targets := make([]float32, 3)
	for i := range 3 {
		targets[i] = weights[0]*feats[2*i] + weights[1]*feats[2*i+1]
	}
	stream := &memStream{sources: []string{"features", "targets"},
		data: []*nd.Array{nd.FromSlice(feats, 3, 2), nd.FromSlice(targets, 3)}}

	x := core.NewInput("features", nd.Float32, 1)
	y := core.NewInput("targets", nd.Float32, 0)
	W := core.NewShared(nd.New(nd.Float32, 2), "W")
	V := core.NewShared(nd.Scalar(nd.Float32, 7), "V")
	wsum := core.SumAll(W).Copy()
	wsum.Name = "W_sum"
	cost := core.Sqr(core.Sub(core.SumAll(core.Mul(x, W)), y))
	cost.Name = "cost"

	trueCost := &beforeBatch{f: func(m *mainloop.MainLoop, b mainloop.Batch) {
		w := W.Value().F32()
		f := b["features"].F32()
		d := float64(w[0]*f[0]+w[1]*f[1]) - b["targets"].Flat(0)
		m.Log.CurrentRow()["true_cost"] = d * d
	}}
	gd := must(algorithms.NewGradientDescent(algorithms.GradientDescentConfig{
		Cost: cost, Parameters: []*core.Variable{W}, StepRule: algorithms.NewScale(nd.Float32, 0.001)}))
	m := mainloop.New(gd, stream, nil, nil, []mainloop.Extension{
		must(NewFinishAfter(Triggers{"after_n_epochs": 1})),
		must(NewTrainingDataMonitoring(device.Device{}, []*core.Variable{wsum, cost, V}, "train1", "", Triggers{"after_batch": true})),
		must(NewTrainingDataMonitoring(device.Device{}, []*core.Variable{monitoring.MeanOf(wsum, nil), cost}, "train2", "", Triggers{"after_epoch": true})),
		trueCost,
	})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	val := func(i int, name string) float64 {
		row, _ := m.Log.Lookup(i)
		switch v := row[name].(type) {
		case *nd.Array:
			return v.Flat(0)
		case float64:
			return v
		}
		t.Fatalf("log[%d][%q] = %v", i, name, row[name])
		return 0
	}
	if v := val(3, "train1_V"); v != 7 {
		t.Errorf("train1_V = %v", v)
	}
	sumTrue, sumW := 0.0, 0.0
	for i := 0; i < 3; i++ {
		if a, b := val(i, "true_cost"), val(i+1, "train1_cost"); math.Abs(a-b) > 1e-4*math.Max(1, a) {
			t.Errorf("true_cost[%d] = %v but train1_cost[%d] = %v (the monitored cost must be from before the update)", i, a, i+1, b)
		}
		sumTrue += val(i, "true_cost")
		sumW += val(i+1, "train1_W_sum")
	}
	if got := val(3, "train2_cost"); math.Abs(got-sumTrue/3) > 1e-4*sumTrue {
		t.Errorf("train2_cost = %v, want %v", got, sumTrue/3)
	}
	if got := val(3, "train2_W_sum"); math.Abs(got-sumW/3) > 1e-6 {
		t.Errorf("train2_W_sum = %v, want %v", got, sumW/3)
	}
	if _, ok := m.Log.Lookup(1); !ok {
		t.Fatal("no row 1")
	}
	if row, _ := m.Log.Lookup(1); row["train2_cost"] != nil {
		t.Error("train2 recorded after a batch")
	}

	// An algorithm without the hook is refused.
	m = mainloop.New(nopAlgorithm{}, stream, nil, nil, []mainloop.Extension{
		must(NewTrainingDataMonitoring(device.Device{}, []*core.Variable{cost}, "", "", nil))})
	m.Messages = io.Discard
	if err := m.Run(); err == nil || !strings.Contains(err.Error(), "TrainingDataMonitoring needs an algorithm") {
		t.Errorf("got %v", err)
	}
}

type beforeBatch struct {
	mainloop.TrainingExtension
	f func(*mainloop.MainLoop, mainloop.Batch)
}

func (b *beforeBatch) BeforeBatch(batch mainloop.Batch) error {
	m, _ := b.MainLoop()
	b.f(m, batch)
	return nil
}

func TestTimingAndProgressBar(t *testing.T) {
	timing := must(NewTiming("", nil))
	var bar bytes.Buffer
	pb := NewProgressBar(&bar)
	now := time.Unix(0, 0)
	pb.Now = func() time.Time { now = now.Add(time.Second); return now }
	pb.LineInterval = 2 * time.Second
	m := mainloop.New(nopAlgorithm{}, rangeStream(4, 0), nil, nil, []mainloop.Extension{
		pb, timing, must(NewFinishAfter(Triggers{"after_n_epochs": 2}))})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	row0, _ := m.Log.Lookup(0)
	if _, ok := row0["time_initialization"].(float64); !ok {
		t.Errorf("row 0: %v", row0)
	}
	for _, it := range []int{4, 8} {
		row, _ := m.Log.Lookup(it)
		for _, k := range []string{"time_train_this_epoch", "time_read_data_this_epoch", "time_train_total", "time_read_data_total"} {
			if _, ok := row[k].(float64); !ok {
				t.Errorf("row %d lacks %s: %v", it, k, row)
			}
		}
	}
	// Plain lines (a bytes.Buffer is no terminal) every 2 s of an epoch;
	// first epoch of unknown length, the second of the first one's.
	// The clock ticks one second per reading: before the epoch and after
	// each of the 4 batches.
	want := "Epoch 0, step 2, 1.00 it/s, elapsed 0:00:02\n" +
		"Epoch 0, step 4, 1.00 it/s, elapsed 0:00:04\n" +
		"Epoch 1, step 2/4 (50%), 1.00 it/s, elapsed 0:00:02, ETA 0:00:02\n" +
		"Epoch 1, step 4/4 (100%), 1.00 it/s, elapsed 0:00:04, ETA 0:00:00\n"
	if bar.String() != want {
		t.Errorf("progress bar output\n%s\nwant\n%s", bar.String(), want)
	}
}
