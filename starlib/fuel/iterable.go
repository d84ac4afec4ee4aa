package fuel

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// fuel.datasets, datasets read in order (IterableDataset is in
// streams.go):
//
//	TextFile(files, dictionary, bos_token="<S>", eos_token="</S>", unk_token="<UNK>",
//	         level="word", preprocess=None)
//	    the lines of the files as sentences of token ids (source "features", int64); a token
//	    may be None; preprocess is a function str -> str applied to each line
//	It has sources, num_examples (None: unknown), axis_labels and get_example_stream(), a
//	stream of its examples (resumable: its position is the number of examples read), which
//	DataStream(text_file) also gives.
func iterableModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.datasets", Members: starlark.StringDict{
		"TextFile": starlib.NewBuiltin("TextFile", textFileBuiltin),
	}})
	return
}

// IterableDatasetValue is an iterable Fuel dataset as a Starlark value.
type IterableDatasetValue struct {
	D    datasets.Iterable
	name string
}

var _ starlark.HasAttrs = (*IterableDatasetValue)(nil)

func (d *IterableDatasetValue) String() string {
	return fmt.Sprintf("<%s: sources %s>", d.name, strings.Join(d.D.Sources(), ", "))
}
func (d *IterableDatasetValue) Type() string          { return d.name }
func (d *IterableDatasetValue) Freeze()               {}
func (d *IterableDatasetValue) Truth() starlark.Bool  { return true }
func (d *IterableDatasetValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: dataset") }

// AttrNames lists the dataset's attributes.
func (d *IterableDatasetValue) AttrNames() []string {
	return []string{"axis_labels", "get_example_stream", "num_examples", "sources"}
}

// Attr returns an attribute.
func (d *IterableDatasetValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "num_examples":
		if n := d.D.NumExamples(); n >= 0 {
			return starlark.MakeInt(n), nil
		}
		return starlark.None, nil
	case "sources":
		return strTuple(d.D.Sources()), nil
	case "axis_labels":
		return labelsValue(d.D.AxisLabels()), nil
	case "get_example_stream":
		return starlib.NewBuiltin("get_example_stream", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			return &Stream{S: datasets.GetExampleStream(d.D), Name: "DataStream"}, nil
		}).BindReceiver(d), nil
	}
	return nil, nil
}

func examplesOf(thread *starlark.Thread, what string, v starlark.Value) ([]*nd.Array, error) {
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s: want a list of examples, got %s", what, v.Type())
	}
	var out []*nd.Array
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		a, err := starlib.ToArray(x, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: example %d: %v", what, len(out), err)
		}
		if a.DType() == nd.Float64 && !hasFloat64(x) {
			a = a.Astype(starlib.FloatX(thread))
		}
		out = append(out, a)
	}
	return out, nil
}

func textFileBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var files starlark.Value
	var dict *starlark.Dict
	var bos, eos, unk starlark.Value = starlark.String("<S>"), starlark.String("</S>"), starlark.String("<UNK>")
	level := "word"
	var preprocess, encoding starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "files", &files, "dictionary", &dict, "bos_token?", &bos,
		"eos_token?", &eos, "unk_token?", &unk, "level?", &level, "preprocess?", &preprocess, "encoding?", &encoding); err != nil {
		return nil, err
	}
	paths, err := stringList("TextFile: files", files)
	if err != nil {
		return nil, err
	}
	dictionary := map[string]int64{}
	for _, kv := range dict.Items() {
		k, ok := starlark.AsString(kv[0])
		var id int64
		if !ok || starlark.AsInt(kv[1], &id) != nil {
			return nil, fmt.Errorf("TextFile: dictionary must map strings to ints, got %s: %s", kv[0].Type(), kv[1].Type())
		}
		dictionary[k] = id
	}
	opts := datasets.TextFileOptions{Level: level}
	for _, tok := range []struct {
		name string
		v    starlark.Value
		dst  **string
	}{{"bos_token", bos, &opts.BOSToken}, {"eos_token", eos, &opts.EOSToken}, {"unk_token", unk, &opts.UNKToken}} {
		if tok.v == starlark.None {
			continue
		}
		s, ok := starlark.AsString(tok.v)
		if !ok {
			return nil, fmt.Errorf("TextFile: %s must be a string or None, got %s", tok.name, tok.v.Type())
		}
		*tok.dst = &s
	}
	if preprocess != starlark.None {
		fn, ok := preprocess.(starlark.Callable)
		if !ok {
			return nil, fmt.Errorf("TextFile: preprocess must be a function, got %s", preprocess.Type())
		}
		opts.Preprocess = func(line string) (string, error) {
			v, err := starlark.Call(thread, fn, starlark.Tuple{starlark.String(line)}, nil)
			if err != nil {
				return "", err
			}
			s, ok := starlark.AsString(v)
			if !ok {
				return "", fmt.Errorf("preprocess returned %s, want a string", v.Type())
			}
			return s, nil
		}
	}
	if encoding != starlark.None {
		if e, _ := starlark.AsString(encoding); e != "utf-8" && e != "utf8" && e != "ascii" {
			return nil, fmt.Errorf("TextFile: encoding %s: only UTF-8 text is read", encoding)
		}
	}
	for _, p := range paths {
		if err := starlib.CheckRead(thread, p); err != nil {
			return nil, fmt.Errorf("TextFile: %w", err)
		}
	}
	ds, err := datasets.NewTextFile(paths, dictionary, opts)
	if err != nil {
		return nil, err
	}
	return &IterableDatasetValue{D: ds, name: "TextFile"}, nil
}
