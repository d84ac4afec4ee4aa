package h5

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/fuel"
)

// End stands for "the end of the split" as a Subset's Stop, like Python's
// slice(start, None).
const End = -1

// Subset is Fuel's `subset` argument: which examples, within the
// concatenation of the chosen splits, the dataset uses. It is the slice
// [Start, Stop) when Indices is nil, else the listed examples. As in Fuel,
// a list is sorted and de-duplicated (it selects a set; its order is not
// kept), and a subset may not be empty.
type Subset struct {
	Start, Stop int
	Indices     []int
}

// Range is the subset [start, stop); stop may be End.
func Range(start, stop int) *Subset { return &Subset{Start: start, Stop: stop} }

// Indices is the subset of the listed examples.
func Indices(indices ...int) *Subset {
	return &Subset{Indices: append([]int{}, indices...)}
}

func (s *Subset) String() string {
	if s.Indices != nil {
		return fmt.Sprint(s.Indices)
	}
	if s.Stop == End {
		return fmt.Sprintf("[%d:]", s.Start)
	}
	return fmt.Sprintf("[%d:%d]", s.Start, s.Stop)
}

// indexSet is Fuel's utils.Subset: a set of row indices into a source of
// total rows, either the slice [start, stop) or a sorted list of distinct
// indices. A contiguous non-empty list is always stored as a slice, so
// two equal sets have equal representations.
type indexSet struct {
	isList      bool
	start, stop int   // the slice, when !isList
	list        []int // sorted, distinct, when isList
	total       int   // the number of rows of the source
}

// sliceSet is the set [start, stop) of a source of total rows.
func sliceSet(start, stop, total int) (indexSet, error) {
	if start < 0 || stop < start || stop > total {
		return indexSet{}, fmt.Errorf("range [%d, %d) does not fit in %d examples", start, stop, total)
	}
	return indexSet{start: start, stop: stop, total: total}, nil
}

// listSet is the set of the given row indices (sorted and de-duplicated,
// as Fuel's Subset does).
func listSet(indices []int, total int) (indexSet, error) {
	list := slices.Clone(indices)
	slices.Sort(list)
	list = slices.Compact(list)
	if len(list) > 0 && (list[0] < 0 || list[len(list)-1] >= total) {
		return indexSet{}, fmt.Errorf("indices between %d and %d do not fit in %d examples", list[0], list[len(list)-1], total)
	}
	if len(list) > 0 && list[len(list)-1]-list[0] == len(list)-1 {
		return indexSet{start: list[0], stop: list[len(list)-1] + 1, total: total}, nil
	}
	if list == nil {
		list = []int{}
	}
	return indexSet{isList: true, list: list, total: total}, nil
}

// len is the number of rows in the set.
func (s indexSet) len() int {
	if s.isList {
		return len(s.list)
	}
	return s.stop - s.start
}

// at is the row index of the set's i-th element.
func (s indexSet) at(i int) int {
	if s.isList {
		return s.list[i]
	}
	return s.start + i
}

// indices lists the set's row indices in order.
func (s indexSet) indices() []int {
	if s.isList {
		return slices.Clone(s.list)
	}
	out := make([]int, s.len())
	for i := range out {
		out[i] = s.start + i
	}
	return out
}

// union is Fuel's Subset.__add__: the set union (overlapping or adjacent
// slices stay a slice).
func (s indexSet) union(o indexSet) indexSet {
	if s.len() == 0 {
		return o
	}
	if o.len() == 0 {
		return s
	}
	if !s.isList && !o.isList && s.stop >= o.start && o.stop >= s.start {
		return indexSet{start: min(s.start, o.start), stop: max(s.stop, o.stop), total: s.total}
	}
	u, _ := listSet(append(s.indices(), o.indices()...), s.total)
	return u
}

// request is a request translated to a source's rows: the slice
// [start, stop), or the rows in list (in request order, possibly
// repeated), or the one row list[0] without a batch axis when single.
type request struct {
	isList      bool
	start, stop int
	list        []int
	single      bool
}

// rows is the number of rows the request reads.
func (r request) rows() int {
	if r.isList {
		return len(r.list)
	}
	return r.stop - r.start
}

// translate maps a request made within the set (indices 0..len-1) to
// the source's rows, checking it as Fuel does: a slice must be non-empty
// and in range, a list non-empty and in range.
func (s indexSet) translate(req fuel.Request) (request, error) {
	n := s.len()
	switch {
	case req.Single:
		if len(req.Indices) != 1 {
			return request{}, fmt.Errorf("a single-example request needs exactly one index, got %d", len(req.Indices))
		}
		i := req.Indices[0]
		if i < 0 || i >= n {
			return request{}, fmt.Errorf("example %d out of range for %d examples", i, n)
		}
		return request{isList: true, list: []int{s.at(i)}, single: true}, nil
	case req.Indices != nil:
		if len(req.Indices) == 0 {
			return request{}, fmt.Errorf("empty list request")
		}
		list := make([]int, len(req.Indices))
		for k, i := range req.Indices {
			if i < 0 || i >= n {
				return request{}, fmt.Errorf("example %d out of range for %d examples", i, n)
			}
			list[k] = s.at(i)
		}
		return request{isList: true, list: list}, nil
	}
	if req.Start < 0 || req.Start >= req.Stop || req.Stop > n {
		return request{}, fmt.Errorf("slice request [%d:%d] out of range for %d examples (it must be non-empty)", req.Start, req.Stop, n)
	}
	if s.isList {
		return request{isList: true, list: slices.Clone(s.list[req.Start:req.Stop])}, nil
	}
	return request{start: s.start + req.Start, stop: s.start + req.Stop}, nil
}

// subsetOf is Fuel's Subset.subset_of: the part of s that sub selects.
func (s indexSet) subsetOf(sub *Subset) (indexSet, error) {
	n := s.len()
	if sub.Indices != nil {
		if len(sub.Indices) == 0 {
			return indexSet{}, fmt.Errorf("subset %v is empty", sub)
		}
		rows := make([]int, len(sub.Indices))
		for k, i := range sub.Indices {
			if i < 0 || i >= n {
				return indexSet{}, fmt.Errorf("subset %v: example %d out of range for %d examples", sub, i, n)
			}
			rows[k] = s.at(i)
		}
		return listSet(rows, s.total)
	}
	stop := sub.Stop
	if stop == End {
		stop = n
	}
	if sub.Start < 0 || sub.Start >= stop || stop > n {
		return indexSet{}, fmt.Errorf("subset %v out of range for %d examples (it must be non-empty)", sub, n)
	}
	if s.isList {
		return listSet(s.list[sub.Start:stop], s.total)
	}
	return indexSet{start: s.start + sub.Start, stop: s.start + stop, total: s.total}, nil
}
