package nd

import "fmt"

// Objects returns an object array of shape (len(parts),) holding parts
// (not copied): numpy's array of differently shaped examples, which a
// batch of variable-length sequences is. Element-wise arithmetic (Flat,
// SetFlat, Astype to a numeric dtype) is not defined on object arrays.
func Objects(parts []*Array) *Array {
	return &Array{Shape: []int{len(parts)}, Data: parts}
}

// Parts returns the elements of an object array (a view), or, for a
// numeric array, the views of its rows along the first axis, so that a
// consumer handles a ragged batch and a rectangular one alike. A 0-d
// numeric array has no rows: Parts returns an error for it.
func (a *Array) Parts() ([]*Array, error) {
	if p, ok := a.Data.([]*Array); ok {
		return p, nil
	}
	if len(a.Shape) == 0 {
		return nil, fmt.Errorf("nd: a 0-d array has no rows")
	}
	out := make([]*Array, a.Shape[0])
	for i := range out {
		r := a.Slice(i, i+1)
		r.Shape = r.Shape[1:]
		out[i] = r
	}
	return out, nil
}

// Stack stacks examples into one array along a new first axis, as
// numpy.asarray(list_of_examples) does: a numeric array when all
// examples have the same dtype and shape, else an object array holding
// them. It returns an error for no examples.
func Stack(examples []*Array) (*Array, error) {
	if len(examples) == 0 {
		return nil, fmt.Errorf("nd: nothing to stack")
	}
	first := examples[0]
	regular := first.DType() != Object
	for _, e := range examples[1:] {
		if e.DType() != first.DType() || !SameShape(e.Shape, first.Shape) {
			regular = false
			break
		}
	}
	if !regular {
		return Objects(append([]*Array(nil), examples...)), nil
	}
	r := first.Size()
	out := New(first.DType(), append([]int{len(examples)}, first.Shape...)...)
	for k, e := range examples {
		copyData(SliceData(out.Data, k*r, (k+1)*r), e.Data)
	}
	return out, nil
}

func equalObjects(a, b *Array) bool {
	pa, pb := a.Data.([]*Array), b.Data.([]*Array)
	for i := range pa {
		if (pa[i] == nil) != (pb[i] == nil) || pa[i] != nil && !Equal(pa[i], pb[i]) {
			return false
		}
	}
	return true
}
