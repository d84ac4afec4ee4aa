package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
)

// Brick attributes under the names Blocks' classes store them, where
// that is not the constructor parameter's name:
//
//	leaky_rectifier._leak    LeakyRectifier's leak (Blocks keeps it as _leak); read and set
//	pooling.mode             'max', 'average_exc_pad' or 'average_inc_pad'; read and set
//
// (Hooks of bricks.go's brickAttrHooks and brickSetHooks.)

// brickAttrAliases maps a brick class's Blocks attribute to the project's
// attribute of the same value.
var brickAttrAliases = map[string]map[string]string{
	"LeakyRectifier": {"_leak": "leak"},
}

func blocksNamedAttrNames(b bricks.Brick) []string {
	var names []string
	for alias := range brickAttrAliases[b.BaseBrick().Class()] {
		names = append(names, alias)
	}
	if _, ok := b.(*bricks.Pooling); ok {
		names = append(names, "mode")
	}
	return names
}

func blocksNamedAttr(b *Brick, name string) (starlark.Value, bool, error) {
	if target, ok := brickAttrAliases[b.B.BaseBrick().Class()][name]; ok {
		v, err := b.Attr(target)
		return v, true, err
	}
	if p, ok := b.B.(*bricks.Pooling); ok && name == "mode" {
		return starlark.String(p.Mode()), true, nil
	}
	return nil, false, nil
}

func setBlocksNamedAttr(b *Brick, name string, v starlark.Value) (bool, error) {
	if target, ok := brickAttrAliases[b.B.BaseBrick().Class()][name]; ok {
		return true, b.SetField(target, v)
	}
	if p, ok := b.B.(*bricks.Pooling); ok && name == "mode" {
		s, ok := starlark.AsString(v)
		if !ok {
			return true, fmt.Errorf("%s.mode must be a string, got %s", p.Name, v.Type())
		}
		return true, p.SetMode(s)
	}
	return false, nil
}
