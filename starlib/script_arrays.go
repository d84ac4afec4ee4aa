package starlib

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
)

// savedArray is an array in a script object's saved state. It is written
// as the checkpoint writes its tagged values of type "array" (package
// train/checkpoint's Value: the dtype, the shape and the little-endian
// data in base64), so that the file reads the same whichever package wrote
// it; the runtime keeps its own copy of that form to know no training
// package (TestSavedArrayIsCheckpointValue holds the two together).
type savedArray struct {
	Type  string          `json:"t"`
	V     json.RawMessage `json:"v,omitempty"`
	DType string          `json:"dtype,omitempty"`
	Shape []int           `json:"shape,omitempty"`
}

// encodeSavedArray is a's saved form.
func encodeSavedArray(a *nd.Array) savedArray {
	b, _ := npy.AppendData(nil, a, binary.LittleEndian)
	return savedArray{Type: "array", DType: a.DType().String(), Shape: append([]int{}, a.Shape...),
		V: rawJSON(base64.StdEncoding.EncodeToString(b))}
}

// decode is the array s holds.
func (s savedArray) decode() (*nd.Array, error) {
	if s.Type != "array" {
		return nil, fmt.Errorf("not an array (a %s value)", s.Type)
	}
	bad := func(err error) (*nd.Array, error) { return nil, fmt.Errorf("an array value: %w", err) }
	dt, err := nd.ParseDType(s.DType)
	if err != nil {
		return bad(err)
	}
	var text string
	if err := json.Unmarshal(s.V, &text); err != nil {
		return bad(err)
	}
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return bad(err)
	}
	a, err := npy.DecodeData(dt, s.Shape, b, binary.LittleEndian)
	if err != nil {
		return bad(err)
	}
	return a, nil
}
