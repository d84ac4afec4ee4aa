package starlib

import "go.starlark.net/starlark"

// Strings returns the elements of the Starlark iterable v (a list, tuple,
// set, ...), which must all be strings. When v is not iterable (nil
// included) or holds something else than a string, ok is false and bad is
// v or that element, for the caller's message: "got " + bad.Type().
// A string is not iterable in Starlark, so Strings("abc") is not ok.
func Strings(v starlark.Value) (ss []string, bad starlark.Value, ok bool) {
	it, isIter := v.(starlark.Iterable)
	if !isIter || v == nil {
		return nil, v, false
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
