package blocks

import (
	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
)

// BrickParam is, for the tests of package blocks_test, one constructor
// parameter of a brick class's table: Blocks' default as source text,
// whether it is lazy, and what an attribute left unset reads (nil for a
// required parameter).
type BrickParam struct {
	Name, Default string
	Stored        string // what Blocks stores when Default is given, if not Default
	Lazy          bool
	Unset         starlark.Value
}

// BrickTableForTest is a brick class's module and table parameters.
type BrickTableForTest struct {
	Module string
	Params []BrickParam
}

// BrickClasses returns each brick class's table by class name.
func BrickClasses() map[string]*BrickTableForTest {
	out := map[string]*BrickTableForTest{}
	for name, t := range brickTables() {
		c := &BrickTableForTest{Module: t.Module}
		out[name] = c
		for i := range t.Params {
			p := &t.Params[i]
			bp := BrickParam{Name: p.Name, Default: p.Default, Stored: p.Stored, Lazy: p.Lazy}
			if p.Lazy {
				bp.Unset = NoneAllocation
			} else if v, err := p.storedValue(); err == nil {
				bp.Unset = v
			}
			c.Params = append(c.Params, bp)
		}
	}
	return out
}

// BrickChain is the brick's Python class chain, most specific first.
func BrickChain(b bricks.Brick) []string { return brickChain(b) }
