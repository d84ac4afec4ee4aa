package core_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// newerCopy is a read guard holding a newer value, as a backend's device
// copy does; it records what the variable asked of it.
type newerCopy struct {
	value []float32
	log   *[]string
	name  string
}

func (c *newerCopy) BeforeRead(host *nd.Array) {
	*c.log = append(*c.log, c.name+".read")
	copy(host.F32(), c.value)
}

func (c *newerCopy) Dropped() { *c.log = append(*c.log, c.name+".dropped") }

// A read guard brings its newer value into the host array when the host
// first reads it, after the write guards (which see the value from
// before), and only once; SetValue drops it without a read, as does
// another guard taking the variable; setting the same guard again drops
// nothing.
func TestReadGuard(t *testing.T) {
	var log []string
	w := core.NewShared(nd.FromSlice([]float32{1, 2, 3}, 3), "w")
	host := w.Value()
	w.SetWriteGuard(t, func() { log = append(log, "write:"+fmt.Sprint(host.F32())) })
	a := &newerCopy{value: []float32{7, 8, 9}, log: &log, name: "a"}
	w.SetReadGuard(a)
	w.SetReadGuard(a)
	if got := w.Value(); got != host || !slices.Equal(got.F32(), []float32{7, 8, 9}) {
		t.Fatalf("Value after the guard: %v (same array: %v), want [7 8 9]", got.F32(), got == host)
	}
	w.Value()
	if want := []string{"write:[1 2 3]", "a.read"}; !slices.Equal(log, want) {
		t.Errorf("reading: %q, want %q", log, want)
	}

	log = nil
	b := &newerCopy{value: []float32{4, 5, 6}, log: &log, name: "b"}
	w.SetReadGuard(a)
	w.SetReadGuard(b)
	if err := w.SetValue(nd.FromSlice([]float32{0, 0, 1}, 3)); err != nil {
		t.Fatal(err)
	}
	if got := w.Value().F32(); !slices.Equal(got, []float32{0, 0, 1}) {
		t.Errorf("Value after SetValue: %v, want [0 0 1]", got)
	}
	w.SetReadGuard(a)
	w.SetReadGuard(nil)
	if want := []string{"a.dropped", "b.dropped", "a.dropped"}; !slices.Equal(log, want) {
		t.Errorf("dropping: %q, want %q", log, want)
	}
}

// A function run on the CPU reads a shared variable through Value, so it
// sees a read guard's newer value.
func TestReadGuardBeforeACPURun(t *testing.T) {
	var log []string
	w := core.NewShared(nd.FromSlice([]float32{1, 2, 3}, 3), "w")
	x := core.NewInput("x", nd.Float32, 1)
	f, err := core.Compile([]*core.Variable{x}, []*core.Variable{core.SumAll(core.Mul(w, x))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := []*nd.Array{nd.FromSlice([]float32{1, 1, 1}, 3)}
	for _, want := range []float32{6, 24} {
		out, err := f.Call(args)
		if err != nil {
			t.Fatal(err)
		}
		if got := out[0].F32()[0]; got != want {
			t.Errorf("sum(w*x) = %v, want %v", got, want)
		}
		w.SetReadGuard(&newerCopy{value: []float32{7, 8, 9}, log: &log, name: "a"})
	}
}
