package json

import (
	"fmt"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
)

// Module is the Starlark module json: go.starlark.net's, with encode and
// encode_indent restricted to plain data (None, bools, numbers, strings,
// lists, tuples, dicts, structs) and arrays, which are encoded as nested
// lists. The library would encode any value with attributes as an
// object, attribute by attribute; for a symbolic variable (x.T.T.T...)
// or a brick that never ends.
//
//	encode(x) - x as a JSON string.
//	encode_indent(x, prefix="", indent="\t") - the same, indented.
//	decode(x, default=None) - the value of the JSON string x.
//	indent(str, prefix="", indent="\t") - a JSON string re-indented.
var Module = func() *starlarkstruct.Module {
	members := starlark.StringDict{}
	for k, v := range starjson.Module.Members {
		members[k] = v
	}
	for _, name := range []string{"encode", "encode_indent"} {
		orig := starjson.Module.Members[name].(*starlark.Builtin)
		members[name] = starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) > 0 {
				plain, err := jsonPlain(args[0], 0)
				if err != nil {
					return nil, fmt.Errorf("json.%s: %v", name, err)
				}
				args = append(starlark.Tuple{plain}, args[1:]...)
			}
			return orig.CallInternal(thread, args, kwargs)
		})
	}
	decode := starjson.Module.Members["decode"].(*starlark.Builtin)
	members["decode"] = starlib.NewBuiltin("decode", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) > 0 {
			if x, ok := starlark.AsString(args[0]); ok {
				if err := checkJSONDepth(x); err != nil {
					// As for any input that does not decode: the
					// default when one is given.
					if len(args) > 1 {
						return args[1], nil
					}
					for _, kv := range kwargs {
						if kv[0] == starlark.String("default") {
							return kv[1], nil
						}
					}
					return nil, fmt.Errorf("json.decode: %v", err)
				}
			}
		}
		return decode.CallInternal(thread, args, kwargs)
	})
	return &starlarkstruct.Module{Name: "json", Members: members}
}()

// checkJSONDepth refuses a JSON text whose arrays and objects nest more
// than maxJSONDepth deep, before go.starlark.net's decoder (which
// recurses once per level, without a limit) overflows Go's stack on it:
// json.decode("[" * 5000000 + "]" * 5000000) was a fatal error.
func checkJSONDepth(s string) error {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > maxJSONDepth {
				return fmt.Errorf("arrays and objects nested more than %d deep, at byte %d", maxJSONDepth, i)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

const maxJSONDepth = 1000

// jsonPlain checks that v is plain data and converts arrays to lists.
func jsonPlain(v starlark.Value, depth int) (starlark.Value, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("value nested more than %d deep (does a list or dict contain itself?)", maxJSONDepth)
	}
	switch v := v.(type) {
	case starlark.NoneType, starlark.Bool, starlark.Int, starlark.Float, starlark.String:
		return v, nil
	case *starlib.Array:
		return starlib.ToList(v.A, 0, 0), nil
	case *starlark.List:
		out := make([]starlark.Value, v.Len())
		for i := range out {
			x, err := jsonPlain(v.Index(i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return starlark.NewList(out), nil
	case starlark.Tuple:
		out := make(starlark.Tuple, len(v))
		for i := range v {
			x, err := jsonPlain(v[i], depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case *starlark.Dict:
		out := starlark.NewDict(v.Len())
		for _, kv := range v.Items() {
			x, err := jsonPlain(kv[1], depth+1)
			if err != nil {
				return nil, err
			}
			if err := out.SetKey(kv[0], x); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *starlarkstruct.Struct:
		d := starlark.StringDict{}
		for _, name := range v.AttrNames() {
			a, err := v.Attr(name)
			if err != nil {
				return nil, err
			}
			x, err := jsonPlain(a, depth+1)
			if err != nil {
				return nil, fmt.Errorf("in field .%s: %v", name, err)
			}
			d[name] = x
		}
		return starlarkstruct.FromStringDict(starlarkstruct.Default, d), nil
	}
	return nil, fmt.Errorf("cannot encode a %s as JSON (only None, bools, numbers, strings, lists, tuples, dicts, structs and arrays)", v.Type())
}
