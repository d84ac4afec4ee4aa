package starlib

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
)

// makeContainerBrick makes a brick of Blocks' base classes, which Python
// instantiates directly (Brick(name=None, children=None)) or subclasses
// to gather bricks:
//
//	Brick(name=None, children=None)
//	Initializable(name=None, children=None, weights_init=None, biases_init=None, use_bias=None, seed=None)
//
// The container has the children and the lifecycle (allocate, initialize,
// pushing its generator, seed and schemes to Initializable children), and
// no applications of its own; a script writes those as functions.
func makeContainerBrick(thread *starlark.Thread, class string, args starlark.Tuple, kwargs []starlark.Tuple) (bricks.Brick, error) {
	allowed := []string{"name", "children"}
	if class == "Initializable" {
		allowed = append(allowed, "weights_init", "biases_init", "use_bias", "seed")
	}
	a, err := brickArgs(class, nil, allowed, args, kwargs)
	if err != nil {
		return nil, err
	}
	name, err := brickName(class, a)
	if err != nil {
		return nil, err
	}
	var children []bricks.Brick
	if v, ok := a["children"]; ok {
		if children, err = brickList(class+": children", v, false); err != nil {
			return nil, err
		}
	}
	delete(a, "children")
	b, err := bricks.NewContainer(BrickConfig(thread), class, name, children)
	if err != nil {
		return nil, err
	}
	return finishBrick(class, b, a)
}
