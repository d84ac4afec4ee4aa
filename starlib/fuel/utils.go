package fuel

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/fuel/utils"
	"github.com/blocks-go/blocks/starlib"
)

// Modules fuel.utils and fuel.config:
//
//	fuel.utils:
//	Subset(list_or_slice, original_num_examples)   Fuel's description of a subset of a
//	    dataset's examples: list_or_slice a list of indices (kept unique and sorted, a
//	    contiguous one becomes a slice) or a slice(start, stop) of step 1 or None.
//	    It has list_or_slice, original_num_examples, num_examples, is_list, is_empty,
//	    subset[request] (a request within the subset -> the dataset's request),
//	    subset + other (the union), get_list_representation(),
//	    index_within_subset(indexable, subset_request, sort_indices=False).
//	Subset.subset_of(subset, list_or_slice), Subset.empty_subset(original_num_examples),
//	Subset.slice_to_numerical_args(slice, num_examples) -> (start, stop, step),
//	Subset.sorted_fancy_indexing(indexable, request)
//	find_in_data_path(filename)   the first file of that name in the data path
//	    (FUEL_DATA_PATH or ~/.fuelrc's data_path), an error when there is none
//	do_not_pickle_attributes(*names)   a class decorator: each name becomes a property
//	    over self._name, which checkpoints leave out; reading it unset calls the
//	    class's load() (docs/checkpoints.md, "Script objects")
//
//	fuel.config_parser:
//	extra_downloader_converter(value)   the module names of a configuration value: a
//	    string of names separated by white space, or a list of them
//	multiple_paths_parser(value)   a string split on ':' (a data path), anything else as is
//	Configuration()   Fuel's configuration class (see config_class.go)
//
//	fuel (and fuel.config_parser, as Fuel has it):
//	config   the Configuration below
//
//	fuel.config:
//	config   Fuel's Configuration: what the script assigned, else the
//	    environment, else ~/.fuelrc (FUEL_CONFIG); see config.go
func utilsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.utils", Members: starlark.StringDict{
		"Subset":                   subsetClass{},
		"find_in_data_path":        starlib.NewBuiltin("find_in_data_path", findInDataPath),
		"do_not_pickle_attributes": starlib.DoNotPickleAttributes(),
	}})
	config := func() starlark.Value {
		return &starlib.Dynamic{Name: "config", Get: func(thread *starlark.Thread) starlark.Value { return fuelConfig{thread} }}
	}
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.config", Members: starlark.StringDict{
		"config": config(),
	}})
	// Fuel's `fuel.config` is the Configuration itself (fuel/__init__.py
	// imports it from fuel.config_parser): load("fuel", "config") and
	// fuel.config.data_path = ... set it, as Fuel's tests and users do.
	mods = append(mods, &starlarkstruct.Module{Name: "fuel", Members: starlark.StringDict{
		"config": config(),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.config_parser", Members: starlark.StringDict{
		"config":                     config(),
		"extra_downloader_converter": starlib.NewBuiltin("extra_downloader_converter", extraDownloaderConverter),
		"multiple_paths_parser":      starlib.NewBuiltin("multiple_paths_parser", multiplePathsParser),
		"Configuration":              starlib.NewBuiltin("Configuration", newConfiguration),
	}})
	return
}

// extraDownloaderConverter is Fuel's extra_downloader_converter(value):
// the list of module names of a configuration value, a string of names
// separated by white space or a list of them.
func extraDownloaderConverter(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &v); err != nil {
		return nil, err
	}
	var names []string
	if s, ok := starlark.AsString(v); ok {
		names = strings.Fields(s)
	} else {
		var err error
		if names, err = stringList(b.Name(), v); err != nil {
			return nil, err
		}
	}
	return starlib.StringList(names), nil
}

func findInDataPath(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "filename", &name); err != nil {
		return nil, err
	}
	p, err := FuelSettings(thread).FindFirst(name)
	if err != nil {
		return nil, fmt.Errorf("find_in_data_path: IOError: %v", err)
	}
	// A name with ".." leaves the data path: a confined script may not
	// even learn that such a file exists.
	if err := starlib.CheckRead(thread, p); err != nil {
		return nil, fmt.Errorf("find_in_data_path: %w", err)
	}
	return starlark.String(p), nil
}

// subsetClass is fuel.utils.Subset: callable, with Fuel's class and
// static methods.
type subsetClass struct{}

func (subsetClass) String() string        { return "<class 'Subset'>" }
func (subsetClass) Type() string          { return "class" }
func (subsetClass) Name() string          { return "Subset" }
func (subsetClass) Freeze()               {}
func (subsetClass) Truth() starlark.Bool  { return true }
func (subsetClass) Hash() (uint32, error) { return starlark.String("Subset").Hash() }
func (subsetClass) AttrNames() []string {
	return []string{"empty_subset", "slice_to_numerical_args", "sorted_fancy_indexing", "subset_of"}
}

func (subsetClass) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var ls starlark.Value
	var n int
	if err := starlark.UnpackArgs("Subset", args, kwargs, "list_or_slice", &ls, "original_num_examples", &n); err != nil {
		return nil, err
	}
	l, err := listOrSliceArg("Subset", ls)
	if err != nil {
		return nil, err
	}
	s, err := utils.NewSubset(l, n)
	if err != nil {
		return nil, err
	}
	return &SubsetValue{S: s}, nil
}

func (c subsetClass) Attr(name string) (starlark.Value, error) {
	switch name {
	case "subset_of":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var sub *SubsetValue
			var ls starlark.Value
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "subset", &sub, "list_or_slice", &ls); err != nil {
				return nil, err
			}
			l, err := listOrSliceArg(b.Name(), ls)
			if err != nil {
				return nil, err
			}
			s, err := utils.SubsetOf(sub.S, l)
			if err != nil {
				return nil, err
			}
			return &SubsetValue{S: s}, nil
		}), nil
	case "empty_subset":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var n int
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "original_num_examples", &n); err != nil {
				return nil, err
			}
			return &SubsetValue{S: utils.EmptySubset(n)}, nil
		}), nil
	case "slice_to_numerical_args":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var sl *starlib.SliceValue
			var n int
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "slice_", &sl, "num_examples", &n); err != nil {
				return nil, err
			}
			s, err := sliceArg(b.Name(), sl)
			if err != nil {
				return nil, err
			}
			a, z, st := s.Numerical(n)
			return starlark.Tuple{starlark.MakeInt(a), starlark.MakeInt(z), starlark.MakeInt(st)}, nil
		}), nil
	case "sorted_fancy_indexing":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var indexable, request starlark.Value
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "indexable", &indexable, "request", &request); err != nil {
				return nil, err
			}
			idx, err := indexList(request)
			if err != nil {
				return nil, fmt.Errorf("%s: request: %v", b.Name(), err)
			}
			return fancyIndex(b.Name(), indexable, idx)
		}), nil
	}
	return nil, nil
}

// sliceArg converts a Starlark slice to utils.Slice.
func sliceArg(what string, sl *starlib.SliceValue) (utils.Slice, error) {
	var out utils.Slice
	for _, p := range []struct {
		v   starlark.Value
		dst **int
	}{{sl.Start, &out.Start}, {sl.Stop, &out.Stop}, {sl.Step, &out.Step}} {
		if p.v == starlark.None {
			continue
		}
		var i int
		if err := starlark.AsInt(p.v, &i); err != nil {
			return out, fmt.Errorf("%s: slice bounds must be ints or None, got %s", what, p.v.Type())
		}
		*p.dst = &i
	}
	return out, nil
}

// listOrSliceArg reads a list of indices (a list, tuple or range) or a
// slice.
func listOrSliceArg(what string, v starlark.Value) (utils.ListOrSlice, error) {
	if sl, ok := v.(*starlib.SliceValue); ok {
		s, err := sliceArg(what, sl)
		return utils.SliceOf(s), err
	}
	idx, err := indexList(v)
	if err != nil {
		return utils.ListOrSlice{}, fmt.Errorf("%s: want a list of indices or a slice: %v", what, err)
	}
	return utils.ListOf(idx), nil
}

func listOrSliceValue(ls utils.ListOrSlice) starlark.Value {
	if ls.IsList {
		l := make([]starlark.Value, len(ls.List))
		for i, x := range ls.List {
			l[i] = starlark.MakeInt(x)
		}
		return starlark.NewList(l)
	}
	opt := func(p *int) starlark.Value {
		if p == nil {
			return starlark.None
		}
		return starlark.MakeInt(*p)
	}
	return &starlib.SliceValue{Start: opt(ls.Slice.Start), Stop: opt(ls.Slice.Stop), Step: opt(ls.Slice.Step)}
}

// fancyIndex picks the items at idx of a list, tuple or array.
func fancyIndex(what string, indexable starlark.Value, idx []int) (starlark.Value, error) {
	if a, ok := indexable.(*starlib.Array); ok {
		if a.A.NDim() == 0 {
			return nil, fmt.Errorf("%s: cannot index a 0-d array", what)
		}
		for _, i := range idx {
			if i < 0 || i >= a.A.Shape[0] {
				return nil, fmt.Errorf("%s: index %d out of range (%d rows)", what, i, a.A.Shape[0])
			}
		}
		return starlib.FromArray(a.A.Take(idx)), nil
	}
	seq, ok := indexable.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("%s: want a list, a tuple or an array to index, got %s", what, indexable.Type())
	}
	out := make([]starlark.Value, len(idx))
	for k, i := range idx {
		if i < 0 || i >= seq.Len() {
			return nil, fmt.Errorf("%s: index %d out of range (length %d)", what, i, seq.Len())
		}
		out[k] = seq.Index(i)
	}
	return starlark.NewList(out), nil
}

// SubsetValue is a fuel.utils.Subset.
type SubsetValue struct{ S *utils.Subset }

var (
	_ starlark.HasAttrs  = (*SubsetValue)(nil)
	_ starlark.HasBinary = (*SubsetValue)(nil)
	_ starlark.Mapping   = (*SubsetValue)(nil)
)

func (s *SubsetValue) String() string {
	return fmt.Sprintf("Subset(%s, %d)", listOrSliceValue(s.S.ListOrSlice), s.S.OriginalNumExamples)
}
func (s *SubsetValue) Type() string          { return "Subset" }
func (s *SubsetValue) Freeze()               {}
func (s *SubsetValue) Truth() starlark.Bool  { return true }
func (s *SubsetValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: Subset") }

// Binary is subset + other, the union.
func (s *SubsetValue) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	o, ok := y.(*SubsetValue)
	if op != syntax.PLUS || !ok {
		return nil, nil
	}
	a, b := s, o
	if side == starlark.Right {
		a, b = o, s
	}
	r, err := a.S.Add(b.S)
	if err != nil {
		return nil, err
	}
	return &SubsetValue{S: r}, nil
}

// Get is subset[request]: the request translated to the dataset.
func (s *SubsetValue) Get(k starlark.Value) (starlark.Value, bool, error) {
	l, err := listOrSliceArg("Subset[]", k)
	if err != nil {
		return nil, false, err
	}
	t, err := s.S.Translate(l)
	if err != nil {
		return nil, false, err
	}
	return listOrSliceValue(t), true, nil
}

// AttrNames lists the subset's attributes.
func (s *SubsetValue) AttrNames() []string {
	return []string{"_list_request_sanity_check", "_slice_request_sanity_check", "get_list_representation",
		"index_within_subset", "is_empty", "is_list", "list_or_slice", "num_examples", "original_num_examples"}
}

// Attr returns an attribute.
func (s *SubsetValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "list_or_slice":
		return listOrSliceValue(s.S.ListOrSlice), nil
	case "original_num_examples":
		return starlark.MakeInt(s.S.OriginalNumExamples), nil
	case "num_examples":
		return starlark.MakeInt(s.S.NumExamples()), nil
	case "is_list":
		return starlark.Bool(s.S.IsList()), nil
	case "is_empty":
		return starlark.Bool(s.S.IsEmpty()), nil
	case "get_list_representation":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			return listOrSliceValue(utils.ListOf(s.S.ListRepresentation())), nil
		}), nil
	case "_list_request_sanity_check", "_slice_request_sanity_check":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var req starlark.Value
			var n int
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "request", &req, "num_examples", &n); err != nil {
				return nil, err
			}
			l, err := listOrSliceArg(b.Name(), req)
			if err != nil {
				return nil, err
			}
			if l.IsList {
				err = utils.CheckListRequest(l.List, n)
			} else {
				err = utils.CheckSliceRequest(l.Slice, n)
			}
			if err != nil {
				return nil, err
			}
			return starlark.None, nil
		}), nil
	case "index_within_subset":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var indexable, req starlark.Value
			sortIndices := false
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "indexable", &indexable, "subset_request", &req, "sort_indices?", &sortIndices); err != nil {
				return nil, err
			}
			var one int
			single := starlark.AsInt(req, &one) == nil
			var l utils.ListOrSlice
			var err error
			if single {
				l = utils.ListOf([]int{one})
			} else if l, err = listOrSliceArg(b.Name(), req); err != nil {
				return nil, err
			}
			t, err := s.S.Translate(l)
			if err != nil {
				return nil, err
			}
			n := -1
			if seq, ok := indexable.(starlark.Sequence); ok {
				n = seq.Len()
			}
			v, err := fancyIndex(b.Name(), indexable, t.Indices(n))
			if err != nil || !single {
				return v, err
			}
			return v.(starlark.Indexable).Index(0), nil
		}), nil
	}
	return nil, nil
}
