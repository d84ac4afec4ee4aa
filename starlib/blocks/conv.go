package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.bricks.conv: Blocks' convolutional bricks.
//
//	Convolutional(filter_size, num_filters, num_channels, batch_size=None, image_size=(None, None),
//	              step=(1, 1), border_mode='valid', tied_biases=True, name=None, weights_init=None,
//	              biases_init=None, use_bias=True, seed=None)
//	    Theano's conv2d (a true convolution: flipped filters) plus biases; W is
//	    (num_filters, num_channels) + filter_size (role FILTER), b is (num_filters,)
//	    or, untied, get_dim('output'); border_mode 'valid', 'full', 'half' or (rows, cols)
//	ConvolutionalTranspose(filter_size, num_filters, num_channels, original_image_size=None,
//	              unused_edge=(0, 0), ... as Convolutional)
//	    the transpose of a convolution (its gradient with respect to the images)
//	MaxPooling(pooling_size, step=None, input_dim=None, ignore_border=True, padding=(0, 0), name=None)
//	AveragePooling(pooling_size, step=None, input_dim=None, ignore_border=True, padding=(0, 0),
//	              include_padding=False, name=None)
//	ConvolutionalSequence(layers, num_channels, batch_size=None, image_size=(None, None),
//	              border_mode=None, tied_biases=None, name=None, weights_init=None, biases_init=None,
//	              use_bias=None)
//	    layers are bricks or applications (convolutions, poolings, activations); num_channels
//	    and image_size are pushed down the layers at allocation
//	Flattener(name=None)   (batch, ...) to (batch, features)
//
// Convolutional, pooling and sequence bricks have get_dim('input_') and
// get_dim('output') (None for unknown sizes), num_output_channels, and
// ConvolutionalSequence has layers. blocks.bricks gains Maxout(num_pieces)
// and LinearMaxout(input_dim, output_dim, num_pieces).
func convModules() (mods []*starlarkstruct.Module) {
	members := starlark.StringDict{}
	members["Pooling"] = &BrickClass{Class: "Pooling"}
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.conv", Members: members})
	return
}

// setConvBrickAttr is setBrickAttr that also takes an int for a pair
// (filter_size=5 means (5, 5)).
func setConvBrickAttr(b bricks.Brick, name string, v starlark.Value) error {
	if spec, ok := brickSpec(b, name); ok && spec.Kind == attrInts {
		var n int
		if err := starlark.AsInt(v, &n); err == nil {
			v = starlark.Tuple{starlark.MakeInt(n), starlark.MakeInt(n)}
		}
	}
	return setBrickAttr(b, name, v)
}

func layerList(v starlark.Value) ([]bricks.AppRef, error) {
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("ConvolutionalSequence: layers: got %s, want a list of bricks or applications", typeOf(v))
	}
	var out []bricks.AppRef
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for i := 0; iter.Next(&x); i++ {
		switch x := x.(type) {
		case *BoundApplication:
			out = append(out, bricks.AppRef{Brick: x.Brick, Name: x.App})
		case *Brick:
			out = append(out, bricks.AppRef{Brick: x.B, Name: "apply"})
		default:
			return nil, fmt.Errorf("ConvolutionalSequence: layers[%d]: got %s, want a brick or an application (brick.apply)", i, x.Type())
		}
	}
	return out, nil
}

// convAttr converts a Starlark value for an AttrSize (a tuple of ints or
// None) or AttrBorder ('valid', 'full', 'half' or a (rows, cols) padding)
// attribute.
func convAttr(b *bricks.Base, name string, kind attrKind, v starlark.Value) (any, error) {
	switch kind {
	case attrSize:
		var items []starlark.Value
		switch v := v.(type) {
		case starlark.Tuple:
			items = v
		case *starlark.List:
			for i := 0; i < v.Len(); i++ {
				items = append(items, v.Index(i))
			}
		default:
			return nil, fmt.Errorf("%s.%s must be a tuple of ints or None, got %s", b.Name, name, v.Type())
		}
		out := make(bricks.Size, len(items))
		for i, x := range items {
			if x == starlark.None {
				continue
			}
			if err := starlark.AsInt(x, &out[i]); err != nil || out[i] <= 0 {
				return nil, fmt.Errorf("%s.%s[%d] must be a positive int or None, got %s", b.Name, name, i, x)
			}
		}
		return out, nil
	case attrBorder:
		if s, ok := starlark.AsString(v); ok {
			return core.ParseBorder(s, nil)
		}
		pad, err := starlib.AsInts(v)
		if err != nil {
			return nil, fmt.Errorf("%s.border_mode must be 'valid', 'full', 'half' or a (rows, cols) padding, got %s", b.Name, v.Type())
		}
		bd, err := core.ParseBorder("", pad)
		if err != nil {
			return nil, fmt.Errorf("%s.%v", b.Name, err)
		}
		return bd, nil
	}
	return nil, fmt.Errorf("%s.%s cannot be set", b.Name, name)
}

func sizeTuple(s bricks.Size) starlark.Tuple {
	t := make(starlark.Tuple, len(s))
	for i, d := range s {
		if d == 0 {
			t[i] = starlark.None
		} else {
			t[i] = starlark.MakeInt(d)
		}
	}
	return t
}

// convAttrValue is the Starlark value of a Size or Border attribute.
func convAttrValue(v any) starlark.Value {
	switch v := v.(type) {
	case bricks.Size:
		return sizeTuple(v)
	case core.Border:
		if v.Mode != "" {
			return starlark.String(v.Mode)
		}
		return starlark.Tuple{starlark.MakeInt(v.Pad[0]), starlark.MakeInt(v.Pad[1])}
	}
	return starlark.None
}

func convAttrNames(b bricks.Brick) []string {
	var names []string
	if _, ok := b.(bricks.DimBrick); ok {
		names = append(names, "get_dim")
	}
	switch b.(type) {
	case *bricks.Convolutional:
		names = append(names, "W", "b", "num_output_channels")
	case *bricks.Pooling:
		names = append(names, "num_output_channels", "image_size", "num_channels")
	case *bricks.ConvolutionalSequence:
		names = append(names, "layers")
	case *bricks.LinearMaxout:
		names = append(names, "linear", "maxout")
	}
	return names
}

// convBrickAttr answers the attributes of the convolutional bricks that
// are not declared attributes: W, b, get_dim, layers, num_output_channels.
func convBrickAttr(b *Brick, name string) (starlark.Value, bool, error) {
	base := b.B.BaseBrick()
	switch name {
	case "get_dim":
		d, ok := b.B.(bricks.DimBrick)
		if !ok {
			return nil, false, nil
		}
		return starlib.NewBuiltin("get_dim", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var which string
			if err := starlark.UnpackPositionalArgs(fb.Name(), args, kwargs, 1, &which); err != nil {
				return nil, err
			}
			dim, err := d.GetDim(which)
			if err != nil {
				return nil, err
			}
			return sizeTuple(dim), nil
		}).BindReceiver(b), true, nil
	case "W", "b":
		c, ok := b.B.(*bricks.Convolutional)
		if !ok {
			return nil, false, nil
		}
		v := c.NamedParameter(name)
		if v == nil {
			return nil, true, fmt.Errorf("%s has no parameter %s yet: allocate it first", base.AnnotationName(), name)
		}
		return &starlib.Variable{V: v}, true, nil
	case "num_output_channels":
		type outChannels interface{ NumOutputChannels() (int, bool) }
		if c, ok := b.B.(outChannels); ok {
			if n, ok := c.NumOutputChannels(); ok {
				return starlark.MakeInt(n), true, nil
			}
			return starlark.None, true, nil
		}
	case "image_size", "num_channels":
		if p, ok := b.B.(*bricks.Pooling); ok {
			in, _ := p.GetDim("input_")
			if name == "num_channels" {
				return sizeTuple(in[:1])[0], true, nil
			}
			return sizeTuple(in[1:]), true, nil
		}
	case "layers":
		if s, ok := b.B.(*bricks.ConvolutionalSequence); ok {
			out := make([]starlark.Value, len(s.Layers))
			for i, l := range s.Layers {
				out[i] = &Brick{l}
			}
			return starlark.NewList(out), true, nil
		}
	case "linear", "maxout":
		if lm, ok := b.B.(*bricks.LinearMaxout); ok {
			if name == "linear" {
				return &Brick{lm.Linear}, true, nil
			}
			return &Brick{lm.Maxout}, true, nil
		}
	}
	return nil, false, nil
}
