package blocks

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.bricks.wrappers: Blocks' brick wrappers.
//
//	WithExtraDims()                     a wrapper: WithExtraDims()(Linear) is Blocks'
//	                                    class LinearWithExtraDims(Linear): decorators = [WithExtraDims()]
//	WithExtraDims()(brick_class, name=None)   the wrapped class (named brick_class's name + "WithExtraDims")
//	BrickWrapper                        the base class of wrappers (for isinstance-style checks)
//
// A brick of a class wrapped by WithExtraDims takes extra_ndim=N in every
// application of its base class: the inputs' first N+1 axes are merged,
// the application runs, and the outputs' first axis is split back.
func wrappersModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.wrappers", Members: starlark.StringDict{
		"WithExtraDims": starlib.NewBuiltin("WithExtraDims", func(thread *starlark.Thread, fb *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(fb.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			return withExtraDims{}, nil
		}),
		"BrickWrapper": &BrickClass{Class: "BrickWrapper"},
	}})
	return
}

// withExtraDims is a WithExtraDims() wrapper: call it with a brick class.
type withExtraDims struct{}

var _ starlark.Callable = withExtraDims{}

func (withExtraDims) String() string        { return "<blocks.bricks.wrappers.WithExtraDims object>" }
func (withExtraDims) Type() string          { return "WithExtraDims" }
func (withExtraDims) Freeze()               {}
func (withExtraDims) Truth() starlark.Bool  { return true }
func (withExtraDims) Hash() (uint32, error) { return starlark.String("WithExtraDims").Hash() }
func (withExtraDims) Name() string          { return "WithExtraDims" }

// CallInternal wraps a brick class: WithExtraDims()(Linear).
func (withExtraDims) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var base starlark.Value
	var name string
	if err := starlark.UnpackArgs("WithExtraDims", args, kwargs, "brick_class", &base, "name?", &name); err != nil {
		return nil, err
	}
	cls, ok := base.(brickClassValue)
	if !ok {
		return nil, fmt.Errorf("WithExtraDims wraps a brick class (e.g. WithExtraDims()(Linear)), got %s", base.Type())
	}
	if name == "" {
		name = cls.Name() + "WithExtraDims"
	}
	return &wrappedBrickClass{base: cls, class: name}, nil
}

// brickClassValue is a callable brick class (BrickClass or a wrapped one).
type brickClassValue interface {
	starlark.Callable
	starlark.HasAttrs
}

// wrappedBrickClass is a brick class wrapped by WithExtraDims.
type wrappedBrickClass struct {
	base  brickClassValue
	class string
}

var (
	_ starlark.Callable = (*wrappedBrickClass)(nil)
	_ starlark.HasAttrs = (*wrappedBrickClass)(nil)
)

func (c *wrappedBrickClass) Name() string          { return c.class }
func (c *wrappedBrickClass) String() string        { return "<class '" + c.class + "'>" }
func (c *wrappedBrickClass) Type() string          { return "BrickClass" }
func (c *wrappedBrickClass) Freeze()               {}
func (c *wrappedBrickClass) Truth() starlark.Bool  { return true }
func (c *wrappedBrickClass) Hash() (uint32, error) { return starlark.String(c.class).Hash() }

// Attr returns an unbound application (LinearWithExtraDims.apply) for
// filters.
func (c *wrappedBrickClass) Attr(name string) (starlark.Value, error) {
	return &UnboundApplication{Class: c.class, Name: name}, nil
}

func (c *wrappedBrickClass) AttrNames() []string { return c.base.AttrNames() }

// CallInternal makes a brick of the base class and wraps it.
func (c *wrappedBrickClass) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := starlark.Call(thread, c.base, args, kwargs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.class, err)
	}
	b, ok := v.(*Brick)
	if !ok {
		return nil, fmt.Errorf("%s: the base class made a %s, not a brick", c.class, v.Type())
	}
	if err := bricks.WrapWithExtraDims(b.B, c.class); err != nil {
		return nil, err
	}
	return b, nil
}

// callWithExtraDims runs a BoundApplication call that passes extra_ndim
// to a brick of a WithExtraDims class (ok false: not such a call).
func callWithExtraDims(thread *starlark.Thread, a *BoundApplication, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, ok bool, err error) {
	idx := -1
	for i, kv := range kwargs {
		if string(kv[0].(starlark.String)) == "extra_ndim" {
			idx = i
		}
	}
	if idx < 0 || !bricks.HasExtraDims(a.Brick) {
		return nil, false, nil
	}
	base := a.Brick.BaseBrick()
	fname := base.Name + "." + a.App
	var n int
	if err := starlark.AsInt(kwargs[idx][1], &n); err != nil {
		return nil, true, fmt.Errorf("%s: extra_ndim must be an int, got %s", fname, kwargs[idx][1].Type())
	}
	kwargs = append(append([]starlark.Tuple(nil), kwargs[:idx]...), kwargs[idx+1:]...)
	app := base.Application(a.App)
	vals := append([]starlark.Value(nil), args...)
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		i := -1
		for j, in := range app.Inputs {
			if in == k {
				i = j
			}
		}
		if i < 0 {
			return nil, true, fmt.Errorf("%s got an unexpected keyword argument %s (inputs: %s, extra_ndim)", fname, k, strings.Join(app.Inputs, ", "))
		}
		for len(vals) <= i {
			vals = append(vals, nil)
		}
		if vals[i] != nil {
			return nil, true, fmt.Errorf("%s got multiple values for %s", fname, k)
		}
		vals[i] = kv[1]
	}
	ins := make([]*core.Variable, len(vals))
	for i, x := range vals {
		if x == nil {
			return nil, true, fmt.Errorf("%s: missing input %s", fname, app.Inputs[i])
		}
		iv, err := starlib.AsVariable(thread, x)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %s: %v", fname, inputName(app.Inputs, i), err)
		}
		ins[i] = iv
	}
	outs, err := bricks.ApplyWithExtraDims(a.Brick, a.App, n, ins...)
	if err != nil {
		return nil, true, err
	}
	if len(outs) == 1 {
		return starlib.NewVariable(thread, outs[0]), true, nil
	}
	t := make(starlark.Tuple, len(outs))
	for i, o := range outs {
		t[i] = starlib.NewVariable(thread, o)
	}
	return t, true, nil
}

func inputName(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	return "input"
}
