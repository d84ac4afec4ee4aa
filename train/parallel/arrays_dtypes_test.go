package parallel

import (
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// Every numeric dtype of package nd is sent between processes with its
// dtype and values; a message naming a dtype that is not numeric is an
// error, not a panic.
func TestArraysEveryDType(t *testing.T) {
	var arrays []*nd.Array
	for _, dt := range nd.NumericDTypes() {
		a := nd.New(dt, 3)
		for i := range 3 {
			a.SetFlat(i, float64(i%2))
		}
		arrays = append(arrays, a)
	}
	b, err := AppendArrays(nil, arrays)
	if err != nil {
		t.Fatal(err)
	}
	got, rest, err := ReadArrays(b)
	if err != nil || len(rest) != 0 {
		t.Fatalf("ReadArrays: %v (%d bytes left)", err, len(rest))
	}
	for i, want := range arrays {
		if !nd.Equal(got[i], want) {
			t.Errorf("%s: got %s %v, want %v", want.DType(), got[i].DType(), got[i], want)
		}
	}
	bad := []byte{1, 0, 0, 0, byte(nd.Object), 1, 1, 0, 0, 0, 0, 0, 0, 0}
	if _, _, err := ReadArrays(bad); err == nil {
		t.Error("an object-dtype message was accepted")
	}
}
