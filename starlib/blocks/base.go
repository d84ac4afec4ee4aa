package blocks

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.bricks.base:
//
//	NoneAllocation   what a brick's unset lazy allocation argument reads
//	                 (Linear().input_dim is NoneAllocation); false, and
//	                 passing it is the same as passing None
//	NoneInitialization  what an unset lazy initialization argument reads,
//	                 the same otherwise
//	application(fn), application(inputs=None, outputs=None)(fn)
//	                 a script brick class's application (script_bricks.go)
//	lazy(allocation=None, initialization=None)(fn)
//	                 __init__ whose named arguments may be left out
func baseModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.base", Members: starlark.StringDict{
		"NoneAllocation":     NoneAllocation,
		"NoneInitialization": NoneInitialization,
		"application":        starlib.NewBuiltin("application", applicationBuiltin), // script_bricks.go
		"lazy":               starlib.NewBuiltin("lazy", lazyBuiltin),
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

// NoneInitialization is Blocks' NoneInitialization singleton: what a
// lazy initialization argument left out reads.
var NoneInitialization starlark.Value = noneInitialization{}

type noneInitialization struct{}

func (noneInitialization) String() string        { return "NoneInitialization" }
func (noneInitialization) Type() string          { return "NoneInitialization" }
func (noneInitialization) Freeze()               {}
func (noneInitialization) Truth() starlark.Bool  { return false }
func (noneInitialization) Hash() (uint32, error) { return starlark.String("NoneInitialization").Hash() }

// isLazyNone reports whether v is None or one of Blocks' lazy Nones,
// which a brick's arguments and attributes take as None.
func isLazyNone(v starlark.Value) bool {
	return v == starlark.None || v == NoneAllocation || v == NoneInitialization
}
