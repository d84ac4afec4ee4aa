package nd

import "math"

// ProdChecked is the number of elements of shape, with ok false when a
// dimension is negative or the product overflows an int (a shape read
// from a file cannot be trusted with Prod).
func ProdChecked(shape []int) (n int, ok bool) {
	n = 1
	for _, s := range shape {
		if s < 0 {
			return 0, false
		}
		if s != 0 && n > math.MaxInt/s {
			return 0, false
		}
		n *= s
	}
	return n, true
}
