package blocks

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
)

// The containers are Blocks' base classes, which Python instantiates
// directly (Brick(name=None, children=None)) or subclasses to gather
// bricks:
//
//	Brick(name=None, children=None)
//	Initializable(weights_init=None, biases_init=None, use_bias=None, seed=None, **kwargs: name, children)
//
// The container has the children and the lifecycle (allocate, initialize,
// pushing its generator, seed and schemes to Initializable children), and
// no applications of its own; a script writes those as functions.
func containerModules() (mods []*starlarkstruct.Module) {
	members := registerClasses(true, containerTable("Brick", ps(namePositional, opt("children", "None"))),
		containerTable("Initializable", ps(opt("weights_init", "None"), opt("biases_init", "None"), opt("use_bias", "None"), opt("seed", "None"),
			nameParam, kw("children", "None"))))
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks", Members: members})
	// from blocks.bricks.base import Brick, as Blocks' tests write it.
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.base", Members: starlark.StringDict{"Brick": members["Brick"]}})
	return
}

func containerTable(class string, p []classParam) *classTable {
	return brickTable("blocks.bricks", class, "a container of its children", p, nil,
		func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
			var children []bricks.Brick
			if v := c.Take("children"); v != starlark.None {
				var err error
				if children, err = brickList(class+": children", v, false); err != nil {
					return nil, err
				}
			}
			return bricks.NewContainer(cfg, class, name, children)
		})
}
