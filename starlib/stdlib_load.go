package starlib

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/stdlib"
)

// loadStdlib runs a file of the embedded Starlark library
// (load("stdlib/regularization.star", ...)), once per interpreter. Its
// source is part of the binary, so it is not listed among the loaded user
// files.
func (in *Interp) loadStdlib(thread *starlark.Thread, module string) (starlark.StringDict, error) {
	key := "stdlib " + module
	if e, ok := in.cache[key]; ok {
		if e == nil {
			return nil, fmt.Errorf("cycle in load graph: %s loads itself", module)
		}
		return e.globals, e.err
	}
	src, err := stdlib.Source(module)
	if err != nil {
		in.cache[key] = &loadEntry{nil, err}
		return nil, err
	}
	in.cache[key] = nil
	g, err := execFile(thread, module, src, in.predeclared)
	in.cache[key] = &loadEntry{g, err}
	return g, err
}
