package starlib

import (
	"encoding/json"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/nd"
)

// SetDeviceUnchecked makes d the interpreter's device without
// device.Check, for tests that stand in for a GPU build's --device cuda:N
// on a machine that has no GPU.
func SetDeviceUnchecked(in *Interp, d device.Device) {
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	in.state.device = d
}

// SavedArrayJSON is a's saved form in a script object's state, and the
// array read back from it.
func SavedArrayJSON(a *nd.Array) ([]byte, *nd.Array, error) {
	s := encodeSavedArray(a)
	b, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	var back savedArray
	if err := json.Unmarshal(b, &back); err != nil {
		return nil, nil, err
	}
	r, err := back.decode()
	return b, r, err
}
