package blocks

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// beamSearchClass is blocks.search.BeamSearch: called, it makes a beam
// search over a generator (newBeamSearch); it also holds Blocks' static
// method
//
//	BeamSearch._smallest(matrix, k, only_first_row=False)
//	    ((rows, cols), values): the k smallest entries of a matrix (of its
//	    first row only with only_first_row), smallest first
type beamSearchClass struct{}

func (beamSearchClass) String() string       { return "<class 'BeamSearch'>" }
func (beamSearchClass) Type() string         { return "type" }
func (beamSearchClass) Freeze()              {}
func (beamSearchClass) Truth() starlark.Bool { return true }
func (beamSearchClass) Hash() (uint32, error) {
	return starlark.String("blocks.search.BeamSearch").Hash()
}
func (beamSearchClass) Name() string { return "BeamSearch" }

// CallInternal makes a BeamSearch.
func (beamSearchClass) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
	defer starlib.RecoverInternal("BeamSearch", &err)
	return newBeamSearch(thread, nil, args, kwargs)
}

// AttrNames lists _smallest.
func (beamSearchClass) AttrNames() []string { return []string{"_smallest"} }

// Attr returns _smallest.
func (beamSearchClass) Attr(name string) (starlark.Value, error) {
	if name != "_smallest" {
		return nil, nil
	}
	return starlib.NewBuiltin("_smallest", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var mv starlark.Value
		var k int
		firstRow := false
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "matrix", &mv, "k", &k, "only_first_row?", &firstRow); err != nil {
			return nil, err
		}
		m, err := starlib.ToArray(mv, nil)
		if err != nil {
			return nil, fmt.Errorf("_smallest: matrix: %v", err)
		}
		if m.NDim() != 2 {
			return nil, fmt.Errorf("_smallest: matrix must be 2-d, got shape %v", m.Shape)
		}
		n := m.Size()
		if firstRow {
			n = m.Shape[1]
		}
		if k < 1 || k > n {
			return nil, fmt.Errorf("_smallest: k must be between 1 and %d, got %d", n, k)
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return m.Flat(idx[a]) < m.Flat(idx[b]) })
		rows, cols, vals := nd.New(nd.Int64, k), nd.New(nd.Int64, k), nd.New(m.DType(), k)
		for i, j := range idx[:k] {
			rows.SetFlat(i, float64(j/m.Shape[1]))
			cols.SetFlat(i, float64(j%m.Shape[1]))
			vals.SetFlat(i, m.Flat(j))
		}
		return starlark.Tuple{starlark.Tuple{starlib.FromArray(rows), starlib.FromArray(cols)}, starlib.FromArray(vals)}, nil
	}), nil
}
