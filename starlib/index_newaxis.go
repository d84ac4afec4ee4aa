package starlib

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
)

// splitNewaxis takes the None entries (numpy.newaxis) out of an index key.
// It returns the key without them and, when there were any, the
// dimshuffle pattern that inserts the new axes into the result of
// indexing with that key (-1 for a new axis of length 1); pattern is nil
// when the key has no None. ndim is the indexed value's number of axes.
func splitNewaxis(key starlark.Value, ndim int) (starlark.Value, []int) {
	items := starlark.Tuple{key}
	if t, ok := key.(starlark.Tuple); ok {
		items = t
	}
	var rest starlark.Tuple
	consumed := 0 // axes of the value that the key's items index
	hasNone := false
	for _, it := range items {
		switch it := it.(type) {
		case starlark.NoneType:
			hasNone = true
			continue
		case starlark.String:
			if isEllipsis(it) {
				rest = append(rest, it)
				continue
			}
		}
		consumed++
		rest = append(rest, it)
	}
	if !hasNone {
		return key, nil
	}
	var pattern []int
	out := 0 // next axis of the indexed result
	keep := func() { pattern = append(pattern, out); out++ }
	for _, it := range items {
		switch it := it.(type) {
		case starlark.NoneType:
			pattern = append(pattern, -1)
			continue
		case starlark.Int:
			continue // an int index drops its axis
		case starlark.String:
			if isEllipsis(it) {
				for i := consumed; i < ndim; i++ {
					keep()
				}
				consumed = ndim
				continue
			}
		}
		keep()
	}
	for i := consumed; i < ndim; i++ {
		keep()
	}
	if len(rest) == 0 {
		rest = starlark.Tuple{starlark.String("...")}
	}
	return rest, pattern
}

func isEllipsis(s starlark.String) bool {
	for _, c := range string(s) {
		if c != ' ' && c != '.' {
			return false
		}
	}
	return len(s) > 0 && containsDots(string(s))
}

func containsDots(s string) bool {
	n := 0
	for _, c := range s {
		if c == '.' {
			n++
		}
	}
	return n == 3
}

// insertNewaxes applies a splitNewaxis pattern to an indexed result.
func insertNewaxes(v *core.Variable, pattern []int) (*core.Variable, error) {
	if pattern == nil {
		return v, nil
	}
	return core.Dimshuffle(v, pattern)
}
