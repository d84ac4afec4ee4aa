package blocks

import (
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
)

// RecurrentStack's naming helpers, as Blocks has them:
//
//	RECURRENTSTACK_SEPARATOR          "#": a stacked layer's names end in #LEVEL
//	RecurrentStack.suffix(name, level)        name#level (name itself at level 0, and "mask" always)
//	RecurrentStack.suffixes(names, level)     suffix of each name but "mask"
//	RecurrentStack.split_suffix(name)         (name without its #LEVEL, LEVEL), LEVEL 0 without one
func recurrentStackNamesModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.recurrent", Members: starlark.StringDict{"RECURRENTSTACK_SEPARATOR": starlark.String(recurrentStackSeparator)}})
	return
}

const recurrentStackSeparator = "#"

func stackSuffixOf(name string, level int) string {
	if name == "mask" || level == 0 {
		return name
	}
	return name + recurrentStackSeparator + strconv.Itoa(level)
}

// brickClassStatic returns a class's static methods (RecurrentStack's
// naming helpers), or nil.
func brickClassStatic(class, name string) starlark.Value {
	if class != "RecurrentStack" {
		return nil
	}
	switch name {
	case "suffix":
		return starlib.NewBuiltin("suffix", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var n string
			var level int
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &n, "level", &level); err != nil {
				return nil, err
			}
			return starlark.String(stackSuffixOf(n, level)), nil
		})
	case "suffixes":
		return starlib.NewBuiltin("suffixes", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var names *starlark.List
			var level int
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "names", &names, "level", &level); err != nil {
				return nil, err
			}
			var out []starlark.Value
			for i := 0; i < names.Len(); i++ {
				s, ok := starlark.AsString(names.Index(i))
				if ok && s != "mask" {
					out = append(out, starlark.String(stackSuffixOf(s, level)))
				}
			}
			return starlark.NewList(out), nil
		})
	case "split_suffix":
		return starlib.NewBuiltin("split_suffix", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var n string
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &n); err != nil {
				return nil, err
			}
			if i := strings.LastIndex(n, recurrentStackSeparator); i >= 0 {
				digits := n[i+len(recurrentStackSeparator):]
				if l, err := strconv.Atoi(digits); err == nil && digits != "" && strings.Trim(digits, "0123456789") == "" {
					return starlark.Tuple{starlark.String(n[:i]), starlark.MakeInt(l)}, nil
				}
			}
			return starlark.Tuple{starlark.String(n), starlark.MakeInt(0)}, nil
		})
	}
	return nil
}
