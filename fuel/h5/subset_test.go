package h5

import (
	"slices"
	"testing"

	"github.com/blocks-go/blocks/fuel"
)

func mustSlice(t *testing.T, a, b int) indexSet {
	t.Helper()
	s, err := sliceSet(a, b, 100)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustList(t *testing.T, idx ...int) indexSet {
	t.Helper()
	s, err := listSet(idx, 100)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestIndexSet checks the subset algebra against Fuel's utils.Subset.
func TestIndexSet(t *testing.T) {
	// Lists are sorted and de-duplicated; contiguous ones become slices.
	if s := mustList(t, 5, 3, 4, 3); s.isList || s.start != 3 || s.stop != 6 {
		t.Errorf("contiguous list: %+v, want slice [3, 6)", s)
	}
	if s := mustList(t, 9, 2, 2, 7); !s.isList || !slices.Equal(s.list, []int{2, 7, 9}) {
		t.Errorf("list: %+v, want [2 7 9]", s)
	}
	for _, c := range []struct {
		a, b indexSet
		want []int
		list bool
	}{
		{mustSlice(t, 0, 10), mustSlice(t, 10, 20), span(0, 20), false}, // adjacent
		{mustSlice(t, 0, 10), mustSlice(t, 5, 8), span(0, 10), false},   // nested
		{mustSlice(t, 10, 20), mustSlice(t, 0, 12), span(0, 20), false}, // overlapping
		{mustSlice(t, 0, 3), mustSlice(t, 5, 7), []int{0, 1, 2, 5, 6}, true},
		{mustSlice(t, 0, 3), mustList(t, 3, 5), []int{0, 1, 2, 3, 5}, true},
		{mustList(t, 4, 6), mustList(t, 5), []int{4, 5, 6}, false},
		{mustList(t), mustSlice(t, 2, 4), []int{2, 3}, false},
		{mustSlice(t, 2, 4), mustSlice(t, 7, 7), []int{2, 3}, false},
	} {
		u := c.a.union(c.b)
		if !slices.Equal(u.indices(), c.want) || u.isList != c.list {
			t.Errorf("%+v + %+v = %+v, want %v (list %v)", c.a, c.b, u, c.want, c.list)
		}
	}

	// Requests within a list-based set.
	s := mustList(t, 2, 7, 9, 11)
	r, err := s.translate(fuel.Request{Start: 1, Stop: 3})
	if err != nil || !r.isList || !slices.Equal(r.list, []int{7, 9}) {
		t.Errorf("slice request: %+v, %v", r, err)
	}
	r, err = s.translate(fuel.Request{Indices: []int{3, 0, 3}})
	if err != nil || !slices.Equal(r.list, []int{11, 2, 11}) {
		t.Errorf("list request: %+v, %v", r, err)
	}
	r, err = s.translate(fuel.Request{Indices: []int{2}, Single: true})
	if err != nil || !r.single || r.list[0] != 9 {
		t.Errorf("single request: %+v, %v", r, err)
	}
	// Subsets of a slice-based set.
	sub, err := mustSlice(t, 10, 20).subsetOf(Range(3, End))
	if err != nil || sub.isList || sub.start != 13 || sub.stop != 20 {
		t.Errorf("subset [3:] of [10, 20): %+v, %v", sub, err)
	}
	sub, err = mustSlice(t, 10, 20).subsetOf(Indices(4, 0, 4))
	if err != nil || !slices.Equal(sub.indices(), []int{10, 14}) {
		t.Errorf("subset [4 0 4] of [10, 20): %+v, %v", sub, err)
	}
	for _, bad := range []indexSet{{start: -1, stop: 2}, {start: 3, stop: 2}, {start: 0, stop: 101}} {
		if _, err := sliceSet(bad.start, bad.stop, 100); err == nil {
			t.Errorf("slice [%d, %d) of 100 rows: no error", bad.start, bad.stop)
		}
	}
	if _, err := listSet([]int{3, 100}, 100); err == nil {
		t.Error("index 100 of 100 rows: no error")
	}
}

// span is [a, b) as a list.
func span(a, b int) []int {
	var out []int
	for i := a; i < b; i++ {
		out = append(out, i)
	}
	return out
}
