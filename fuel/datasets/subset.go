package datasets

import (
	"fmt"
	"slices"
)

// Subset is the subset= argument of Fuel's H5PYDataset (and so of MNIST):
// the examples to keep, within the union of the chosen splits. It is the
// slice [Start:Stop] (nil bounds are None; Fuel accepts no negative bound
// and no step), or, when Indices is non-nil, a list of indices, which
// Fuel sorts and de-duplicates. An empty list means no subset at all,
// as in Fuel (`subset if subset else slice(None)`).
type Subset struct {
	Start, Stop *int
	Indices     []int
}

// SliceSubset is the subset slice(start, stop).
func SliceSubset(start, stop int) *Subset { return &Subset{Start: Int(start), Stop: Int(stop)} }

// ListSubset is the subset given by a list of indices.
func ListSubset(indices []int) *Subset { return &Subset{Indices: slices.Clone(indices)} }

// resolve returns the rows of a range of n examples the subset keeps: the
// slice [lo, hi) when rows is nil, else rows (sorted, unique). It applies
// the sanity checks of Fuel's Subset.subset_of (those of a request).
func (s *Subset) resolve(n int) (lo, hi int, rows []int, err error) {
	if s == nil || (s.Indices != nil && len(s.Indices) == 0) {
		return 0, n, nil, nil
	}
	if s.Indices != nil {
		rows = slices.Clone(s.Indices)
		slices.Sort(rows)
		rows = slices.Compact(rows)
		if rows[0] < 0 {
			return 0, 0, nil, fmt.Errorf("subset: negative index %d", rows[0])
		}
		if last := rows[len(rows)-1]; last >= n {
			return 0, 0, nil, fmt.Errorf("subset: index %d out of range: the chosen splits hold %d examples", last, n)
		}
		// Fuel turns a contiguous list into a slice; the data are the same.
		if rows[len(rows)-1]-rows[0] == len(rows)-1 {
			return rows[0], rows[len(rows)-1] + 1, nil, nil
		}
		return 0, 0, rows, nil
	}
	lo, hi = 0, n
	if s.Start != nil {
		lo = *s.Start
	}
	if s.Stop != nil {
		hi = *s.Stop
	}
	switch {
	case lo < 0 || hi < 0:
		return 0, 0, nil, fmt.Errorf("subset: slice [%d:%d] has a negative bound", lo, hi)
	case hi > n:
		return 0, 0, nil, fmt.Errorf("subset: slice [%d:%d] stops past the %d examples of the chosen splits", lo, hi, n)
	case lo >= n:
		return 0, 0, nil, fmt.Errorf("subset: slice [%d:%d] starts past the %d examples of the chosen splits", lo, hi, n)
	case lo >= hi:
		return 0, 0, nil, fmt.Errorf("subset: slice [%d:%d] is empty", lo, hi)
	}
	return lo, hi, nil, nil
}

func (s *Subset) String() string {
	if s == nil {
		return "None"
	}
	if s.Indices != nil {
		return fmt.Sprint(s.Indices)
	}
	b := func(p *int) string {
		if p == nil {
			return "None"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("slice(%s, %s)", b(s.Start), b(s.Stop))
}
