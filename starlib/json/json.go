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
		members[name] = starlark.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
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
	return &starlarkstruct.Module{Name: "json", Members: members}
}()

const maxJSONDepth = 1000

// jsonPlain checks that v is plain data and converts arrays to lists.
func jsonPlain(v starlark.Value, depth int) (starlark.Value, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("value nested more than %d deep", maxJSONDepth)
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
