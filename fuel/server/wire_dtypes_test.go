package server

import (
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// Every numeric dtype of package nd crosses the wire with its dtype and
// values (int8, which Fuel's text converters write, once had no case).
func TestRoundTripEveryDType(t *testing.T) {
	var arrays []*nd.Array
	for _, dt := range nd.NumericDTypes() {
		a := nd.New(dt, 2, 2)
		for i := range 4 {
			a.SetFlat(i, float64(i%2))
		}
		arrays = append(arrays, a)
	}
	frames, err := EncodeArrays(arrays)
	if err != nil {
		t.Fatal(err)
	}
	cp := make([][]byte, len(frames))
	for i, f := range frames {
		cp[i] = append([]byte(nil), f...)
	}
	got, err := DecodeArrays(cp)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range arrays {
		if !nd.Equal(got[i], want) {
			t.Errorf("%s: got %s %v, want %v", want.DType(), got[i].DType(), got[i], want)
		}
	}
}
