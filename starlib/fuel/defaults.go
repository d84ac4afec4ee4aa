package fuel

import (
	"fmt"
	"slices"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Module fuel.transformers.defaults, Fuel's default transformers:
//
//	ToBytes(stream, which_sources=None)   each example of the sources (a uint8 array) as
//	    its bytes (numpy's tostring, bytes on Python 3); a batch as a list of bytes; axis labels
//	    ('bytes',), or ('batch', 'bytes') where the source had a batch axis
//	uint8_pixels_to_floatX(which_sources)   the transformer specs Fuel's image datasets
//	    default to: ((ScaleAndShift, [1 / 255.0, 0], {"which_sources": ...}),
//	    (Cast, ["floatX"], {"which_sources": ...}))
//	rgb_images_from_encoded_bytes(which_sources)   ((ImagesFromBytes, [],
//	    {"which_sources": ..., "color_mode": "RGB"}),)
//
// A spec (transformer, args, kwargs) is applied as transformer(stream, *args, **kwargs).
func defaultsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.transformers.defaults", Members: starlark.StringDict{
		"ToBytes":                       starlib.NewBuiltin("ToBytes", toBytesBuiltin),
		"uint8_pixels_to_floatX":        starlib.NewBuiltin("uint8_pixels_to_floatX", defaultSpecs),
		"rgb_images_from_encoded_bytes": starlib.NewBuiltin("rgb_images_from_encoded_bytes", defaultSpecs),
	}})
	return
}

func toBytesBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st *Stream
	var which starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "stream", &st, "which_sources?", &which); err != nil {
		return nil, err
	}
	sources := st.S.Sources()
	ws, err := stringList("ToBytes: which_sources", which)
	if err != nil {
		return nil, err
	}
	if ws == nil {
		ws = sources
	}
	for _, w := range ws {
		if !slices.Contains(sources, w) {
			return nil, fmt.Errorf("ToBytes: which_sources: %q is not a source of the stream (it has %s)", w, starlib.JoinNames(sources))
		}
	}
	examples := st.S.ProducesExamples()
	labels := st.S.AxisLabels()
	if labels == nil {
		labels = map[string][]string{}
	}
	for _, w := range ws {
		if slices.Contains(labels[w], "batch") {
			labels[w] = []string{"batch", "bytes"}
		} else {
			labels[w] = []string{"bytes"}
		}
	}
	toBytes := func(a *nd.Array) ([]byte, error) {
		u, ok := a.Data.([]uint8)
		if !ok {
			return nil, fmt.Errorf("ToBytes: want uint8 examples, got %s", a.DType())
		}
		return slices.Clone(u), nil
	}
	t, err := transformers.Mapping(st.S, func(data []*nd.Array) ([]*nd.Array, error) {
		out := slices.Clone(data)
		for i, src := range sources {
			if !slices.Contains(ws, src) {
				continue
			}
			if examples {
				s, err := toBytes(data[i])
				if err != nil {
					return nil, err
				}
				out[i] = nd.ByteStrings([][]byte{s}, []int{}...)
				continue
			}
			parts, err := data[i].Parts()
			if err != nil {
				return nil, fmt.Errorf("ToBytes: source %q: %v", src, err)
			}
			strs := make([][]byte, len(parts))
			for k, p := range parts {
				if strs[k], err = toBytes(p); err != nil {
					return nil, err
				}
			}
			out[i] = nd.ByteStrings(strs)
		}
		return out, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return &Stream{S: &streamOverride{Stream: t, labels: labels, labelsSet: true}, Name: "ToBytes"}, nil
}

// defaultSpecs returns the default-transformer specs of
// uint8_pixels_to_floatX and rgb_images_from_encoded_bytes.
func defaultSpecs(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var which starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "which_sources", &which); err != nil {
		return nil, err
	}
	if _, err := stringList(b.Name()+": which_sources", which); err != nil {
		return nil, err
	}
	member := func(module, name string) starlark.Value {
		if m, ok := starlib.Module(thread, module); ok {
			if v, ok := m.Members[name]; ok {
				return v
			}
		}
		return starlark.None
	}
	kw := func(extra ...starlark.Tuple) *starlark.Dict {
		d := starlark.NewDict(2)
		d.SetKey(starlark.String("which_sources"), which)
		for _, kv := range extra {
			d.SetKey(kv[0], kv[1])
		}
		return d
	}
	if b.Name() == "uint8_pixels_to_floatX" {
		return starlark.Tuple{
			starlark.Tuple{member("fuel.transformers", "ScaleAndShift"), starlark.NewList([]starlark.Value{starlark.Float(1 / 255.0), starlark.MakeInt(0)}), kw()},
			starlark.Tuple{member("fuel.transformers", "Cast"), starlark.NewList([]starlark.Value{starlark.String(starlib.FloatX(thread).String())}), kw()},
		}, nil
	}
	return starlark.Tuple{
		starlark.Tuple{member("fuel.transformers.image", "ImagesFromBytes"), starlark.NewList(nil), kw(starlark.Tuple{starlark.String("color_mode"), starlark.String("RGB")})},
	}, nil
}
