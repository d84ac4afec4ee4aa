package h5

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/nd"
)

// The pure-Go part of reading a Fuel file: what HDF5 hands over (the
// columns of the `split` attribute as raw memory, the shapes matrix of a
// variable-length source) is decoded and checked here, so that it can be
// fuzzed without HDF5 files (FuzzSplitDecoding, FuzzVlenShapes).

// fixedStrings decodes n NUL-padded strings of size bytes each from buf
// (HDF5's fixed-length string column).
func fixedStrings(buf []byte, size, n int) ([]string, error) {
	if size < 0 || n < 0 || (size > 0 && n > len(buf)/size) || size*n != len(buf) {
		return nil, fmt.Errorf("%d bytes for %d strings of %d bytes", len(buf), n, size)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = trimNul(buf[i*size : (i+1)*size])
	}
	return out, nil
}

// trimTrailingNul is a fixed-length string element as numpy gives it:
// a copy without its trailing NULs (inner NULs are kept).
func trimTrailingNul(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return append([]byte{}, b[:n]...)
}

// enumBools decodes n booleans of size bytes each (h5py's bool enum, in
// its native integer type): any non-zero byte is true.
func enumBools(buf []byte, size, n int) ([]bool, error) {
	if size <= 0 || n < 0 || n > len(buf)/size || size*n != len(buf) {
		return nil, fmt.Errorf("%d bytes for %d booleans of %d bytes", len(buf), n, size)
	}
	out := make([]bool, n)
	for i := range out {
		for _, b := range buf[i*size : (i+1)*size] {
			out[i] = out[i] || b != 0
		}
	}
	return out, nil
}

// splitRows builds the rows of the `split` attribute from its columns
// (split, source, start, stop, available, comment; indices are followed
// by the caller) and checks them: the columns agree in length, starts and
// stops fit in an int, and no (split, source) pair has two rows.
func splitRows(splits, sources []string, starts, stops []int64, avail []bool, comments []string) (Split, error) {
	n := len(splits)
	if len(sources) != n || len(starts) != n || len(stops) != n || len(avail) != n || len(comments) != n {
		return nil, fmt.Errorf("the split attribute's fields have different lengths")
	}
	if n == 0 {
		return nil, fmt.Errorf("the split attribute is empty")
	}
	rows := make(Split, n)
	for i := range rows {
		if starts[i] < math.MinInt || starts[i] > math.MaxInt || stops[i] < math.MinInt || stops[i] > math.MaxInt {
			return nil, fmt.Errorf("split %q, source %q: start %d or stop %d does not fit in an int", splits[i], sources[i], starts[i], stops[i])
		}
		rows[i] = SplitRow{Split: splits[i], Source: sources[i], Start: int(starts[i]), Stop: int(stops[i]),
			Available: avail[i], Comment: comments[i]}
	}
	for i, a := range rows {
		for _, b := range rows[:i] {
			if a.Split == b.Split && a.Source == b.Source {
				return nil, fmt.Errorf("the split attribute has two rows for split %q, source %q", a.Split, a.Source)
			}
		}
	}
	return rows, nil
}

// sourceRows is the union of the rows of source name in the chosen splits
// (Fuel's get_subsets), for a source of total examples.
func sourceRows(split Split, whichSets []string, name string, total int) (indexSet, error) {
	var rows indexSet
	for i, ws := range whichSets {
		row, ok := split.Row(ws, name)
		if !ok {
			return indexSet{}, fmt.Errorf("no split row for split %q", ws)
		}
		var set indexSet
		var err error
		if row.IndicesPath != "" {
			set, err = listSet(row.Indices, total)
		} else {
			set, err = sliceSet(row.Start, row.Stop, total)
		}
		if err != nil {
			return indexSet{}, fmt.Errorf("split %q: %w", ws, err)
		}
		if i == 0 {
			rows = set
		} else {
			rows = rows.union(set)
		}
	}
	return rows, nil
}

// shapesMatrix decodes the shapes of a variable-length source: rows
// examples of cols dimensions each, row-major in flat. Every dimension
// must be non-negative and every example's size must fit in memory.
func shapesMatrix(flat []int64, rows, cols int) ([][]int, error) {
	if rows < 0 || cols < 0 || (cols > 0 && rows > len(flat)/cols) || rows*cols != len(flat) {
		return nil, fmt.Errorf("%d values for a %d×%d shapes matrix", len(flat), rows, cols)
	}
	out := make([][]int, rows)
	for i := range out {
		row := make([]int, cols)
		for j := range row {
			v := flat[i*cols+j]
			if v < 0 || v > math.MaxInt32 {
				return nil, fmt.Errorf("example %d has shape %v: dimension %d is %d", i, flat[i*cols:(i+1)*cols], j, v)
			}
			row[j] = int(v)
		}
		if _, ok := nd.ProdChecked(row); !ok {
			return nil, fmt.Errorf("example %d has shape %v, too large", i, row)
		}
		out[i] = row
	}
	return out, nil
}

// reshapeVlen gives the flat elements of variable-length example row its
// shape.
func reshapeVlen(flat *nd.Array, row int, shape []int) (*nd.Array, error) {
	n, ok := nd.ProdChecked(shape)
	if !ok || n != flat.Size() {
		return nil, fmt.Errorf("example %d has %d elements, its shape %v needs %d", row, flat.Size(), shape, n)
	}
	return flat.Reshape(shape...)
}
