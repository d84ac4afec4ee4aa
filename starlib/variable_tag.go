package starlib

import (
	"fmt"
	"sync"

	"go.starlark.net/starlark"
)

// More of a variable's tag (Theano's var.tag, as Blocks uses it):
//
//	tag.name                 the short name a brick gave the variable, or None
//	tag.replacement_of       after apply_noise/apply_dropout: the variable it replaced
//
// and, through the TagExtension of the blocks modules:
//
//	tag.aggregation_scheme   the monitoring aggregation scheme (Mean(...), ...);
//	                         reading it when unset is an error, as in Python
//	tag.annotations          the bricks and application calls that made it
func tagAttrMore(t *Tag, name string) (starlark.Value, bool, error) {
	v := t.v.V
	switch name {
	case "name":
		if v.Tag.Name == "" {
			return starlark.None, true, nil
		}
		return starlark.String(v.Tag.Name), true, nil
	case "replacement_of":
		if v.Tag.ReplacementOf == nil {
			return nil, true, starlark.NoSuchAttrError(fmt.Sprintf("tag of %s has no replacement_of (it replaces no variable)", t.v))
		}
		return &Variable{V: v.Tag.ReplacementOf}, true, nil
	}
	if e := tagExtension(); e != nil {
		return e.TagAttr(t.v, name)
	}
	return nil, false, nil
}

func tagAttrNamesMore(t *Tag) []string {
	names := []string{"name"}
	if t.v.V.Tag.ReplacementOf != nil {
		names = append(names, "replacement_of")
	}
	if e := tagExtension(); e != nil {
		names = append(names, e.TagAttrNames(t.v)...)
	}
	return names
}

func setTagFieldMore(t *Tag, name string, val starlark.Value) (bool, error) {
	switch name {
	case "name":
		if val == starlark.None {
			t.v.V.Tag.Name = ""
			return true, nil
		}
		s, ok := starlark.AsString(val)
		if !ok {
			return true, fmt.Errorf("tag.name: got %s, want a string or None", val.Type())
		}
		t.v.V.Tag.Name = s
		return true, nil
	}
	if e := tagExtension(); e != nil {
		return e.SetTagField(t.v, name, val)
	}
	return false, nil
}

// Frozen reports whether the variable's value is frozen (defined by a
// module that has finished loading): Starlark-side changes to it, such as
// renaming it or setting its tag's fields, are refused.
func (v *Variable) Frozen() bool { return v.frozen }

// A TagExtension adds attributes to every variable's tag: the blocks
// modules' annotations and aggregation_scheme, whose values (bricks,
// application calls, aggregation schemes) this package does not know.
// handled is false for a name the extension does not have.
type TagExtension interface {
	TagAttr(v *Variable, name string) (val starlark.Value, handled bool, err error)
	TagAttrNames(v *Variable) []string
	SetTagField(v *Variable, name string, val starlark.Value) (handled bool, err error)
}

var tagExt struct {
	sync.Once
	e TagExtension
}

// SetTagExtension installs the tag's extension. It is the one extension
// point of this package set from an init function (package
// starlib/blocks's), because a Starlark attribute lookup has no thread
// that could carry it: it is set once, before any script runs, and never
// changed. A second call panics, a programming error.
func SetTagExtension(e TagExtension) {
	set := false
	tagExt.Do(func() { tagExt.e, set = e, true })
	if !set {
		panic("starlib.SetTagExtension: called twice")
	}
}

func tagExtension() TagExtension { return tagExt.e }
