package initialization

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// ConstantArray fills with an array broadcast to the requested shape
// (Blocks' Constant given an array): its trailing axes must match the
// shape's, or be 1.
type ConstantArray struct{ Value *nd.Array }

func (c ConstantArray) String() string { return fmt.Sprintf("Constant(constant=%v)", c.Value) }

// Generate implements Scheme.
func (c ConstantArray) Generate(_ *numpyrand.RandomState, shape []int) (*nd.Array, error) {
	src := c.Value
	if len(src.Shape) > len(shape) {
		return nil, fmt.Errorf("Constant: cannot broadcast a constant of shape %v to %v", src.Shape, shape)
	}
	off := len(shape) - len(src.Shape)
	for i, s := range src.Shape {
		if s != 1 && s != shape[off+i] {
			return nil, fmt.Errorf("Constant: cannot broadcast a constant of shape %v to %v", src.Shape, shape)
		}
	}
	a := nd.New(nd.Float64, shape...)
	out := a.F64()
	idx := make([]int, len(shape))
	for i := range out {
		// the source's flat index of the destination's index idx
		j := 0
		for k, s := range src.Shape {
			x := idx[off+k]
			if s == 1 {
				x = 0
			}
			j = j*s + x
		}
		out[i] = src.Flat(j)
		for k := len(idx) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return a, nil
}

// SparseND is Sparse over a grid of axes (Blocks' SparseND): the entries
// along Axis form the rows of a matrix whose columns are all the other
// entries; Sparse fills that matrix, which is reshaped and transposed back
// to shape.
type SparseND struct {
	Axis []int
	Sparse
}

func (s SparseND) String() string {
	return fmt.Sprintf("SparseND(axis=%v, num_init=%g, weights_init=%s)", s.Axis, s.NumInit, s.WeightsInit)
}

// Generate implements Scheme.
func (s SparseND) Generate(rng *numpyrand.RandomState, shape []int) (*nd.Array, error) {
	var other []int
	for i := range shape {
		if !slices.Contains(s.Axis, i) {
			other = append(other, i)
		}
	}
	rows, cols := 1, 1
	var newShape []int
	for _, i := range s.Axis {
		if i < 0 || i >= len(shape) {
			return nil, fmt.Errorf("SparseND: axis %d out of range for shape %v", i, shape)
		}
		rows *= shape[i]
		newShape = append(newShape, shape[i])
	}
	for _, i := range other {
		cols *= shape[i]
		newShape = append(newShape, shape[i])
	}
	m, err := s.Sparse.Generate(rng, []int{rows, cols})
	if err != nil {
		return nil, err
	}
	// m has the axes in the order Axis then other; put them back.
	order := append(slices.Clone(s.Axis), other...)
	out := nd.New(nd.Float64, shape...)
	strides := make([]int, len(shape)) // out's strides, by out axis
	st := 1
	for k := len(shape) - 1; k >= 0; k-- {
		strides[k] = st
		st *= shape[k]
	}
	src := m.F64()
	idx := make([]int, len(newShape))
	for i := range src {
		o := 0
		for k, ax := range order {
			o += idx[k] * strides[ax]
		}
		out.F64()[o] = src[i]
		for k := len(idx) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < newShape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out, nil
}
