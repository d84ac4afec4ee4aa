package nd

// Strings returns an array of strings of the given shape (1-D with no
// shape), holding data (not copied): numpy's str dtype, for examples that
// are strings. Arithmetic (Flat, SetFlat, Astype to a number) is not
// defined on it; slicing, Take, Stack, Concat, Copy and Equal are.
func Strings(data []string, shape ...int) *Array {
	if shape == nil {
		shape = []int{len(data)}
	}
	return &Array{Shape: append([]int(nil), shape...), Data: data}
}

// String0 is a 0-d array holding the string s.
func String0(s string) *Array { return &Array{Shape: []int{}, Data: []string{s}} }

// ByteStrings returns an array of byte strings of the given shape (1-D
// with no shape), holding data (not copied): numpy's S<n> dtype as h5py
// reads it. Like Strings, it has no arithmetic.
func ByteStrings(data [][]byte, shape ...int) *Array {
	if shape == nil {
		shape = []int{len(data)}
	}
	return &Array{Shape: append([]int(nil), shape...), Data: data}
}
