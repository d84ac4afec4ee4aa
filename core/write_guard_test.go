package core_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// A shared variable's write guard runs once, before the executor first
// writes the variable's array, and sees the value from before the
// update: both when the update is copied in after the step and when it is
// written in place by a fused p − s·g step (SGD's).
func TestWriteGuardRunsBeforeTheUpdate(t *testing.T) {
	for _, fused := range []bool{false, true} {
		w := core.NewShared(nd.FromSlice([]float32{1, 2, 3}, 3), "w")
		x := core.NewInput("x", nd.Float32, 1)
		upd := core.Add(w, x)
		if fused {
			upd = core.Sub(w, core.Mul(core.Const(nd.Float32, 0.5), x))
		}
		f, err := core.Compile([]*core.Variable{x}, []*core.Variable{core.SumAll(x)}, []core.Update{{Shared: w, Value: upd}})
		if err != nil {
			t.Fatal(err)
		}
		args := []*nd.Array{nd.FromSlice([]float32{2, 2, 2}, 3)}
		prog, err := f.Program(args)
		if err != nil {
			t.Fatal(err)
		}
		if inPlace := strings.Contains(strings.Join(prog, "\n"), " into "); inPlace != fused {
			t.Fatalf("fused=%v: the update is written in place: %v\n%s", fused, inPlace, strings.Join(prog, "\n"))
		}
		calls := 0
		var seen []float32
		w.SetWriteGuard(t, func() {
			calls++
			seen = slices.Clone(w.Value().F32())
		})
		outs, err := f.Call(args)
		if err != nil {
			t.Fatal(err)
		}
		want := []float32{3, 4, 5}
		if fused {
			want = []float32{0, 1, 2}
		}
		if calls != 1 || !slices.Equal(seen, []float32{1, 2, 3}) || !slices.Equal(w.Value().F32(), want) || outs[0].Flat(0) != 6 {
			t.Errorf("fused=%v: guard ran %d times and saw %v; w is %v (want %v), output %v (want 6)", fused, calls, seen, w.Value().F32(), want, outs[0].Flat(0))
		}
		if _, err := f.Call(args); err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Errorf("fused=%v: the guard ran again (%d times): it runs once", fused, calls)
		}
	}
}

// Guards of two owners both run, once; a guard set again by its owner
// replaces the owner's earlier one.
func TestWriteGuardOwners(t *testing.T) {
	w := core.NewShared(nd.FromSlice([]float32{1}, 1), "w")
	var ran []string
	a, b := new(int), new(int)
	w.SetWriteGuard(a, func() { ran = append(ran, "a1") })
	w.SetWriteGuard(b, func() { ran = append(ran, "b") })
	w.SetWriteGuard(a, func() { ran = append(ran, "a2") })
	w.BeforeWrite()
	w.BeforeWrite()
	if !slices.Equal(ran, []string{"b", "a2"}) {
		t.Errorf("guards ran %v, want [b a2]", ran)
	}
	w.SetWriteGuard(a, func() { ran = append(ran, "a3") })
	w.SetWriteGuard(a, nil)
	w.BeforeWrite()
	if len(ran) != 2 {
		t.Errorf("a removed guard ran: %v", ran)
	}
}
