package nd

import (
	"strconv"
	"strings"
)

// ShapeString writes a shape in Python's tuple notation, as numpy prints
// one: (), (5,), (256, 784).
func ShapeString(shape []int) string {
	items := make([]string, len(shape))
	for i, d := range shape {
		items[i] = strconv.Itoa(d)
	}
	return TupleString(items)
}

// TupleString writes already formatted items in Python's tuple notation:
// (), (a,), (a, b): a one-element tuple keeps its comma.
func TupleString(items []string) string {
	if len(items) == 1 {
		return "(" + items[0] + ",)"
	}
	return "(" + strings.Join(items, ", ") + ")"
}
