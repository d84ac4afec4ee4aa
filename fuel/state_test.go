package fuel

import (
	"encoding/json"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// States go through JSON unchanged: every dtype, object arrays, RNG states.
func TestStateRoundTrip(t *testing.T) {
	arrays := []*nd.Array{
		nd.FromSlice([]float32{1.5, -2, 3.25e-30}, 3),
		nd.FromSlice([]float64{1e300, -0.1}, 2, 1),
		nd.FromSlice([]int64{-1 << 62, 7}),
		nd.FromSlice([]int32{-5, 6}),
		nd.FromSlice([]uint8{0, 255, 7}),
		nd.FromSlice([]bool{true, false}),
		nd.Objects([]*nd.Array{nd.FromSlice([]int64{1}), nd.FromSlice([]int64{2, 3})}),
		nd.Scalar(nd.Float64, 2.5),
	}
	r := numpyrand.New(42)
	r.Normal(0, 1)
	rs := r.State()
	st := IteratorState{Buffer: []SavedItem{SaveItem(arrays)}, RNG: &rs, Index: 3,
		Child: &IteratorState{Requests: &RequestPosition{Order: []int{2, 0, 1}, Next: 1, RNG: &rs}}}
	blob, err := MarshalState(st)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalState(blob)
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.Buffer[0].Arrays()
	if err != nil {
		t.Fatal(err)
	}
	for i := range arrays {
		if !nd.Equal(got[i], arrays[i]) {
			t.Errorf("array %d: %v, want %v", i, got[i], arrays[i])
		}
	}
	if *back.RNG != rs || *back.Child.Requests.RNG != rs || back.Index != 3 || back.Child.Requests.Next != 1 {
		t.Error("state fields changed through JSON")
	}
	// Corrupt saved arrays are errors.
	for _, bad := range []SavedArray{
		{DType: "float32", Shape: []int{2}, Data: []byte{1, 2, 3}},
		{DType: "complex", Shape: []int{1}},
		{DType: "object", Shape: []int{2}, Parts: []SavedArray{{DType: "uint8", Shape: []int{0}}}},
		{DType: "uint8", Shape: []int{-1}},
	} {
		b, _ := json.Marshal(bad)
		var s SavedArray
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Array(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := UnmarshalState([]byte("{")); err == nil {
		t.Error("bad JSON gave no error")
	}
}
