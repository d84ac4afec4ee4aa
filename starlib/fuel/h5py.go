package fuel

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/starlib"
)

// h5pyClass is fuel.datasets.H5PYDataset: callable (the constructor), with
// Fuel's static methods create_split_array, get_all_splits and
// get_all_sources.
type h5pyClass struct{}

var (
	_ starlark.Callable = (*h5pyClass)(nil)
	_ starlark.HasAttrs = (*h5pyClass)(nil)
)

func (*h5pyClass) String() string        { return "<class 'H5PYDataset'>" }
func (*h5pyClass) Type() string          { return "class" }
func (*h5pyClass) Name() string          { return "H5PYDataset" }
func (*h5pyClass) Freeze()               {}
func (*h5pyClass) Truth() starlark.Bool  { return true }
func (*h5pyClass) Hash() (uint32, error) { return starlark.String("H5PYDataset").Hash() }
func (*h5pyClass) AttrNames() []string {
	return []string{"create_split_array", "get_all_sources", "get_all_splits"}
}

func (*h5pyClass) Attr(name string) (starlark.Value, error) {
	switch name {
	case "create_split_array":
		return starlib.NewBuiltin("create_split_array", createSplitArray), nil
	case "get_all_splits", "get_all_sources":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var file starlark.Value
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &file); err != nil {
				return nil, err
			}
			path, ok := starlark.AsString(file)
			if !ok {
				h := h5pyOf(file)
				if h == nil {
					return nil, fmt.Errorf("%s: want the path of a Fuel HDF5 file or an H5PYDataset, got %s", b.Name(), file.Type())
				}
				path = h.Path()
			}
			if err := starlib.CheckRead(thread, path); err != nil {
				return nil, fmt.Errorf("%s: %w", b.Name(), err)
			}
			split, err := h5.ReadSplit(path)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b.Name(), err)
			}
			if b.Name() == "get_all_splits" {
				return strTuple(split.Splits()), nil
			}
			return strTuple(split.Sources()), nil
		}), nil
	}
	return nil, nil
}

func (*h5pyClass) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
	defer starlib.RecoverInternal("H5PYDataset", &err)
	return h5pyDataset(thread, args, kwargs)
}

// h5pyDataset is H5PYDataset(file_or_path, which_sets, subset=None,
// load_in_memory=False, driver=None, sort_indices=True, sources=None).
func h5pyDataset(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	const name = "H5PYDataset"
	var path string
	var which, subset, sources, driver starlark.Value = nil, starlark.None, starlark.None, starlark.None
	loadInMemory, sortIndices := false, true
	if err := starlark.UnpackArgs(name, args, kwargs, "file_or_path", &path, "which_sets", &which, "subset?", &subset,
		"load_in_memory?", &loadInMemory, "driver?", &driver, "sort_indices?", &sortIndices, "sources?", &sources); err != nil {
		return nil, err
	}
	// As Fuel: a bare string is refused (it would iterate its letters).
	if _, ok := which.(starlark.String); ok {
		return nil, fmt.Errorf("%s: `which_sets` should be an iterable of strings, got the string %s (write (%s,))", name, which, which)
	}
	ws, err := stringList(name+": `which_sets` should be an iterable of strings", which)
	if err != nil {
		return nil, err
	}
	opts := h5.Options{LoadInMemory: loadInMemory, NoSortIndices: !sortIndices}
	if driver != starlark.None {
		d, ok := starlark.AsString(driver)
		if !ok {
			return nil, fmt.Errorf("%s: driver must be None or a string, got %s", name, driver.Type())
		}
		if !slices.Contains(h5.Drivers, d) {
			return nil, fmt.Errorf("%s: driver %q is not supported (supported: None, %s)", name, d, quoted(h5.Drivers))
		}
		opts.Driver = d
	}
	if opts.Sources, err = stringList(name+": sources", sources); err != nil {
		return nil, err
	}
	s, err := subsetArg(subset)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	opts.Subset = h5Subset(s)
	if err := starlib.CheckRead(thread, path); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ds, err := h5.Open(path, ws, opts)
	if err != nil {
		return nil, err
	}
	return &Dataset{D: ds, name: name}, nil
}

func quoted(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", s)
	}
	return out
}

// h5pyOf is the H5PYDataset behind a dataset value (through a script's
// sources or axis_labels override), or nil.
func h5pyOf(v starlark.Value) *h5.H5PYDataset {
	d, ok := v.(*Dataset)
	if !ok {
		return nil
	}
	inner := d.D
	if o, ok := inner.(*datasetOverride); ok {
		inner = o.IndexableDataset
	}
	if fd, ok := inner.(*datasets.FileDataset); ok {
		return fd.H5PYDataset
	}
	h, _ := inner.(*h5.H5PYDataset)
	return h
}

// h5pyAttr is an attribute only an H5PYDataset has: data_sources (the
// loaded data with load_in_memory, else None), vlen_sources, which_sets,
// load_in_memory, path and filename (also on the dataset classes read from
// a converted file: MNIST's, CIFAR10's, ...).
func (d *Dataset) h5pyAttr(name string) (starlark.Value, bool) {
	h := h5pyOf(d)
	if h == nil {
		return nil, false
	}
	switch name {
	case "data_sources":
		data := h.InMemoryData()
		if data == nil {
			return starlark.None, true
		}
		// In the dataset's sources order (a script's sources= override
		// picks among them).
		all := h.Sources()
		var out starlark.Tuple
		for _, s := range d.D.Sources() {
			if k := slices.Index(all, s); k >= 0 {
				out = append(out, dataValue(data[k]))
			}
		}
		return out, true
	case "vlen_sources":
		return strTuple(h.VlenSources()), true
	case "which_sets":
		return strTuple(h.WhichSets()), true
	case "load_in_memory":
		return starlark.Bool(h.LoadInMemory()), true
	case "path":
		return starlark.String(h.Path()), true
	case "filename":
		// The dataset classes' file name (MNIST's "mnist.hdf5", ...), as
		// found in the data path.
		return starlark.String(filepath.Base(h.Path())), true
	}
	return nil, false
}

// h5pyAttrNames are the names h5pyAttr answers.
var h5pyAttrNames = []string{"data_sources", "filename", "load_in_memory", "path", "vlen_sources", "which_sets"}

// createSplitArray is H5PYDataset.create_split_array(split_dict): the
// rows of a Fuel file's split attribute, as a list of tuples (split,
// source, start, stop, indices, available, comment). As Fuel: one row per
// split (in the dict's order) and source (sorted), a pair the dict does
// not give is unavailable (0, 0, None, False, "."), and an empty or
// missing comment is ".". Starlark has no numpy record arrays: the rows
// are tuples, with None for a null reference.
func createSplitArray(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var splitDict *starlark.Dict
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &splitDict); err != nil {
		return nil, err
	}
	type entry struct {
		start, stop starlark.Value
		indices     starlark.Value
		comment     string
	}
	var splits []string
	table := map[string]map[string]entry{}
	srcSet := map[string]bool{}
	for _, kv := range splitDict.Items() {
		split, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("%s: split names must be strings, got %s", b.Name(), kv[0].Type())
		}
		inner, ok := kv[1].(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("%s: split %q: want a dict of source -> (start, stop[, indices[, comment]]), got %s", b.Name(), split, kv[1].Type())
		}
		splits = append(splits, split)
		table[split] = map[string]entry{}
		for _, skv := range inner.Items() {
			source, ok := starlark.AsString(skv[0])
			if !ok {
				return nil, fmt.Errorf("%s: split %q: source names must be strings, got %s", b.Name(), split, skv[0].Type())
			}
			t, ok := skv[1].(starlark.Tuple)
			if !ok || len(t) < 2 || len(t) > 4 {
				return nil, fmt.Errorf("%s: split %q, source %q: want a tuple (start, stop[, indices[, comment]]), got %s", b.Name(), split, source, skv[1])
			}
			var e entry
			for _, v := range t[:2] {
				var n int64
				if err := starlark.AsInt(v, &n); err != nil {
					return nil, fmt.Errorf("%s: split %q, source %q: start and stop must be integers, got %s", b.Name(), split, source, v.Type())
				}
			}
			e.start, e.stop, e.indices, e.comment = t[0], t[1], starlark.None, "."
			if len(t) > 2 {
				e.indices = t[2]
			}
			if len(t) > 3 {
				c, ok := starlark.AsString(t[3])
				if !ok {
					return nil, fmt.Errorf("%s: split %q, source %q: the comment must be a string, got %s", b.Name(), split, source, t[3].Type())
				}
				if c != "" {
					e.comment = c
				}
			}
			table[split][source] = e
			srcSet[source] = true
		}
	}
	if len(splits) == 0 || len(srcSet) == 0 {
		return nil, fmt.Errorf("%s: the split dict has no split or no source", b.Name())
	}
	sources := make([]string, 0, len(srcSet))
	for s := range srcSet {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	var rows []starlark.Value
	for _, split := range splits {
		for _, source := range sources {
			e, ok := table[split][source]
			if !ok {
				rows = append(rows, starlark.Tuple{starlark.String(split), starlark.String(source),
					starlark.MakeInt(0), starlark.MakeInt(0), starlark.None, starlark.False, starlark.String(".")})
				continue
			}
			rows = append(rows, starlark.Tuple{starlark.String(split), starlark.String(source),
				e.start, e.stop, e.indices, starlark.True, starlark.String(e.comment)})
		}
	}
	return starlark.NewList(rows), nil
}

// pytablesDataset is fuel.datasets.PytablesDataset(path, sources,
// start=0, stop=None, data_node="Data", sources_in_file=None).
func pytablesDataset(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var sources, stop, inFile starlark.Value = nil, starlark.None, starlark.None
	opts := h5.PytablesOptions{DataNode: "Data", Stop: -1}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "sources", &sources, "start?", &opts.Start,
		"stop?", &stop, "data_node?", &opts.DataNode, "sources_in_file?", &inFile); err != nil {
		return nil, err
	}
	if _, ok := sources.(starlark.String); ok {
		return nil, fmt.Errorf("%s: sources should be a tuple of strings, got the string %s", b.Name(), sources)
	}
	ss, err := stringList(b.Name()+": sources", sources)
	if err != nil {
		return nil, err
	}
	if stop != starlark.None {
		if err := starlark.AsInt(stop, &opts.Stop); err != nil || opts.Stop < 0 {
			return nil, fmt.Errorf("%s: stop must be None or a non-negative int, got %s", b.Name(), stop)
		}
	}
	if opts.Start < 0 {
		return nil, fmt.Errorf("%s: start must be a non-negative int, got %d", b.Name(), opts.Start)
	}
	if opts.SourcesInFile, err = stringList(b.Name()+": sources_in_file", inFile); err != nil {
		return nil, err
	}
	if err := starlib.CheckRead(thread, path); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	ds, err := h5.OpenPytables(path, ss, opts)
	if err != nil {
		return nil, err
	}
	return &Dataset{D: ds, name: b.Name()}, nil
}

// pytablesAttr is an attribute only a PytablesDataset has: start, stop,
// path and close_file().
func (d *Dataset) pytablesAttr(name string) (starlark.Value, bool) {
	p, ok := d.D.(*h5.PytablesDataset)
	if !ok {
		if o, isO := d.D.(*datasetOverride); isO {
			p, ok = o.IndexableDataset.(*h5.PytablesDataset)
		}
	}
	if !ok {
		return nil, false
	}
	switch name {
	case "start":
		return starlark.MakeInt(p.Start()), true
	case "stop":
		return starlark.MakeInt(p.Stop()), true
	case "close_file":
		return starlib.NewBuiltin("close_file", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			return starlark.None, p.Close()
		}), true
	}
	return nil, false
}
