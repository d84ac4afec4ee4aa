package all_test

import (
	"fmt"
	"log"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// A brick defined by a script and used from Go: the script builds the
// class with type(name, bases, namespace), as Python's class statement
// does, and its application with Blocks' decorator; Go makes an instance
// with keyword arguments, applies it to a Go variable (named as Blocks
// names an application's output) and compiles the output with core.
func Example_scriptBrick() {
	const src = `
load("blocks.bricks", "Feedforward")
load("blocks.bricks.base", "application")

def _init(self, factor, **kwargs):
    super(Scale, self).__init__(**kwargs)
    self.factor = factor

def _apply(self, input_):
    return self.factor * input_ + 1

Scale = type("Scale", (Feedforward,), {"__init__": _init, "apply": application(inputs = ["input_"], outputs = ["output"])(_apply)})
`
	in, err := starlib.NewInterp(starlib.Options{Library: all.Library(), FloatX: "float64"})
	if err != nil {
		log.Fatal(err)
	}
	globals, err := in.ExecFile("scale.star", []byte(src))
	if err != nil {
		log.Fatal(err)
	}
	brick, err := starlark.Call(in.Thread, globals["Scale"], nil, []starlark.Tuple{
		{starlark.String("factor"), starlark.Float(2.5)},
		{starlark.String("name"), starlark.String("scale")},
	})
	if err != nil {
		log.Fatal(err)
	}
	apply, err := brick.(starlark.HasAttrs).Attr("apply")
	if err != nil {
		log.Fatal(err)
	}
	x := core.NewInput("x", nd.Float64, 1)
	y, err := starlark.Call(in.Thread, apply, starlark.Tuple{&starlib.Variable{V: x}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	out := y.(*starlib.Variable).V
	f, err := core.Compile([]*core.Variable{x}, []*core.Variable{out}, nil)
	if err != nil {
		log.Fatal(err)
	}
	r, err := f.Call([]*nd.Array{nd.FromSlice([]float64{0, 1, 2}, 3)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(brick.Type(), out.Name, r[0].F64())
	// Output:
	// Scale scale_apply_output [1 3.5 6]
}
