package blocks

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
)

// Brick classes as tables (classtable.go). A brick's New makes
// the brick with its bricks constructor, reading the parameters that
// constructor takes; every other argument the call gave is then set as
// the brick's attribute (seed first, then by name), checked by the
// brick's attribute specs. An argument left out is not set: the brick's
// own default (Blocks') holds, or, for a lazy one, NoneAllocation until
// it is set or pushed by a parent.

// brickMaker makes the brick of one class from its bound arguments.
type brickMaker func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error)

// brickAttrSetter sets one constructor argument as a brick attribute.
type brickAttrSetter func(b bricks.Brick, name string, v starlark.Value) error

// brickTable is a brick class's table: New runs make, then sets the
// other given arguments with set (setBrickAttr when nil).
func brickTable(module, class, doc string, params []classParam, set brickAttrSetter, make brickMaker) *classTable {
	if set == nil {
		set = setBrickAttr
	}
	return &classTable{Module: module, Name: class, Doc: doc, Params: params,
		New: func(c *classCall) (starlark.Value, error) {
			b, err := make(c, BrickConfig(c.thread), c.String("name"))
			if err != nil {
				return nil, err
			}
			rest := map[string]starlark.Value{}
			for k, v := range c.given {
				if !c.taken[k] {
					rest[k] = v
				}
			}
			if err := finishBrickArgs(class, b, rest, set); err != nil {
				return nil, err
			}
			return &Brick{B: b}, nil
		}}
}

// finishBrickArgs sets a brick's remaining constructor arguments: the
// seed, then the others as attributes in name order.
func finishBrickArgs(class string, b bricks.Brick, a map[string]starlark.Value, set brickAttrSetter) error {
	if v, ok := a["seed"]; ok && v != starlark.None {
		var s int64
		if err := starlark.AsInt(v, &s); err != nil {
			return fmt.Errorf("%s: seed: %v", class, err)
		}
		if err := b.BaseBrick().SetSeed(s); err != nil {
			return err
		}
	}
	delete(a, "seed")
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := set(b, k, a[k]); err != nil {
			return err
		}
	}
	return nil
}

// Parameter helpers for the tables.

// lazy is a positional parameter Blocks' @lazy lets a script leave unset.
func lazy(name string) classParam { return classParam{Name: name, Lazy: true} }

// lazyInt is a lazy int parameter.
func lazyInt(name string) classParam { return classParam{Name: name, Lazy: true, Kind: argInt} }

// req is a required positional parameter.
func req(name string) classParam { return classParam{Name: name} }

// opt is a positional parameter with Blocks' default.
func opt(name, def string) classParam { return classParam{Name: name, Default: def} }

// kw is a keyword-only parameter (Blocks' **kwargs) with its default.
func kw(name, def string) classParam { return classParam{Name: name, Default: def, Keyword: true} }

// nameParam is Brick's name, as a keyword; namePositional is Brick's own
// first positional parameter, for the classes that take Brick's __init__.
var (
	nameParam      = classParam{Name: "name", Default: "None", Keyword: true, Kind: argString}
	namePositional = classParam{Name: "name", Default: "None", Kind: argString}
)

// brickKw are the keywords of a Brick; initKw those of an Initializable.
var (
	brickKw = []classParam{nameParam}
	initKw  = []classParam{nameParam, kw("weights_init", "None"), kw("biases_init", "None"), kw("use_bias", "None"), kw("seed", "None")}
)

// params joins parameter lists.
func params(lists ...[]classParam) []classParam {
	var out []classParam
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// ps is a list of parameters.
func ps(p ...classParam) []classParam { return p }

// mustBeDefault refuses a parameter given a value other than its
// default: Blocks' options the project does not have.
func mustBeDefault(c *classCall, names ...string) error {
	for _, n := range names {
		c.Take(n)
		v, ok := c.given[n]
		if !ok {
			continue
		}
		d, _ := c.table.param(n).defaultValue()
		if eq, err := starlark.Equal(v, d); err != nil || !eq {
			return fmt.Errorf("%s: %s=%s is not supported (only %s)", c.table.Name, n, v, c.table.param(n).Default)
		}
	}
	return nil
}
