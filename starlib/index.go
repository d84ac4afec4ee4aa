package starlib

import (
	"fmt"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
)

// Indexing of variables and arrays.
//
// Starlark's grammar allows x[i], x[i, j] (the index is then a tuple) and
// the one-axis slice x[a:b:c], but not a slice inside a tuple: x[:, 0] and
// x[1:3, ::2] are syntax errors. So an axis of a multi-axis index may be
// written as a string holding the slice, or with the predeclared
// slice(start, stop, step), as in Python:
//
//	x[":", 0]             # x[:, 0]
//	x["1:3", "::2"]       # x[1:3, ::2]
//	x[slice(1, 3), 0]     # x[1:3, 0]
//	x["...", -1]          # x[..., -1]

// SliceValue is Python's slice object (the predeclared slice builtin),
// used as one entry of a multi-axis index.
type SliceValue struct {
	// Int or None; Start and Stop may also be int scalar variables
	// computed from shapes (Theano's symbolic bounds).
	Start, Stop, Step starlark.Value
}

var _ starlark.HasAttrs = (*SliceValue)(nil)

func (s *SliceValue) String() string {
	return fmt.Sprintf("slice(%s, %s, %s)", s.Start, s.Stop, s.Step)
}
func (s *SliceValue) Type() string         { return "slice" }
func (s *SliceValue) Freeze()              {}
func (s *SliceValue) Truth() starlark.Bool { return true }
func (s *SliceValue) Hash() (uint32, error) {
	return starlark.Tuple{s.Start, s.Stop, s.Step}.Hash()
}

// Attr returns start, stop or step.
func (s *SliceValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "start":
		return s.Start, nil
	case "stop":
		return s.Stop, nil
	case "step":
		return s.Step, nil
	}
	return nil, nil
}

// AttrNames lists start, stop and step.
func (s *SliceValue) AttrNames() []string { return []string{"start", "step", "stop"} }

// sliceBuiltin is slice(stop) or slice(start, stop, step=None).
func sliceBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("slice: unexpected keyword arguments")
	}
	var s SliceValue
	s.Start, s.Stop, s.Step = starlark.None, starlark.None, starlark.None
	switch len(args) {
	case 1:
		s.Stop = args[0]
	case 2:
		s.Start, s.Stop = args[0], args[1]
	case 3:
		s.Start, s.Stop, s.Step = args[0], args[1], args[2]
	default:
		return nil, fmt.Errorf("slice: got %d arguments, want 1 to 3", len(args))
	}
	s.Start, s.Stop, s.Step = IndexValue(s.Start), IndexValue(s.Stop), IndexValue(s.Step)
	for i, v := range []starlark.Value{s.Start, s.Stop, s.Step} {
		switch v.(type) {
		case starlark.NoneType, starlark.Int:
		case *Variable:
			if i == 2 {
				return nil, fmt.Errorf("slice: the step must be an int or None, got %s", v.Type())
			}
		default:
			return nil, fmt.Errorf("slice: got %s, want int, an int scalar variable or None", v.Type())
		}
	}
	if s.Step != starlark.None {
		var st int
		if err := starlark.AsInt(IndexValue(s.Step), &st); err != nil || st == 0 {
			return nil, fmt.Errorf("slice: step cannot be zero")
		}
	}
	return &s, nil
}

func optInt(v starlark.Value) (*int, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	var i int
	if err := starlark.AsInt(IndexValue(v), &i); err != nil {
		return nil, err
	}
	return &i, nil
}

// parseSliceString reads "a:b:c" with optional parts.
func parseSliceString(s string) (core.Index, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return core.Index{}, fmt.Errorf("index %q is not a slice (want a string such as \":\", \"1:3\" or \"::2\")", s)
	}
	ix := core.Index{Slice: true}
	ptrs := []**int{&ix.Start, &ix.Stop, &ix.Step}
	for k, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return core.Index{}, fmt.Errorf("index %q is not a slice: %q is not an integer", s, p)
		}
		*ptrs[k] = &n
	}
	if ix.Step != nil && *ix.Step == 0 {
		return core.Index{}, fmt.Errorf("slice step cannot be zero")
	}
	return ix, nil
}

// parseIndex reads the index of x[key] for a value of ndim dimensions.
func parseIndex(key starlark.Value, ndim int) ([]core.Index, error) {
	items := starlark.Tuple{key}
	if t, ok := key.(starlark.Tuple); ok {
		items = t
	}
	ellipsis := -1
	var idx []core.Index
	for k, it := range items {
		switch it := IndexValue(it).(type) {
		case starlark.Int:
			var i int
			if err := starlark.AsInt(IndexValue(it), &i); err != nil {
				return nil, fmt.Errorf("index %v: %v", it, err)
			}
			idx = append(idx, core.Index{I: i})
		case *SliceValue:
			ix := core.Index{Slice: true}
			var err error
			start, stop := it.Start, it.Stop
			// Symbolic bounds: int scalars computed from shapes.
			if v, ok := start.(*Variable); ok {
				ix.StartVar, start = v.V, starlark.None
			}
			if v, ok := stop.(*Variable); ok {
				ix.StopVar, stop = v.V, starlark.None
			}
			if ix.Start, err = optInt(start); err == nil {
				if ix.Stop, err = optInt(stop); err == nil {
					ix.Step, err = optInt(it.Step)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("index %s: %v", it, err)
			}
			idx = append(idx, ix)
		case starlark.String:
			if strings.TrimSpace(string(it)) == "..." {
				if ellipsis >= 0 {
					return nil, fmt.Errorf("an index can only have a single ellipsis (\"...\")")
				}
				ellipsis = k
				continue
			}
			ix, err := parseSliceString(string(it))
			if err != nil {
				return nil, err
			}
			idx = append(idx, ix)
		case starlark.NoneType:
			return nil, fmt.Errorf("None (numpy.newaxis) in an index is not supported; use dimshuffle to add an axis")
		case *Variable, *Array, *starlark.List:
			return nil, fmt.Errorf("indexing with a %s (advanced indexing) is not supported; index with ints and slices", it.Type())
		default:
			return nil, fmt.Errorf("index of type %s is not supported (want an int, a slice string such as \":\" or \"1:3\", or slice(start, stop, step))", it.Type())
		}
	}
	if len(idx) > ndim {
		return nil, fmt.Errorf("too many indices (%d) for a %d-d value", len(idx), ndim)
	}
	if ellipsis >= 0 {
		fill := make([]core.Index, ndim-len(idx))
		for i := range fill {
			fill[i] = core.Index{Slice: true}
		}
		idx = append(idx[:ellipsis:ellipsis], append(fill, idx[ellipsis:]...)...)
	}
	return idx, nil
}
