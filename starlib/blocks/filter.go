package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.filter: selecting variables.
//
//	VariableFilter(roles=None, bricks=None, each_role=False, name=None, name_regex=None,
//	               theano_name=None, theano_name_regex=None, call_id=None, applications=None)
//	    a callable: VariableFilter(roles=[WEIGHT])(cg.variables) returns the variables
//	    that have one of roles (all of them with each_role), were made by one of bricks
//	    (brick instances or classes such as Linear), whose tag name is name or matches
//	    name_regex at its start, whose full name is theano_name or matches
//	    theano_name_regex, or were made by one of applications (linear.apply or Linear.apply).
func filterModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.filter", Members: starlark.StringDict{
		"VariableFilter": starlib.NewBuiltin("VariableFilter", newVariableFilter),
	}})
	return
}

func newVariableFilter(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var roles, brickArg, apps, callID starlark.Value = starlark.None, starlark.None, starlark.None, starlark.None
	var f graph.VariableFilter
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"roles?", &roles, "bricks?", &brickArg, "each_role?", &f.EachRole, "name?", &f.Name,
		"name_regex?", &f.NameRegex, "theano_name?", &f.TheanoName, "theano_name_regex?", &f.TheanoNameRegex,
		"call_id?", &callID, "applications?", &apps); err != nil {
		return nil, err
	}
	if roles != starlark.None {
		it, ok := roles.(starlark.Iterable)
		if !ok {
			return nil, fmt.Errorf("VariableFilter: roles must be a list of roles, got %s", roles.Type())
		}
		rs, err := rolesOf(it)
		if err != nil {
			return nil, fmt.Errorf("VariableFilter: %v", err)
		}
		f.Roles = rs
	}
	if brickArg != starlark.None {
		it, ok := brickArg.(starlark.Iterable)
		if !ok {
			return nil, fmt.Errorf("VariableFilter: bricks must be a list, got %s", brickArg.Type())
		}
		iter := it.Iterate()
		defer iter.Done()
		var x starlark.Value
		for iter.Next(&x) {
			switch x := x.(type) {
			case *Brick:
				f.Bricks = append(f.Bricks, graph.BrickSelector{Brick: x.B.(graph.Brick)})
			case *BrickClass:
				f.Bricks = append(f.Bricks, graph.BrickSelector{IsInstance: classSelector(x.Class)})
			default:
				return nil, fmt.Errorf("VariableFilter: bricks must hold bricks or brick classes, got %s", x.Type())
			}
		}
	}
	if apps != starlark.None {
		it, ok := apps.(starlark.Iterable)
		if !ok {
			return nil, fmt.Errorf("VariableFilter: applications must be a list, got %s", apps.Type())
		}
		iter := it.Iterate()
		defer iter.Done()
		var x starlark.Value
		for iter.Next(&x) {
			switch x := x.(type) {
			case *BoundApplication:
				f.Applications = append(f.Applications, graph.ApplicationSelector{BrickSelector: graph.BrickSelector{Brick: x.Brick.(graph.Brick)}, Name: x.App})
			case *UnboundApplication:
				f.Applications = append(f.Applications, graph.ApplicationSelector{BrickSelector: graph.BrickSelector{IsInstance: classSelector(x.Class)}, Name: x.Name})
			case appSelector: // generator.generate (generate_app.go)
				br, app := x.appRef()
				f.Applications = append(f.Applications, graph.ApplicationSelector{BrickSelector: graph.BrickSelector{Brick: br.(graph.Brick)}, Name: app})
			default:
				return nil, fmt.Errorf("VariableFilter: applications must hold applications (brick.apply or Class.apply), got %s", x.Type())
			}
		}
	}
	if s, ok := callID.(starlark.String); ok {
		f.CallIDValue = string(s)
	} else if callID != starlark.None {
		if err := starlark.AsInt(callID, &f.CallID); err != nil {
			return nil, fmt.Errorf("VariableFilter: call_id: %v", err)
		}
	}
	return &VariableFilter{F: &f}, nil
}

// VariableFilter is a callable filter over lists of variables.
type VariableFilter struct{ F *graph.VariableFilter }

var _ starlark.Callable = (*VariableFilter)(nil)

func (f *VariableFilter) String() string       { return "<VariableFilter>" }
func (f *VariableFilter) Type() string         { return "VariableFilter" }
func (f *VariableFilter) Name() string         { return "VariableFilter" }
func (f *VariableFilter) Freeze()              {}
func (f *VariableFilter) Truth() starlark.Bool { return true }

// CallInternal filters a list of variables.
func (f *VariableFilter) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var vars starlark.Value
	if err := starlark.UnpackArgs("VariableFilter", args, kwargs, "variables", &vars); err != nil {
		return nil, err
	}
	if g, ok := vars.(*ComputationGraph); ok { // Blocks filters a graph's variables
		vars = variableList(nil, g.G.Variables)
	}
	vs, err := variablesOf(thread, "VariableFilter: variables", vars)
	if err != nil {
		return nil, err
	}
	out, err := f.F.Apply(vs)
	if err != nil {
		return nil, err
	}
	return variableList(nil, out), nil
}
