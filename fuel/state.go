package fuel

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
)

// SavedArray is an array as plain data for a checkpoint: its dtype name,
// shape and little-endian element bytes (base64 in JSON); an object array
// (a ragged batch) keeps its elements in Parts instead.
//
// SaveArray only keeps a reference to the array (taking a state is cheap,
// which MultiProcessing does for every item); the bytes are made when the
// state is marshalled. The array must not change afterwards: iterators
// save only arrays they own and never modify.
type SavedArray struct {
	DType string       `json:"dtype"`
	Shape []int        `json:"shape"`
	Data  []byte       `json:"data,omitempty"`
	Parts []SavedArray `json:"parts,omitempty"`

	arr *nd.Array // the array, until encoded
}

// SavedItem is one item of a stream (an example or a batch), one array per
// source.
type SavedItem []SavedArray

// SaveArray records a (by reference; see SavedArray).
func SaveArray(a *nd.Array) SavedArray {
	return SavedArray{DType: a.DType().String(), Shape: append([]int{}, a.Shape...), arr: a}
}

// MarshalJSON encodes the array's bytes.
func (s SavedArray) MarshalJSON() ([]byte, error) {
	type plain SavedArray // without this method
	if s.arr != nil {
		var err error
		if s, err = encodeArray(s.arr); err != nil {
			return nil, err
		}
	}
	return json.Marshal(plain(s))
}

// encodeArray is the SavedArray of a with its bytes.
func encodeArray(a *nd.Array) (SavedArray, error) {
	s := SavedArray{DType: a.DType().String(), Shape: append([]int{}, a.Shape...)}
	if parts, ok := a.Data.([]*nd.Array); ok {
		s.Parts = make([]SavedArray, len(parts))
		for i, p := range parts {
			var err error
			if s.Parts[i], err = encodeArray(p); err != nil {
				return SavedArray{}, err
			}
		}
		return s, nil
	}
	var err error
	if s.Data, err = npy.AppendData([]byte{}, a, binary.LittleEndian); err != nil {
		return SavedArray{}, fmt.Errorf("fuel: saving an iterator state: %w", err)
	}
	return s, nil
}

// Array rebuilds the saved array, checking that its bytes fit its shape.
func (s SavedArray) Array() (*nd.Array, error) {
	if s.arr != nil {
		return deepCopy(s.arr), nil
	}
	dt, err := nd.ParseDType(s.DType)
	if err != nil {
		return nil, fmt.Errorf("fuel: saved array: %w", err)
	}
	if dt == nd.Object {
		n, ok := nd.ProdChecked(s.Shape)
		if !ok || len(s.Parts) != n {
			return nil, fmt.Errorf("fuel: saved object array of shape %v has %d parts", s.Shape, len(s.Parts))
		}
		parts := make([]*nd.Array, n)
		for i, p := range s.Parts {
			if parts[i], err = p.Array(); err != nil {
				return nil, err
			}
		}
		return &nd.Array{Shape: append([]int{}, s.Shape...), Data: parts}, nil
	}
	a, err := npy.DecodeData(dt, s.Shape, s.Data, binary.LittleEndian)
	if err != nil {
		return nil, fmt.Errorf("fuel: saved %s array: %w", s.DType, err)
	}
	return a, nil
}

// SaveItem copies an item (one array per source).
func SaveItem(item []*nd.Array) SavedItem {
	out := make(SavedItem, len(item))
	for i, a := range item {
		out[i] = SaveArray(a)
	}
	return out
}

// Arrays rebuilds a saved item.
func (s SavedItem) Arrays() ([]*nd.Array, error) {
	out := make([]*nd.Array, len(s))
	for i, a := range s {
		var err error
		if out[i], err = a.Array(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MarshalState encodes an iterator state as JSON, the form a checkpoint
// stores.
func MarshalState(s IteratorState) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("fuel: encoding an iterator state: %w", err)
	}
	return b, nil
}

// UnmarshalState decodes a state written by MarshalState.
func UnmarshalState(b []byte) (IteratorState, error) {
	var s IteratorState
	if err := json.Unmarshal(b, &s); err != nil {
		return IteratorState{}, fmt.Errorf("fuel: decoding an iterator state: %w", err)
	}
	return s, nil
}

func deepCopy(a *nd.Array) *nd.Array {
	if p, ok := a.Data.([]*nd.Array); ok {
		c := make([]*nd.Array, len(p))
		for i, x := range p {
			c[i] = deepCopy(x)
		}
		return &nd.Array{Shape: append([]int{}, a.Shape...), Data: c}
	}
	return a.Copy()
}
