package blocks

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/mainloop"
)

// LogRow is a row of the training log as a live Starlark mapping:
// log.current_row["x"] reads a record, log.current_row["x"] = v writes one
// (main_loop.log.current_row["training_finish_requested"] = True asks the
// main loop to stop), "x" in row, len(row), row.get(k, default),
// row.keys(), row.items(); iteration is over sorted record names.
type LogRow struct{ R mainloop.Row }

var (
	_ starlark.IterableMapping = (*LogRow)(nil)
	_ starlark.HasSetKey       = (*LogRow)(nil)
	_ starlark.Sequence        = (*LogRow)(nil)
)

func (r *LogRow) String() string        { return rowDict(r.R).String() }
func (r *LogRow) Type() string          { return "LogRow" }
func (r *LogRow) Freeze()               {}
func (r *LogRow) Truth() starlark.Bool  { return len(r.R) > 0 }
func (r *LogRow) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: LogRow") }
func (r *LogRow) Len() int              { return len(r.R) }

func (r *LogRow) keys() []string {
	ks := make([]string, 0, len(r.R))
	for k := range r.R {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Get reads a record.
func (r *LogRow) Get(k starlark.Value) (starlark.Value, bool, error) {
	s, ok := starlark.AsString(k)
	if !ok {
		return nil, false, fmt.Errorf("log records are named by strings, got %s", k.Type())
	}
	v, ok := r.R[s]
	if !ok {
		return nil, false, nil
	}
	return goValue(v), true, nil
}

// SetKey writes a record.
func (r *LogRow) SetKey(k, v starlark.Value) error {
	s, ok := starlark.AsString(k)
	if !ok {
		return fmt.Errorf("log records are named by strings, got %s", k.Type())
	}
	gv, err := logValueOf(v)
	if err != nil {
		return fmt.Errorf("log record %q: %v", s, err)
	}
	r.R[s] = gv
	return nil
}

// logValueOf converts a Starlark value to what the log stores. Blocks'
// log takes any value and gives it back as it was written: numbers, bools,
// strings and arrays are stored as data; lists, tuples and dicts item by
// item (a dict of arrays, as a batch); any other value (a function, a
// brick) as itself, kept in memory and written to a checkpoint as its
// text.
func logValueOf(v starlark.Value) (any, error) {
	return logValueDepth(v, &starlib.Nesting{})
}

func logValueDepth(v starlark.Value, nest *starlib.Nesting) (any, error) {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		n, ok := x.Int64()
		if !ok {
			return nil, fmt.Errorf("integer %s out of range", x)
		}
		return int(n), nil
	case starlark.Float:
		return float64(x), nil
	case starlark.String:
		return string(x), nil
	case *starlib.Array:
		return x.A.Copy(), nil
	case *starlib.Scalar: // as the 0-d array it holds, as a monitored value is
		return x.A.Copy(), nil
	}
	items := func(l starlark.Indexable) ([]any, error) {
		if err := nest.Enter(v); err != nil {
			return nil, err
		}
		defer nest.Leave()
		out := make([]any, l.Len())
		for i := range out {
			e, err := logValueDepth(l.Index(i), nest)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	switch x := v.(type) {
	case *starlark.List:
		return items(x)
	case starlark.Tuple:
		l, err := items(x)
		return mainloop.Tuple(l), err
	case *starlark.Dict:
		if err := nest.Enter(v); err != nil {
			return nil, err
		}
		defer nest.Leave()
		var d mainloop.Dict
		for _, kv := range x.Items() {
			k, err := logValueDepth(kv[0], nest)
			if err != nil {
				return nil, err
			}
			e, err := logValueDepth(kv[1], nest)
			if err != nil {
				return nil, err
			}
			d.Keys = append(d.Keys, k)
			d.Values = append(d.Values, e)
		}
		return d, nil
	}
	return v, nil
}

// Items are the (name, value) pairs, sorted by name.
func (r *LogRow) Items() []starlark.Tuple {
	var out []starlark.Tuple
	for _, k := range r.keys() {
		out = append(out, starlark.Tuple{starlark.String(k), goValue(r.R[k])})
	}
	return out
}

// Iterate iterates over the record names.
func (r *LogRow) Iterate() starlark.Iterator {
	return starlib.StringList(r.keys()).Iterate()
}

func (r *LogRow) AttrNames() []string { return []string{"get", "items", "keys"} }
func (r *LogRow) Attr(name string) (starlark.Value, error) {
	switch name {
	case "get":
		return starlib.NewBuiltin("get", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var k, def starlark.Value = nil, starlark.None
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &k, &def); err != nil {
				return nil, err
			}
			v, ok, err := r.Get(k)
			if err != nil || !ok {
				return def, err
			}
			return v, nil
		}).BindReceiver(r), nil
	case "keys":
		return starlib.NewBuiltin("keys", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlib.StringList(r.keys()), nil
		}).BindReceiver(r), nil
	case "items":
		return starlib.NewBuiltin("items", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			var l []starlark.Value
			for _, t := range r.Items() {
				l = append(l, t)
			}
			return starlark.NewList(l), nil
		}).BindReceiver(r), nil
	}
	return nil, nil
}
