package bricks

import "github.com/blocks-go/blocks/core"

// addAuxiliaryVariable is Blocks' Brick.add_auxiliary_variable: v gets the
// name, the role AUXILIARY (and roles) and the brick's annotation, and
// joins the brick's AuxiliaryVariables.
func (b *Base) addAuxiliaryVariable(v *core.Variable, name string, roles ...*core.Role) {
	if name != "" {
		v.Name = name
		v.Tag.Name = name
	}
	core.AddRole(v, core.Auxiliary)
	for _, r := range roles {
		core.AddRole(v, r)
	}
	v.Tag.Annotations = append(v.Tag.Annotations, b.self.(core.Annotation))
	b.AuxiliaryVariables = append(b.AuxiliaryVariables, v)
}

// BrickAuxiliaryVariables returns the brick's own auxiliary variables
// (graph.New collects them from every brick annotating a variable).
func (b *Base) BrickAuxiliaryVariables() []*core.Variable { return b.AuxiliaryVariables }

// norm2 is Theano's x.norm(2): the square root of the sum of squares.
func norm2(x *core.Variable) *core.Variable { return core.Sqrt(core.SumAll(core.Sqr(x))) }
