package starlib

import "github.com/blocks-go/blocks/core/device"

// SetDeviceUnchecked makes d the interpreter's device without
// device.Check, for tests that stand in for a GPU build's --device cuda:N
// on a machine that has no GPU.
func SetDeviceUnchecked(in *Interp, d device.Device) {
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	in.state.device = d
}
