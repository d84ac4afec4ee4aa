package blocks

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/starlib"
)

// Added to the module blocks.filter:
//
//	get_brick(var)              the brick that made var (its first brick
//	                            annotation), or None
//	get_application_call(var)   the application call that made var, or None:
//	                            .brick, .application (the application's name),
//	                            .metadata (a dict), .auxiliary_variables,
//	                            .add_auxiliary_variable(variable, roles=None, name=None)
//
// Added to the module blocks.graph (Blocks' blocks.graph.annotations):
//
//	Annotation()                     auxiliary variables attached by hand:
//	                                 .auxiliary_variables, .updates,
//	                                 .add_auxiliary_variable(variable, roles=None, name=None)
//	add_annotation(var, annotation)  attaches it to var (a ComputationGraph that
//	                                 meets var lists its auxiliary variables);
//	                                 a second annotation of the same kind is refused
//
// Added to the module blocks.utils:
//
//	is_shared_variable(variable)   whether variable is a shared variable
func annotationsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.filter", Members: starlark.StringDict{
		"get_brick":            starlib.NewBuiltin("get_brick", getBrick),
		"get_application_call": starlib.NewBuiltin("get_application_call", getApplicationCall),
	}})
	annotations := starlark.StringDict{
		"Annotation":     starlib.NewBuiltin("Annotation", newAnnotation),
		"add_annotation": starlib.NewBuiltin("add_annotation", addAnnotation),
	}
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.graph", Members: annotations})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.graph.annotations", Members: annotations})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.utils", Members: starlark.StringDict{
		"is_shared_variable": starlib.NewBuiltin("is_shared_variable", isSharedVariable),
	}})
	return
}

func getBrick(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v *starlib.Variable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "var", &v); err != nil {
		return nil, err
	}
	if br, ok := graph.BrickOf(v.V).(bricks.Brick); ok {
		return &Brick{br}, nil
	}
	return starlark.None, nil
}

func getApplicationCall(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v *starlib.Variable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "var", &v); err != nil {
		return nil, err
	}
	for _, a := range v.V.Tag.Annotations {
		if c, ok := a.(*core.ApplicationCall); ok {
			return &ApplicationCall{C: c}, nil
		}
	}
	return starlark.None, nil
}

func isSharedVariable(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "variable", &x); err != nil {
		return nil, err
	}
	v, ok := x.(*starlib.Variable)
	return starlark.Bool(ok && v.V.IsShared()), nil
}

// ApplicationCall is Blocks' ApplicationCall as a Starlark value: one call
// of a brick's application.
type ApplicationCall struct{ C *core.ApplicationCall }

var (
	_ starlark.HasAttrs   = (*ApplicationCall)(nil)
	_ starlark.Comparable = (*ApplicationCall)(nil)
)

func (a *ApplicationCall) String() string {
	return fmt.Sprintf("<ApplicationCall %s>", a.C.AnnotationName())
}
func (a *ApplicationCall) Type() string         { return "ApplicationCall" }
func (a *ApplicationCall) Freeze()              {}
func (a *ApplicationCall) Truth() starlark.Bool { return true }
func (a *ApplicationCall) Hash() (uint32, error) {
	return uint32(a.C.ID ^ a.C.ID>>32), nil
}

// CompareSameType: two values are equal when they are the same call.
func (a *ApplicationCall) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	same := a.C == y.(*ApplicationCall).C
	switch op {
	case syntax.EQL:
		return same, nil
	case syntax.NEQ:
		return !same, nil
	}
	return false, fmt.Errorf("ApplicationCall %s ApplicationCall: not ordered", op)
}

// AttrNames lists the call's attributes.
func (a *ApplicationCall) AttrNames() []string {
	names := []string{"add_auxiliary_variable", "application", "auxiliary_variables", "brick", "metadata"}
	sort.Strings(names)
	return names
}

// Attr returns an attribute.
func (a *ApplicationCall) Attr(name string) (starlark.Value, error) {
	switch name {
	case "brick":
		if br, ok := a.C.Brick.(bricks.Brick); ok {
			return &Brick{br}, nil
		}
		return starlark.None, nil
	case "application":
		if br, ok := a.C.Brick.(bricks.Brick); ok {
			return &BoundApplication{Brick: br, App: a.C.Application}, nil
		}
		return starlark.String(a.C.Application), nil
	case "auxiliary_variables":
		return variableList(nil, a.C.AuxiliaryVariables), nil
	case "metadata":
		d := starlark.NewDict(len(a.C.Metadata))
		keys := make([]string, 0, len(a.C.Metadata))
		for k := range a.C.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := d.SetKey(starlark.String(k), metadataValue(a.C.Metadata[k])); err != nil {
				return nil, err
			}
		}
		return d, nil
	case "add_auxiliary_variable":
		return addAuxiliaryBuiltin(name, func(v *core.Variable, vname string, roles ...*core.Role) {
			// Blocks' ApplicationCall.add_auxiliary_variable names the
			// variable {brick}_{application}_{name}, its tag name.
			if br, ok := a.C.Brick.(bricks.Brick); ok && vname != "" {
				v.Name = fmt.Sprintf("%s_%s_%s", br.BaseBrick().Name, a.C.Application, vname)
				v.Tag.Name = vname
				vname = ""
			}
			a.C.AddAuxiliaryVariable(v, vname, roles...)
		}), nil
	}
	return nil, nil
}

// auxiliaryArgs unpacks add_auxiliary_variable(variable, roles=None, name=None).
// addAuxiliaryBuiltin is add_auxiliary_variable, which adds with add (an
// annotation's or an application call's AddAuxiliaryVariable).
func addAuxiliaryBuiltin(name string, add func(v *core.Variable, name string, roles ...*core.Role)) *starlark.Builtin {
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		v, roles, vname, err := auxiliaryArgs(b.Name(), args, kwargs)
		if err != nil {
			return nil, err
		}
		add(v, vname, roles...)
		return starlark.None, nil
	})
}

func auxiliaryArgs(fname string, args starlark.Tuple, kwargs []starlark.Tuple) (*core.Variable, []*core.Role, string, error) {
	var v *starlib.Variable
	var rolesV starlark.Value = starlark.None
	var name string
	if err := starlark.UnpackArgs(fname, args, kwargs, "variable", &v, "roles?", &rolesV, "name??", &name); err != nil {
		return nil, nil, "", err
	}
	var roles []*core.Role
	if rolesV != starlark.None {
		it, ok := rolesV.(starlark.Iterable)
		if !ok {
			return nil, nil, "", fmt.Errorf("%s: roles must be a list of roles, got %s", fname, rolesV.Type())
		}
		rs, err := rolesOf(it)
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s: %v", fname, err)
		}
		roles = rs
	}
	return v.V, roles, name, nil
}

// metadataValue converts an application call's metadata value.
func metadataValue(x any) starlark.Value {
	switch x := x.(type) {
	case *core.Variable:
		return &starlib.Variable{V: x}
	case starlark.Value:
		return x
	}
	return attrValue(x)
}

// Annotation is Blocks' Annotation as a Starlark value.
type Annotation struct{ A *core.UserAnnotation }

var _ starlark.HasAttrs = (*Annotation)(nil)

func (a *Annotation) String() string        { return "<Annotation>" }
func (a *Annotation) Type() string          { return "Annotation" }
func (a *Annotation) Freeze()               {}
func (a *Annotation) Truth() starlark.Bool  { return true }
func (a *Annotation) Hash() (uint32, error) { return identityHash(a.A, a) }

func newAnnotation(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return &Annotation{A: &core.UserAnnotation{}}, nil
}

// AttrNames lists the annotation's attributes.
func (a *Annotation) AttrNames() []string {
	return []string{"add_auxiliary_variable", "auxiliary_variables", "updates"}
}

// Attr returns an attribute.
func (a *Annotation) Attr(name string) (starlark.Value, error) {
	switch name {
	case "auxiliary_variables":
		return variableList(nil, a.A.AuxiliaryVariables), nil
	case "updates":
		d := starlark.NewDict(len(a.A.Updates))
		for _, u := range a.A.Updates {
			_ = d.SetKey(&starlib.Variable{V: u.Shared}, &starlib.Variable{V: u.Value})
		}
		return d, nil
	case "add_auxiliary_variable":
		return addAuxiliaryBuiltin(name, a.A.AddAuxiliaryVariable).BindReceiver(a), nil
	}
	return nil, nil
}

func addAnnotation(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v *starlib.Variable
	var ann starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "var", &v, "annotation", &ann); err != nil {
		return nil, err
	}
	var a core.Annotation
	switch x := ann.(type) {
	case *Annotation:
		a = x.A
	case *ApplicationCall:
		a = x.C
	case *Brick:
		c, ok := x.B.(core.Annotation)
		if !ok {
			return nil, fmt.Errorf("add_annotation: %s cannot annotate a variable", x)
		}
		a = c
	default:
		return nil, fmt.Errorf("add_annotation: annotation must be an Annotation, a brick or an application call, got %s", ann.Type())
	}
	if v.Frozen() {
		return nil, fmt.Errorf("add_annotation: %s is frozen (defined by a module that has finished loading)", v)
	}
	if err := core.AddAnnotation(v.V, a); err != nil {
		return nil, fmt.Errorf("ValueError: add_annotation: %w", err)
	}
	return starlark.None, nil
}

// annotationValue is one of a variable's annotations as a Starlark value.
func annotationValue(a core.Annotation) starlark.Value {
	switch x := a.(type) {
	case *core.ApplicationCall:
		return &ApplicationCall{C: x}
	case *core.UserAnnotation:
		return &Annotation{A: x}
	case bricks.Brick:
		return &Brick{x}
	}
	return starlark.String(a.AnnotationName())
}
