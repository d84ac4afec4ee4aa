package nd

import (
	"reflect"
	"testing"
)

func TestStackAndParts(t *testing.T) {
	a, b := FromSlice([]int64{1, 2}), FromSlice([]int64{3, 4})
	s, err := Stack([]*Array{a, b})
	if err != nil || s.DType() != Int64 || !reflect.DeepEqual(s.Shape, []int{2, 2}) || !reflect.DeepEqual(s.I64(), []int64{1, 2, 3, 4}) {
		t.Fatalf("regular stack: %v %v", s, err)
	}
	p, err := s.Parts()
	if err != nil || len(p) != 2 || !Equal(p[1], b) {
		t.Errorf("parts of a regular array: %v %v", p, err)
	}
	c := FromSlice([]int64{5})
	r, err := Stack([]*Array{a, c})
	if err != nil || r.DType() != Object || !reflect.DeepEqual(r.Shape, []int{2}) {
		t.Fatalf("ragged stack: %v %v", r, err)
	}
	if p, _ := r.Parts(); p[1] != c {
		t.Error("an object array's parts are its elements")
	}
	mixed, _ := Stack([]*Array{a, FromSlice([]float32{1, 2})})
	if mixed.DType() != Object {
		t.Errorf("examples of different dtypes stack to %s", mixed.DType())
	}
	if _, err := Stack(nil); err == nil {
		t.Error("stacking nothing gave no error")
	}
	if _, err := Scalar(Int64, 3).Parts(); err == nil {
		t.Error("a 0-d array has parts")
	}
	// Take, Slice, Copy and Equal work on object arrays.
	o := Objects([]*Array{a, b, c})
	if got := o.Take([]int{2, 0}); !Equal(got, Objects([]*Array{c, a})) {
		t.Errorf("Take: %v", got.Data)
	}
	if got := o.Slice(1, 3).Copy(); !Equal(got, Objects([]*Array{b, c})) {
		t.Errorf("Slice/Copy: %v", got.Data)
	}
	if Equal(o, Objects([]*Array{a, b, a})) {
		t.Error("different object arrays are Equal")
	}
	if dt, err := ParseDType("object"); err != nil || dt != Object || New(Object, 2).DType() != Object {
		t.Errorf("object dtype: %v %v", dt, err)
	}
}
