package blocks

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Module blocks.bricks.base:
//
//	NoneAllocation   what a brick's unset lazy allocation argument reads
//	                 (Linear().input_dim is NoneAllocation); false, and
//	                 passing it is the same as passing None
func baseModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.base", Members: starlark.StringDict{
		"NoneAllocation": NoneAllocation,
	}})
	return
}

// NoneAllocation is Blocks' NoneAllocation singleton.
var NoneAllocation starlark.Value = noneAllocation{}

type noneAllocation struct{}

func (noneAllocation) String() string        { return "NoneAllocation" }
func (noneAllocation) Type() string          { return "NoneAllocation" }
func (noneAllocation) Freeze()               {}
func (noneAllocation) Truth() starlark.Bool  { return false }
func (noneAllocation) Hash() (uint32, error) { return starlark.String("NoneAllocation").Hash() }
