package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// DeviceSlot is a shared variable as a backend that keeps its own copy of
// it on a device sees it (core/exec/cuda): Value is its host value (which
// first has a read guard set copy its newer value in), SetReadGuard claims
// the value for the backend's copy after a run that updated the variable
// on the device (Variable.SetReadGuard). The copies themselves are the
// backend's: a slot is comparable, the same variable giving the same slot
// in every function, so a backend keys its copies by it.
type DeviceSlot interface {
	fmt.Stringer
	Value() *nd.Array
	SetReadGuard(ReadGuard)
}

// DeviceLowered is a lowered graph (the one every backend consumes) with
// the slots of its shared variables, for a backend that keeps copies of
// them on its device between calls.
type DeviceLowered struct {
	Lowered
	// Slots has one entry per node of Lowered.Nodes: the shared
	// variable's slot, nil for every other node. UpdateSlots has one per
	// update, in Lowered.Updates' order (an update's variable may be one
	// the graph does not read).
	Slots, UpdateSlots []DeviceSlot
}

// LowerForDevice is Lower with the shared variables' slots.
func (f *Function) LowerForDevice() DeviceLowered {
	g := DeviceLowered{Lowered: f.Lower(), Slots: make([]DeviceSlot, len(f.nodes))}
	for i, v := range f.nodes {
		if v.kind == KindShared && f.argOf[i] < 0 {
			g.Slots[i] = v
		}
	}
	for _, u := range f.updates {
		g.UpdateSlots = append(g.UpdateSlots, u.Shared)
	}
	return g
}
