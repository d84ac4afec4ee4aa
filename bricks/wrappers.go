package bricks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/core"
)

// WrapWithExtraDims makes br an instance of a class wrapped by Blocks'
// WithExtraDims (blocks.bricks.wrappers): class, e.g.
// "LinearWithExtraDims", becomes the most specific class of br (a subclass
// of br's own), and every application of br accepts a number of extra
// leading dimensions through ApplyWithExtraDims. A brick still carrying
// its class's default name is renamed after class, as Blocks names a
// brick of the new class.
func WrapWithExtraDims(br Brick, class string) error {
	b := br.BaseBrick()
	if class == "" {
		return fmt.Errorf("WithExtraDims: the wrapped class needs a name")
	}
	if b.extraDims {
		return fmt.Errorf("%s is already wrapped by WithExtraDims", b.AnnotationName())
	}
	if b.Name == strings.ToLower(b.Class()) {
		b.Name = strings.ToLower(class)
	}
	b.subclass = class
	b.extraDims = true
	return nil
}

// HasExtraDims reports whether br's class is wrapped by WithExtraDims.
func HasExtraDims(br Brick) bool { return br.BaseBrick().extraDims }

// ApplyWithExtraDims runs application name of br on inputs that have
// extraNdim more leading dimensions than the application expects, as
// Blocks' WithExtraDims does: each input's first extraNdim+1 axes are
// merged into one, the application runs, and the first axis of each
// output is split back into the inputs' extra dimensions and the rest.
// All inputs must share the extra dimensions (Blocks' assumption; the
// first input's are used for the outputs). extraNdim 0 is Apply. The call
// is one application call whose inputs and outputs have the extra
// dimensions.
func ApplyWithExtraDims(br Brick, name string, extraNdim int, inputs ...*core.Variable) ([]*core.Variable, error) {
	b := br.BaseBrick()
	app := b.Application(name)
	if app == nil {
		return nil, fmt.Errorf("%s has no application %s", b.AnnotationName(), name)
	}
	if extraNdim < 0 {
		return nil, fmt.Errorf("%s.%s: extra_ndim must be >= 0, got %d", b.AnnotationName(), name, extraNdim)
	}
	if extraNdim == 0 {
		return Apply(br, name, inputs...)
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%s.%s: extra_ndim needs at least one input", b.AnnotationName(), name)
	}
	wrapped := *app
	wrapped.Inputs = slices.Clone(app.Inputs)
	wrapped.Fn = func(call *core.ApplicationCall, ins []*core.Variable) ([]*core.Variable, error) {
		merged := make([]*core.Variable, len(ins))
		for i, in := range ins {
			m, err := core.MergeLeadingAxes(in, extraNdim)
			if err != nil {
				return nil, fmt.Errorf("input %s: %w", inputName(app, i), err)
			}
			merged[i] = m
		}
		outs, err := app.Fn(call, merged)
		if err != nil {
			return nil, err
		}
		split := make([]*core.Variable, len(outs))
		for i, o := range outs {
			s, err := core.SplitLeadingAxes(o, ins[0], extraNdim)
			if err != nil {
				return nil, fmt.Errorf("output %d: %w", i, err)
			}
			split[i] = s
		}
		return split, nil
	}
	return applyApp(br, &wrapped, "", inputs)
}

func inputName(app *Application, i int) string {
	if i < len(app.Inputs) {
		return app.Inputs[i]
	}
	return fmt.Sprintf("#%d", i)
}
