package nd

import "testing"

// ShapeString writes shapes as Python's repr of a tuple, as numpy's
// .shape prints: a one-element tuple keeps its comma.
func TestShapeString(t *testing.T) {
	for _, c := range []struct {
		shape []int
		want  string
	}{
		{nil, "()"},
		{[]int{}, "()"},
		{[]int{5}, "(5,)"},
		{[]int{0}, "(0,)"},
		{[]int{256, 784}, "(256, 784)"},
		{[]int{2, 3, 4, 5}, "(2, 3, 4, 5)"},
	} {
		if got := ShapeString(c.shape); got != c.want {
			t.Errorf("ShapeString(%v) = %q, want %q", c.shape, got, c.want)
		}
	}
}
