package starlib_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/checkpoint"
)

// A script object's array is saved in the checkpoint's own form for
// tagged values (train/checkpoint's Value), byte for byte, and comes back
// bit for bit: the runtime writes that form itself so that it imports no
// training package.
func TestSavedArrayIsCheckpointValue(t *testing.T) {
	for _, a := range []*nd.Array{
		nd.FromSlice([]float32{1.5, float32(math.Inf(-1)), float32(math.Copysign(0, -1)), float32(math.NaN())}, 2, 2),
		nd.FromSlice([]float64{math.Pi}),
		nd.FromSlice([]int64{-7, 1 << 40}, 2),
		nd.FromSlice([]bool{true, false, true}, 3, 1),
		nd.Scalar(nd.Float32, 2.5),
	} {
		got, back, err := starlib.SavedArrayJSON(a)
		if err != nil {
			t.Fatalf("%v: %v", a.Shape, err)
		}
		want, err := json.Marshal(checkpoint.EncodeValue(a))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s%v: saved %s, the checkpoint writes %s", a.DType(), a.Shape, got, want)
		}
		again, _ := json.Marshal(checkpoint.EncodeValue(back))
		if !nd.Equal(back, a) || string(again) != string(want) {
			t.Errorf("%s%v: read back %s%v (%s)", a.DType(), a.Shape, back.DType(), back.Shape, again)
		}
	}
}
