package bricks

import "fmt"

// Container is a brick of one of Blocks' base classes, Brick or
// Initializable, made directly: it has children and no parameters or
// applications of its own. It is what a Python subclass that only gathers
// bricks under one roof is (Blocks' tests' SimpleGenerator): an
// Initializable container pushes its generator and initialization schemes
// to its children, so that a seed given to it seeds the whole hierarchy.
type Container struct {
	*Base
	InitConfig
	init bool // of class Initializable
}

// NewContainer makes a container of class "Brick" or "Initializable".
func NewContainer(cfg *Config, class, name string, children []Brick) (*Container, error) {
	c := &Container{Base: &Base{}}
	switch class {
	case "Brick":
		c.initBase(c, cfg, name, "Brick")
	case "Initializable":
		c.initBase(c, cfg, name, "Initializable")
		c.init = true
	default:
		return nil, fmt.Errorf("a container is a Brick or an Initializable, not a %s", class)
	}
	seen := map[Brick]bool{}
	for i, ch := range children {
		if ch == nil {
			return nil, fmt.Errorf("%s: children[%d] is None", c.AnnotationName(), i)
		}
		if seen[ch] {
			return nil, fmt.Errorf("%s: %s is a child twice", c.AnnotationName(), ch.BaseBrick().AnnotationName())
		}
		seen[ch] = true
	}
	c.SetChildren(children)
	return c, nil
}
