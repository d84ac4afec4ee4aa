package kernels

import "github.com/blocks-go/blocks/nd"

// Row copies of the lookup-table ops (core's take and its gradient) and
// RepeatLike on float data, without a view per row: a language model's
// step looks up T·B rows, and a view each allocated twice per row.

// TakeRows copies table rows picked by idx into rows of dense (scatter
// false: dense[i] = table[idx[i]]), or adds rows of dense into the table
// rows (scatter true: table[idx[i]] += dense[i], in index order). It
// reports false, doing nothing, for data it does not handle (the callers'
// generic loops do) and leaves index checks to the op's Check.
func TakeRows(dense, table, idx *nd.Array, row int, scatter bool) bool {
	switch d := dense.Data.(type) {
	case []float32:
		t, ok := table.Data.([]float32)
		return ok && takeRows(d, t, idx, row, scatter)
	case []float64:
		t, ok := table.Data.([]float64)
		return ok && takeRows(d, t, idx, row, scatter)
	}
	return false
}

func takeRows[T float32 | float64](dense, table []T, idx *nd.Array, row int, scatter bool) bool {
	switch ix := idx.Data.(type) {
	case []int64:
		return takeRowsIdx(dense, table, ix, row, scatter)
	case []int32:
		return takeRowsIdx(dense, table, ix, row, scatter)
	}
	return false
}

func takeRowsIdx[T float32 | float64, I int32 | int64](dense, table []T, idx []I, row int, scatter bool) bool {
	if len(dense) < len(idx)*row {
		return false
	}
	for _, j := range idx {
		if j < 0 || (int(j)+1)*row > len(table) {
			return false
		}
	}
	for i, j := range idx {
		src, dst := table[int(j)*row:(int(j)+1)*row], dense[i*row:(i+1)*row]
		if scatter {
			for k, v := range dst {
				src[k] += v
			}
		} else {
			copy(dst, src)
		}
	}
	return true
}

// RepeatRows stacks copies of x into out (float data); false, doing
// nothing, for other data.
func RepeatRows(out, x *nd.Array) bool {
	switch o := out.Data.(type) {
	case []float32:
		s, ok := x.Data.([]float32)
		return ok && repeatRows(o, s)
	case []float64:
		s, ok := x.Data.([]float64)
		return ok && repeatRows(o, s)
	}
	return false
}

func repeatRows[T float32 | float64](out, x []T) bool {
	n := len(x)
	if n == 0 {
		return len(out) == 0
	}
	for b := 0; b+n <= len(out); b += n {
		copy(out[b:b+n], x)
	}
	return true
}
