package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
)

// collectionBuiltins are Starlark's dict, tuple and list built as Python
// builds them: dict(iterable) from any iterable of pairs, a pair being any
// iterable of two items (a tuple, a list, an array row, a two-character
// string, an iterator), and tuple(s), list(s) of a string its characters.
// Anything else goes to Starlark's own. hash(x) is Python's: the hash of
// any hashable value (a selector Path, a tuple, a brick), equal for equal
// values; Starlark's takes strings only (and stays what hash gives a
// string or bytes). Unlike Python's, it is the same in every run (a script
// that seeds from it stays deterministic): a tuple's from its items', a
// number's its value's, any other hashable value's from its type and text.
func collectionBuiltins() starlark.StringDict {
	orig := func(name string) *starlark.Builtin { return starlark.Universe[name].(*starlark.Builtin) }
	dict, tuple, list, hash := orig("dict"), orig("tuple"), orig("list"), orig("hash")
	return starlark.StringDict{
		"hash": NewBuiltin("hash", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) != 1 || len(kwargs) != 0 {
				return hash.CallInternal(thread, args, kwargs)
			}
			h, err := stableHash(thread, hash, args[0])
			if err != nil {
				return nil, err
			}
			return starlark.MakeInt64(h), nil
		}),
		"dict": NewBuiltin("dict", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) != 1 {
				return dict.CallInternal(thread, args, kwargs)
			}
			if _, ok := args[0].(starlark.IterableMapping); ok {
				return dict.CallInternal(thread, args, kwargs)
			}
			d := starlark.NewDict(0)
			if err := pairsInto(d, args[0]); err != nil {
				return nil, err
			}
			for _, kv := range kwargs {
				if err := d.SetKey(kv[0], kv[1]); err != nil {
					return nil, err
				}
			}
			return d, nil
		}),
		"tuple": NewBuiltin("tuple", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if s, ok := oneString(args, kwargs); ok {
				return starlark.Tuple(chars(s)), nil
			}
			return tuple.CallInternal(thread, args, kwargs)
		}),
		"list": NewBuiltin("list", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if s, ok := oneString(args, kwargs); ok {
				return starlark.NewList(chars(s)), nil
			}
			return list.CallInternal(thread, args, kwargs)
		}),
	}
}

func oneString(args starlark.Tuple, kwargs []starlark.Tuple) (string, bool) {
	if len(args) != 1 || len(kwargs) != 0 {
		return "", false
	}
	s, ok := args[0].(starlark.String)
	return string(s), ok
}

// chars are a string's characters (Python iterates over code points).
func chars(s string) []starlark.Value {
	out := make([]starlark.Value, 0, len(s))
	for _, r := range s {
		out = append(out, starlark.String(string(r)))
	}
	return out
}

// items are the items of any iterable, a string's characters included
// (nil, false when x is not iterable).
func items(x starlark.Value) ([]starlark.Value, bool) {
	if s, ok := x.(starlark.String); ok {
		return chars(string(s)), true
	}
	it := starlark.Iterate(x)
	if it == nil {
		return nil, false
	}
	defer it.Done()
	var out []starlark.Value
	var v starlark.Value
	for it.Next(&v) {
		out = append(out, v)
	}
	return out, true
}

// pairsInto adds to d the pairs of the iterable x, with Python's errors.
func pairsInto(d *starlark.Dict, x starlark.Value) error {
	it := starlark.Iterate(x)
	if it == nil {
		return fmt.Errorf("dict: '%s' object is not iterable", x.Type())
	}
	defer it.Done()
	var pair starlark.Value
	for i := 0; it.Next(&pair); i++ {
		kv, ok := items(pair)
		if !ok {
			return fmt.Errorf("dict: cannot convert dictionary update sequence element #%d to a sequence (got %s)", i, pair.Type())
		}
		if len(kv) != 2 {
			return fmt.Errorf("dict: dictionary update sequence element #%d has length %d; 2 is required", i, len(kv))
		}
		if err := d.SetKey(kv[0], kv[1]); err != nil {
			return fmt.Errorf("dict: %w", err)
		}
	}
	return nil
}

// stableHash is hash(x): Starlark's for strings and bytes, a combination
// of the items' for a tuple, the value's own for numbers, bools and None
// (Go's hashes of those do not vary between runs), and the hash of the
// type and text of any other hashable value (refused when x is not).
func stableHash(thread *starlark.Thread, strHash *starlark.Builtin, x starlark.Value) (int64, error) {
	return stableHashNested(thread, strHash, x, &Nesting{})
}

func stableHashNested(thread *starlark.Thread, strHash *starlark.Builtin, x starlark.Value, nest *Nesting) (int64, error) {
	switch x := x.(type) {
	case starlark.String, starlark.Bytes:
		v, err := strHash.CallInternal(thread, starlark.Tuple{x}, nil)
		if err != nil {
			return 0, err
		}
		h, _ := starlark.AsInt32(IndexValue(v))
		return int64(h), nil
	case starlark.Int, starlark.Float, starlark.Bool, starlark.NoneType, *Scalar:
		h, err := x.Hash()
		return int64(int32(h)), err
	case starlark.Tuple:
		if err := nest.Enter(x); err != nil {
			return 0, err
		}
		defer nest.Leave()
		h := uint32(0x345678)
		for _, e := range x {
			eh, err := stableHashNested(thread, strHash, e, nest)
			if err != nil {
				return 0, err
			}
			h = (h ^ uint32(eh)) * 1000003
		}
		return int64(int32(h)), nil
	}
	if _, err := x.Hash(); err != nil {
		return 0, fmt.Errorf("hash: %v", err)
	}
	v, err := strHash.CallInternal(thread, starlark.Tuple{starlark.String(x.Type() + ":" + x.String())}, nil)
	if err != nil {
		return 0, err
	}
	h, _ := starlark.AsInt32(IndexValue(v))
	return int64(h), nil
}
