package core_test

import (
	"testing"

	"github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
	"github.com/blocks-go/blocks/nd"
)

// LowerForDevice's slots are the shared variables of the lowered graph:
// one at each node Lower marks shared (the variable itself, the same in
// every function), none elsewhere, and one per update in Updates' order,
// also for a variable the graph does not read.
func TestLowerForDeviceSlots(t *testing.T) {
	x := core.NewInput("x", nd.Float32, 1)
	w := core.NewShared(nd.New(nd.Float32, 3), "w")
	n := core.NewShared(nd.New(nd.Float32, 3), "n") // updated, never read
	y := core.Mul(x, w)
	f, err := core.Compile([]*core.Variable{x}, []*core.Variable{y},
		[]core.Update{{Shared: w, Value: core.Add(w, x)}, {Shared: n, Value: core.Mul(x, core.Const(nd.Float32, 2))}})
	if err != nil {
		t.Fatal(err)
	}
	g := f.LowerForDevice()
	if len(g.Slots) != len(g.Nodes) || len(g.UpdateSlots) != len(g.Updates) {
		t.Fatalf("%d slots for %d nodes, %d update slots for %d updates", len(g.Slots), len(g.Nodes), len(g.UpdateSlots), len(g.Updates))
	}
	shared := 0
	for i, node := range g.Nodes {
		isShared := node.Kind == core.NodeStored && node.Shared
		switch {
		case isShared && g.Slots[i] != core.DeviceSlot(w):
			t.Errorf("node %d is shared, its slot %v (want w)", i, g.Slots[i])
		case !isShared && g.Slots[i] != nil:
			t.Errorf("node %d is not shared, its slot %v", i, g.Slots[i])
		}
		if isShared {
			shared++
		}
	}
	if shared != 1 {
		t.Errorf("%d shared nodes, want 1 (w)", shared)
	}
	for k, want := range []*core.Variable{w, n} {
		if g.UpdateSlots[k] != core.DeviceSlot(want) || g.Updates[k].Name != want.String() {
			t.Errorf("update %d: slot %v, name %q; want %v", k, g.UpdateSlots[k], g.Updates[k].Name, want)
		}
	}
}
