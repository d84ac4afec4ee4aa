package blocks

import (
	"fmt"
	"sync"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/bricks/initialization"
)

// A brick attribute the script, the constructor call and the brick's
// parents never set reads what Blocks' __init__ stores for an argument
// left out: the class table's default (Convolutional's step (1, 1),
// border_mode 'valid', tied_biases True; MaxPooling's ignore_border True
// and padding (0, 0)), NoneAllocation for a lazy argument (Blocks'
// @lazy), or the table's Stored value where Blocks' __init__ stores
// another value than the default (Pooling's input_dim; BatchNormalization's
// scale_init and shift_init, Constant(1) and Constant(0)). The Go bricks
// apply the same defaults where they read the attribute;
// TestUnsetBrickAttributesReadBlocksDefaults and
// testdata/brick_defaults.star check that the two agree.

// brickTables indexes the tables of the brick classes by class name (the
// brick's most specific class, bricks.Base.Class), once the modules are
// built. It panics on two brick classes of one name, a programming error
// any test run finds.
var brickTables = sync.OnceValue(func() map[string]*classTable {
	modules() // the tables fill when the modules are built
	out := map[string]*classTable{}
	for _, t := range classTables {
		if !t.brick {
			continue
		}
		if _, dup := out[t.Name]; dup {
			panic("starlib: brick class table " + t.Name + " defined twice")
		}
		out[t.Name] = t
	}
	return out
})

// storedValue is what Blocks' __init__ stores in the attribute of the
// parameter when the call leaves it out: Stored when set, else the
// default (nil for a required or lazy parameter).
func (p *classParam) storedValue() (starlark.Value, error) {
	if p.Stored == "" {
		return p.defaultValue()
	}
	env := starlark.StringDict{
		// BatchNormalization's scale_init and shift_init: Constant(1) and
		// Constant(0) when None.
		"Constant": starlark.NewBuiltin("Constant", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x starlark.Value
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
				return nil, err
			}
			c, ok := starlark.AsFloat(x)
			if !ok {
				return nil, fmt.Errorf("Constant: got %s, want a number", x.Type())
			}
			return &Scheme{initialization.Constant{Value: c}}, nil
		}),
	}
	for k, v := range defaultEnv {
		env[k] = v
	}
	v, err := starlark.Eval(&starlark.Thread{Name: "default"}, p.Name, p.Stored, env)
	if err != nil {
		return nil, fmt.Errorf("stored value of %s (%s): %v", p.Name, p.Stored, err)
	}
	return v, nil
}

// unsetBrickAttr is the value of the attribute name of brick b when it
// was never set, as Blocks reads it; ok is false when the class has no
// such constructor parameter (the brick's own reading then holds).
func unsetBrickAttr(b bricks.Brick, name string) (v starlark.Value, ok bool) {
	t := brickTables()[b.BaseBrick().Class()]
	if t == nil {
		return nil, false
	}
	p := t.param(name)
	if p == nil {
		return nil, false
	}
	if p.Lazy {
		return NoneAllocation, true
	}
	if p.Default == "" {
		return nil, false
	}
	v, err := p.storedValue()
	if err != nil || v == nil {
		return nil, false // checked when the table was registered
	}
	return v, true
}
