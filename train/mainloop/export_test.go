package mainloop_test

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/mainloop"
)

func sampleLog() *mainloop.TrainingLog {
	l := mainloop.NewTrainingLog()
	r0, _ := l.Row(0)
	r0["test_cost"] = nd.Scalar(nd.Float32, 2.5)
	r2, _ := l.Row(2)
	r2["train_cost"] = 1.25
	r2["flag"] = true
	r2["note"] = "a,b"
	r2["w"] = nd.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	r2["bad"] = math.NaN()
	l.Status.IterationsDone = 2
	l.Status.EpochsDone = 1
	l.Status.EpochEnds = []int{2}
	_ = l.Status.Set("best_test_cost", 2.5)
	return l
}

func TestJSONLinesRoundTrip(t *testing.T) {
	l := sampleLog()
	var b bytes.Buffer
	if err := l.WriteJSONLines(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `{"iteration":0,"records":{"test_cost":2.5}}`) {
		t.Fatalf("json lines\n%s", b.String())
	}
	got, err := mainloop.ReadJSONLines(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got.UUID != l.UUID || got.Status.IterationsDone != 2 || !reflect.DeepEqual(got.Status.EpochEnds, []int{2}) {
		t.Errorf("status %+v", got.Status)
	}
	if v, _ := got.Status.Get("best_test_cost"); v != 2.5 {
		t.Errorf("best_test_cost %v", v)
	}
	r2, _ := got.Lookup(2)
	if r2["train_cost"] != 1.25 || r2["flag"] != true || r2["note"] != "a,b" || !math.IsNaN(r2["bad"].(float64)) {
		t.Errorf("row 2 %v", r2)
	}
	if w, ok := r2["w"].(*nd.Array); !ok || !reflect.DeepEqual(w.Shape, []int{2, 2}) {
		t.Errorf("w %v", r2["w"])
	}
	its, vals := got.Channel("test_cost")
	if !reflect.DeepEqual(its, []int{0}) || !reflect.DeepEqual(vals, []float64{2.5}) {
		t.Errorf("channel %v %v", its, vals)
	}
}

func TestCSV(t *testing.T) {
	var b bytes.Buffer
	if err := sampleLog().WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "iteration,bad,flag,test_cost,train_cost\n0,,,2.5,\n2,NaN,True,,1.25\n"
	if b.String() != want {
		t.Errorf("csv\n%s\nwant\n%s", b.String(), want)
	}
}

// A log value is a channel's point when it is a number or a one-element
// array; bools (numbers to LogNumber), strings, lists and None are not.
func TestChannelValue(t *testing.T) {
	one := nd.New(nd.Float32, 1, 1)
	one.SetFlat(0, 0.5)
	for _, c := range []struct {
		v    any
		want float64
		ok   bool
	}{
		{2, 2, true},
		{int64(3), 3, true},
		{float32(0.25), 0.25, true},
		{1.5, 1.5, true},
		{one, 0.5, true},
		{nd.New(nd.Float32, 2), 0, false},
		{true, 0, false},
		{"1", 0, false},
		{nil, 0, false},
		{[]any{1.0}, 0, false},
	} {
		if got, ok := mainloop.ChannelValue(c.v); ok != c.ok || got != c.want {
			t.Errorf("ChannelValue(%#v) = %v, %v; want %v, %v", c.v, got, ok, c.want, c.ok)
		}
	}
	if f, ok := mainloop.LogNumber(true); !ok || f != 1 {
		t.Errorf("LogNumber(true) = %v, %v; want 1, true", f, ok)
	}
}
