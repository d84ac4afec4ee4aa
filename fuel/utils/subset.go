// Package utils holds Fuel's fuel.utils helpers that datasets share:
// Subset, the description of which examples of a dataset a split or a
// subset request covers, with Fuel's algebra (union) and request
// translation.
package utils

import (
	"errors"
	"fmt"
	"slices"
)

// Slice is Python's slice(start, stop, step) with nil for None.
type Slice struct {
	Start, Stop, Step *int
}

// Int returns a pointer to v, for Slice's bounds.
func Int(v int) *int { return &v }

// Numerical is Fuel's Subset.slice_to_numerical_args: start (0 for None),
// stop (numExamples for None) and step (1 for None).
func (s Slice) Numerical(numExamples int) (start, stop, step int) {
	start, stop, step = 0, numExamples, 1
	if s.Start != nil {
		start = *s.Start
	}
	if s.Stop != nil {
		stop = *s.Stop
	}
	if s.Step != nil {
		step = *s.Step
	}
	return start, stop, step
}

// IsFull reports whether s is slice(None, None, None).
func (s Slice) IsFull() bool { return s.Start == nil && s.Stop == nil && s.Step == nil }

func (s Slice) String() string {
	f := func(p *int) string {
		if p == nil {
			return "None"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("slice(%s, %s, %s)", f(s.Start), f(s.Stop), f(s.Step))
}

// ListOrSlice is a list of indices (List non-nil, possibly empty) or a
// slice.
type ListOrSlice struct {
	List  []int
	Slice Slice
	// IsList tells which of the two it is.
	IsList bool
}

// ListOf is a list-based ListOrSlice.
func ListOf(indices []int) ListOrSlice {
	if indices == nil {
		indices = []int{}
	}
	return ListOrSlice{List: indices, IsList: true}
}

// SliceOf is a slice-based ListOrSlice.
func SliceOf(s Slice) ListOrSlice { return ListOrSlice{Slice: s} }

// Subset is Fuel's fuel.utils.Subset: the examples of a dataset of
// OriginalNumExamples examples that a list of indices (unique and
// sorted; a contiguous list becomes a slice) or a slice of step 1 covers.
type Subset struct {
	ListOrSlice         ListOrSlice
	OriginalNumExamples int
}

// ErrSubset is the error of an invalid subset or request (Fuel's
// ValueError).
var ErrSubset = errors.New("utils: Subset")

func subsetErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSubset}, args...)...)
}

// NewSubset is Fuel's Subset(list_or_slice, original_num_examples).
func NewSubset(ls ListOrSlice, originalNumExamples int) (*Subset, error) {
	if ls.IsList {
		for _, i := range ls.List {
			if i < 0 {
				return nil, subsetErr("Subset instances cannot be defined by a list containing negative indices")
			}
			if i >= originalNumExamples {
				return nil, subsetErr("Subset instances cannot be defined by a list containing indices greater than or equal to the original number of examples (%d >= %d)", i, originalNumExamples)
			}
		}
		ls = beautify(ls.List)
	} else {
		s := ls.Slice
		for _, p := range []*int{s.Start, s.Stop, s.Step} {
			if p != nil && *p < 0 {
				return nil, subsetErr("Subset instances cannot be defined by a slice with negative start, stop or step arguments (%s)", s)
			}
		}
		if s.Step != nil && *s.Step != 1 {
			return nil, subsetErr("Subset doesn't support slices with a step greater than 1 (%s)", s)
		}
		if s.Stop != nil && *s.Stop > originalNumExamples {
			return nil, subsetErr("Subset instances cannot be defined by a slice whose stop value is greater than the original number of examples (%s, %d examples)", s, originalNumExamples)
		}
		if s.Start != nil && *s.Start >= originalNumExamples {
			return nil, subsetErr("Subset instances cannot be defined by a slice whose start value is greater than or equal to the original number of examples (%s, %d examples)", s, originalNumExamples)
		}
		if s.Start != nil && s.Stop != nil && *s.Start > *s.Stop {
			return nil, subsetErr("Subset instances cannot be defined by a slice whose start value is greater than its stop value (%s)", s)
		}
	}
	return &Subset{ListOrSlice: ls, OriginalNumExamples: originalNumExamples}, nil
}

// beautify sorts and dedups a list, and makes a contiguous one a slice.
func beautify(indices []int) ListOrSlice {
	l := slices.Clone(indices)
	slices.Sort(l)
	l = slices.Compact(l)
	if len(l) > 0 && l[len(l)-1]-l[0] == len(l)-1 {
		return SliceOf(Slice{Start: Int(l[0]), Stop: Int(l[len(l)-1] + 1)})
	}
	return ListOf(l)
}

// EmptySubset is Fuel's Subset.empty_subset(original_num_examples).
func EmptySubset(originalNumExamples int) *Subset {
	return &Subset{ListOrSlice: ListOf(nil), OriginalNumExamples: originalNumExamples}
}

// IsList reports whether the subset is list-based.
func (s *Subset) IsList() bool { return s.ListOrSlice.IsList }

// NumExamples is the number of examples the subset spans.
func (s *Subset) NumExamples() int {
	if s.IsList() {
		return len(s.ListOrSlice.List)
	}
	start, stop, _ := s.ListOrSlice.Slice.Numerical(s.OriginalNumExamples)
	return stop - start
}

// IsEmpty reports whether the subset spans no example.
func (s *Subset) IsEmpty() bool { return s.NumExamples() == 0 }

// ListRepresentation is Fuel's get_list_representation(): the indices.
func (s *Subset) ListRepresentation() []int {
	if s.IsList() {
		return slices.Clone(s.ListOrSlice.List)
	}
	start, _, step := s.ListOrSlice.Slice.Numerical(s.OriginalNumExamples)
	out := make([]int, s.NumExamples())
	for i := range out {
		out[i] = start + i*step
	}
	return out
}

// Add is Fuel's Subset.__add__: the union of two subsets of one dataset.
func (s *Subset) Add(o *Subset) (*Subset, error) {
	if s.OriginalNumExamples != o.OriginalNumExamples {
		return nil, subsetErr("trying to add two Subset instances with different numbers of original examples (%d and %d), they can't possibly belong to the same dataset", s.OriginalNumExamples, o.OriginalNumExamples)
	}
	if s.IsEmpty() {
		return o, nil
	}
	if s.IsList() || o.IsList() {
		return NewSubset(ListOf(append(s.ListRepresentation(), o.ListRepresentation()...)), s.OriginalNumExamples)
	}
	a0, a1, step := s.ListOrSlice.Slice.Numerical(s.OriginalNumExamples)
	b0, b1, _ := o.ListOrSlice.Slice.Numerical(o.OriginalNumExamples)
	if !(a1 < b0 || a0 > b1) {
		return NewSubset(SliceOf(Slice{Start: Int(min(a0, b0)), Stop: Int(max(a1, b1)), Step: Int(step)}), s.OriginalNumExamples)
	}
	return NewSubset(ListOf(append(s.ListRepresentation(), o.ListRepresentation()...)), s.OriginalNumExamples)
}

// CheckListRequest is Fuel's _list_request_sanity_check.
func CheckListRequest(indices []int, numExamples int) error {
	if len(indices) == 0 {
		return subsetErr("list-based requests cannot be empty (this would produce an empty return value)")
	}
	for _, i := range indices {
		if i < 0 {
			return subsetErr("Subset does not support list-based requests with negative indices")
		}
		if i >= numExamples {
			return subsetErr("list-based requests cannot contain indices greater than or equal to the number of examples the subset spans (%d >= %d)", i, numExamples)
		}
	}
	return nil
}

// CheckSliceRequest is Fuel's _slice_request_sanity_check.
func CheckSliceRequest(s Slice, numExamples int) error {
	for _, p := range []*int{s.Start, s.Stop, s.Step} {
		if p != nil && *p < 0 {
			return subsetErr("Subset does not support slice-based requests with negative start, stop or step arguments (%s)", s)
		}
	}
	if s.Stop != nil && *s.Stop > numExamples {
		return subsetErr("slice-based requests cannot have a stop value greater than the number of examples the subset spans (%s, %d examples)", s, numExamples)
	}
	if s.Start != nil && *s.Start >= numExamples {
		return subsetErr("slice-based requests cannot have a start value greater than the number of examples the subset spans (%s, %d examples)", s, numExamples)
	}
	if s.Start != nil && s.Stop != nil && *s.Start >= *s.Stop {
		return subsetErr("slice-based requests cannot have a start value greater than or equal to its stop value (%s)", s)
	}
	return nil
}

// Translate is Fuel's Subset.__getitem__: a request within the subset
// (a list of indices or a slice) as a request on the dataset.
func (s *Subset) Translate(req ListOrSlice) (ListOrSlice, error) {
	n := s.NumExamples()
	if req.IsList {
		if err := CheckListRequest(req.List, n); err != nil {
			return ListOrSlice{}, err
		}
	} else if err := CheckSliceRequest(req.Slice, n); err != nil {
		return ListOrSlice{}, err
	}
	if !req.IsList && req.Slice.IsFull() {
		return s.ListOrSlice, nil
	}
	if req.IsList {
		out := make([]int, len(req.List))
		if s.IsList() {
			for i, k := range req.List {
				out[i] = s.ListOrSlice.List[k]
			}
		} else {
			start, _, step := s.ListOrSlice.Slice.Numerical(s.OriginalNumExamples)
			for i, k := range req.List {
				out[i] = start + k*step
			}
		}
		return ListOf(out), nil
	}
	if s.IsList() {
		k0, k1, ks := req.Slice.Numerical(n)
		var out []int
		for k := k0; k < k1; k += ks {
			out = append(out, s.ListOrSlice.List[k])
		}
		return ListOf(out), nil
	}
	start, _, step := s.ListOrSlice.Slice.Numerical(s.OriginalNumExamples)
	k0, k1, ks := req.Slice.Numerical(n)
	return SliceOf(Slice{Start: Int(start + step*k0), Stop: Int(start + step*k1), Step: Int(step * ks)}), nil
}

// SubsetOf is Fuel's Subset.subset_of(subset, list_or_slice).
func SubsetOf(s *Subset, ls ListOrSlice) (*Subset, error) {
	t, err := s.Translate(ls)
	if err != nil {
		return nil, err
	}
	return NewSubset(t, s.OriginalNumExamples)
}

// Indices are the dataset indices a translated request selects.
func (ls ListOrSlice) Indices(numExamples int) []int {
	if ls.IsList {
		return slices.Clone(ls.List)
	}
	start, stop, step := ls.Slice.Numerical(numExamples)
	var out []int
	for i := start; i < stop; i += step {
		out = append(out, i)
	}
	return out
}
