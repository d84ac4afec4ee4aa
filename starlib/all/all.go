// Package all assembles the standard module library: every Starlark
// module a blocks-repl script may load, listed explicitly.
package all

import (
	starlarkmath "go.starlark.net/lib/math"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
	"github.com/blocks-go/blocks/starlib/json"
	"github.com/blocks-go/blocks/starlib/numpy"
	"github.com/blocks-go/blocks/starlib/tensor"
)

// Modules returns every module of the standard library.
func Modules() []*starlarkstruct.Module {
	// go.starlark.net's own deterministic modules (not time: scripts are
	// reproducible); json restricted to plain data.
	mods := []*starlarkstruct.Module{starlarkmath.Module, json.Module, starlib.ConfigModule}
	mods = append(mods, numpy.Modules()...)
	mods = append(mods, tensor.Modules()...)
	mods = append(mods, starfuel.Modules()...)
	return append(mods, starblocks.Modules()...)
}

// Library is the standard library of modules (Modules). It panics if two
// modules define the same member, a programming error TestLibrary
// catches.
func Library() *starlib.Library {
	l, err := starlib.NewLibrary(Modules()...)
	if err != nil {
		panic(err)
	}
	return l
}
