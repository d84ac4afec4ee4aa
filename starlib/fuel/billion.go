package fuel

import (
	"fmt"
	"path/filepath"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
)

// Module fuel.datasets.billion:
//
//	OneBillionWord(which_set, which_partitions, dictionary, **kwargs)
//	    Google's One Billion Word benchmark, a TextFile over partitions of the
//	    corpus found in the data path: which_set "training" (partitions 1 to
//	    99 of 1-billion-word/training-monolingual.tokenized.shuffled/
//	    news.en-000NN-of-00100) or "heldout" (0 to 49 of
//	    1-billion-word/heldout-monolingual.tokenized.shuffled/
//	    news.en.heldout-000NN-of-00050); kwargs are TextFile's.
func billionModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.datasets.billion", Members: starlark.StringDict{
		"OneBillionWord": starlib.NewBuiltin("OneBillionWord", oneBillionWord),
	}})
	return
}

func oneBillionWord(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 3 {
		return nil, fmt.Errorf("%s: got %d positional arguments, want at most 3 (which_set, which_partitions, dictionary; the rest are TextFile's keywords)", b.Name(), len(args))
	}
	var whichSet string
	var partitions, dictionary starlark.Value
	var rest []starlark.Tuple
	names := []string{"which_set", "which_partitions", "dictionary"}
	got := map[string]starlark.Value{}
	for i, a := range args {
		got[names[i]] = a
	}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		isOwn := false
		for _, n := range names {
			if k == n {
				isOwn = true
			}
		}
		if !isOwn {
			rest = append(rest, kv)
			continue
		}
		if _, dup := got[k]; dup {
			return nil, fmt.Errorf("%s: got multiple values for %s", b.Name(), k)
		}
		got[k] = kv[1]
	}
	for _, n := range names {
		if got[n] == nil {
			return nil, fmt.Errorf("%s: missing argument %s", b.Name(), n)
		}
	}
	s, ok := starlark.AsString(got["which_set"])
	if !ok {
		return nil, fmt.Errorf("%s: which_set must be 'training' or 'heldout', got %s", b.Name(), got["which_set"].Type())
	}
	whichSet, partitions, dictionary = s, got["which_partitions"], got["dictionary"]
	parts, err := starlib.AsInts(partitions)
	if err != nil {
		return nil, fmt.Errorf("%s: which_partitions must be a list of ints, got %s", b.Name(), partitions.Type())
	}
	var dir, pattern string
	var lo, hi int
	switch whichSet {
	case "training":
		dir, pattern, lo, hi = "training-monolingual.tokenized.shuffled", "news.en-%05d-of-00100", 1, 99
	case "heldout":
		dir, pattern, lo, hi = "heldout-monolingual.tokenized.shuffled", "news.en.heldout-%05d-of-00050", 0, 49
	default:
		return nil, fmt.Errorf("%s: ValueError: which_set must be 'training' or 'heldout', got %q", b.Name(), whichSet)
	}
	files := make([]starlark.Value, len(parts))
	for i, p := range parts {
		if p < lo || p > hi {
			return nil, fmt.Errorf("%s: ValueError: %s partitions are %d to %d, got %d", b.Name(), whichSet, lo, hi, p)
		}
		path, err := FuelSettings(thread).FindFirst(filepath.Join("1-billion-word", dir, fmt.Sprintf(pattern, p)))
		if err != nil {
			return nil, fmt.Errorf("%s: IOError: %v", b.Name(), err)
		}
		files[i] = starlark.String(path)
	}
	tf := starlib.NewBuiltin("OneBillionWord", textFileBuiltin)
	v, err := starlark.Call(thread, tf, starlark.Tuple{starlark.NewList(files), dictionary}, rest)
	if err != nil {
		return nil, err
	}
	if d, ok := v.(*IterableDatasetValue); ok {
		d.name = "OneBillionWord"
	}
	return v, nil
}
