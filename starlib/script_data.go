package starlib

import (
	"encoding/json"
	"fmt"

	"go.starlark.net/starlark"
)

// stopIteration is Python's StopIteration as a value (the predeclared
// StopIteration): a method that gives items one at a time, such as a
// script dataset's get_data(state, request), returns it to say that there
// are no more, where Python raises it. Starlark has no exceptions: fail()
// cannot be caught by the script that wraps the method, and an error
// message matched by its text would mistake a real error for the end.
// Fuel itself passes StopIteration as a value (MultiProcessing's queue).
// StopIteration() and StopIteration("why") are the same value.
type stopIteration struct{}

var _ starlark.Callable = stopIteration{}

func (stopIteration) String() string        { return "StopIteration" }
func (stopIteration) Type() string          { return "StopIteration" }
func (stopIteration) Freeze()               {}
func (stopIteration) Truth() starlark.Bool  { return true }
func (stopIteration) Hash() (uint32, error) { return starlark.String("StopIteration").Hash() }
func (stopIteration) Name() string          { return "StopIteration" }

// CallInternal is StopIteration(...): the value itself.
func (s stopIteration) CallInternal(_ *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("StopIteration takes no keyword arguments")
	}
	return s, nil
}

// IsStopIteration reports whether v is StopIteration (or StopIteration()).
func IsStopIteration(v starlark.Value) bool {
	_, ok := v.(stopIteration)
	return ok
}

// EncodeData encodes v, which must be data (None, bools, numbers with
// their bits, strings, bytes, lists, tuples, dicts, sets, arrays, numpy
// RandomStates: what a checkpoint saves of a script object's attributes,
// docs/checkpoints.md), for DecodeData. what names v in errors (a script
// dataset's state: "ToyData.open()"); a function, an open file, a script
// object or a library value is an error naming it.
func EncodeData(v starlark.Value, what string) (json.RawMessage, error) {
	e := &objectEncoder{dataOnly: what}
	s, err := e.value(v, what)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// DecodeData decodes what EncodeData encoded.
func DecodeData(b json.RawMessage, what string) (starlark.Value, error) {
	var s savedValue
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	d := &objectDecoder{}
	return d.value(s, nil, what)
}

// dataError is EncodeData's error for a value at path that is not data.
func dataError(path, what string) error {
	return fmt.Errorf("%s holds %s, which a checkpoint cannot save: it must be data (numbers, strings, lists, tuples, dicts, sets, arrays, RandomStates)", path, what)
}
