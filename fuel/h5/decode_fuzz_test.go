package h5

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// splitColumns cuts fuzzer bytes into the columns of a `split`
// attribute as HDF5 hands them over: n rows, NUL-padded strings of size
// bytes (split, source, comment), int64 starts and stops, 1-byte bools.
func splitColumns(data []byte, n, size int) (splits, sources, comments []string, starts, stops []int64, avail []bool, err error) {
	take := func(k int) []byte {
		if k > len(data) {
			k = len(data)
		}
		b := data[:k]
		data = data[k:]
		return b
	}
	if splits, err = fixedStrings(take(n*size), size, n); err != nil {
		return
	}
	if sources, err = fixedStrings(take(n*size), size, n); err != nil {
		return
	}
	ints := func() []int64 {
		out := make([]int64, n)
		for i := range out {
			if b := take(8); len(b) == 8 {
				out[i] = int64(binary.LittleEndian.Uint64(b))
			}
		}
		return out
	}
	starts, stops = ints(), ints()
	if avail, err = enumBools(take(n), 1, n); err != nil {
		return
	}
	comments, err = fixedStrings(take(n*size), size, n)
	return
}

// FuzzSplitDecoding decodes fuzzed `split` columns and uses the rows as
// the reader does: the union of a source's rows in the chosen splits for
// a source of total examples, then requests (slice, list, single) and a
// subset within it. Errors, never a panic, and every row a request
// reaches is within the source.
func FuzzSplitDecoding(f *testing.F) {
	row := func(split, source string, start, stop int64, avail byte) []byte {
		var b []byte
		pad := func(s string) []byte { return append([]byte(s), make([]byte, 8-len(s))...) }
		b = append(b, pad(split)...)
		b = append(b, pad(source)...)
		b = binary.LittleEndian.AppendUint64(b, uint64(start))
		b = binary.LittleEndian.AppendUint64(b, uint64(stop))
		return append(append(b, avail), pad(".")...)
	}
	f.Add(row("train", "features", 0, 50, 1), uint8(1), uint8(8), 60, "train", "features", 3, 10)
	f.Add(row("test", "targets", 10, 5, 1), uint8(1), uint8(8), 60, "test", "targets", 0, 1)
	f.Add(row("train", "x", -1, 1<<62, 1), uint8(1), uint8(8), 1<<62, "train", "x", 0, 2)
	f.Add([]byte{}, uint8(0), uint8(0), 0, "", "", 0, 0)
	f.Fuzz(func(t *testing.T, data []byte, n, size uint8, total int, which, name string, start, stop int) {
		rows := int(n % 8)
		splits, sources, comments, starts, stops, avail, err := splitColumns(data, rows, int(size%32))
		if err != nil {
			return
		}
		split, err := splitRows(splits, sources, starts, stops, avail, comments)
		if err != nil {
			return
		}
		_ = split.Splits()
		_ = split.ProvidedSources(which)
		if total < 0 || total > 1<<40 {
			return
		}
		set, err := sourceRows(split, []string{which, split[0].Split}, name, total)
		if err != nil {
			return
		}
		check := func(r request) {
			if r.isList {
				for _, i := range r.list {
					if i < 0 || i >= total {
						t.Fatalf("row %d outside a source of %d examples", i, total)
					}
				}
			} else if r.start < 0 || r.stop > total || r.start > r.stop {
				t.Fatalf("rows [%d, %d) outside a source of %d examples", r.start, r.stop, total)
			}
		}
		for _, req := range []fuel.Request{
			{Start: start, Stop: stop},
			{Indices: []int{start, stop}},
			{Indices: []int{start}, Single: true},
		} {
			if r, err := set.translate(req); err == nil {
				check(r)
			}
		}
		if sub, err := set.subsetOf(&Subset{Start: start, Stop: stop}); err == nil {
			if r, err := sub.translate(fuel.Request{Start: 0, Stop: sub.len()}); err == nil {
				check(r)
			}
		}
	})
}

// FuzzVlenShapes decodes a fuzzed shapes matrix of a variable-length
// source and reshapes flat examples to it: errors for negative or
// overflowing shapes, never a panic.
func FuzzVlenShapes(f *testing.F) {
	mat := func(vals ...int64) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	f.Add(mat(2, 3, 1, 4), 2, 2, 6)
	f.Add(mat(-1, 6), 1, 2, 6)
	f.Add(mat(1<<32, 1<<32), 1, 2, 0)
	f.Add(mat(0, 5), 1, 2, 0)
	f.Fuzz(func(t *testing.T, data []byte, rows, cols, elems int) {
		flat := make([]int64, len(data)/8)
		for i := range flat {
			flat[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
		shapes, err := shapesMatrix(flat, rows, cols)
		if err != nil || elems < 0 || elems > 1<<16 {
			return
		}
		flatEx := nd.New(nd.Float32, elems)
		for i, s := range shapes {
			a, err := reshapeVlen(flatEx, i, s)
			if err != nil {
				continue
			}
			if n, ok := nd.ProdChecked(a.Shape); !ok || n != elems || !slices.Equal(a.Shape, s) {
				t.Fatalf("example %d reshaped to %v from %d elements", i, a.Shape, elems)
			}
		}
	})
}
