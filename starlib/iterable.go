package starlib

import "go.starlark.net/starlark"

// StringList is the Starlark list of the strings ss (Strings' inverse).
func StringList(ss []string) *starlark.List {
	out := make([]starlark.Value, len(ss))
	for i, s := range ss {
		out[i] = starlark.String(s)
	}
	return starlark.NewList(out)
}

// Strings returns the elements of the Starlark iterable v (a list, tuple,
// set, ...), which must all be strings. ok is false when v is not
// iterable (nil included; a string is not iterable in Starlark), with
// elem nil, or when an element is not a string, with elem that element:
// the caller says which in its message ("got " + elem.Type()).
func Strings(v starlark.Value) (ss []string, elem starlark.Value, ok bool) {
	it, isIter := v.(starlark.Iterable)
	if !isIter || v == nil {
		return nil, nil, false
	}
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		s, isStr := starlark.AsString(x)
		if !isStr {
			return nil, x, false
		}
		ss = append(ss, s)
	}
	return ss, nil, true
}
