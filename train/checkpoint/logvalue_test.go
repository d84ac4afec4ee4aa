package checkpoint

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Blocks' log takes any value (a MockAlgorithm's batch, a dict, in
// tests/test_main_loop.py): dicts, tuples and lists of any values come
// back from a checkpoint with their kinds, order and bits.
func TestLogValuesAnyKind(t *testing.T) {
	arr := nd.FromSlice([]float32{1.5, -2}, 2)
	in := mainloop.Dict{
		Keys: []any{"data", 3, "pair"},
		Values: []any{
			arr,
			mainloop.Tuple{int64(7), "b", nil},
			[]any{mainloop.Dict{Keys: []any{"x"}, Values: []any{0.25}}, []any{1, 2}},
		},
	}
	b, err := json.Marshal(EncodeValue(in))
	if err != nil {
		t.Fatal(err)
	}
	var v Value
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := v.Decode()
	if err != nil {
		t.Fatal(err)
	}
	d, ok := out.(mainloop.Dict)
	if !ok {
		t.Fatalf("a dict came back as %T", out)
	}
	got, ok := d.Values[0].(*nd.Array)
	if !ok || got.DType() != nd.Float32 || !reflect.DeepEqual(got.Data, arr.Data) {
		t.Errorf("the dict's array came back as %#v", d.Values[0])
	}
	d.Values[0] = arr
	if !reflect.DeepEqual(d, in) {
		t.Errorf("round trip: got %#v, want %#v", d, in)
	}
	// A dict whose items do not pair up is refused, not guessed at.
	bad := Value{Type: "dict", Values: []Value{EncodeValue("k")}}
	if _, err := bad.Decode(); err == nil {
		t.Error("a dict of an odd number of items decoded")
	}
}
