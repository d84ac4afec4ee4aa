package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
)

// More of a variable's tag (Theano's var.tag, as Blocks uses it):
//
//	tag.name                 the short name a brick gave the variable, or None
//	tag.aggregation_scheme   the monitoring aggregation scheme (Mean(...), ...);
//	                         reading it when unset is an error, as in Python
//	tag.annotations          the bricks and application calls that made it
//	tag.replacement_of       after apply_noise/apply_dropout: the variable it replaced
func tagAttrMore(t *Tag, name string) (starlark.Value, bool, error) {
	v := t.v.V
	switch name {
	case "name":
		if v.Tag.Name == "" {
			return starlark.None, true, nil
		}
		return starlark.String(v.Tag.Name), true, nil
	case "annotations":
		out := make([]starlark.Value, len(v.Tag.Annotations))
		for i, a := range v.Tag.Annotations {
			out[i] = annotationValue(a)
		}
		return starlark.NewList(out), true, nil
	case "replacement_of":
		if v.Tag.ReplacementOf == nil {
			return nil, true, starlark.NoSuchAttrError(fmt.Sprintf("tag of %s has no replacement_of (it replaces no variable)", t.v))
		}
		return &Variable{V: v.Tag.ReplacementOf}, true, nil
	case "aggregation_scheme":
		if s, ok := schemeValue(v.Tag.Aggregation); ok {
			return s, true, nil
		}
		return nil, true, starlark.NoSuchAttrError(fmt.Sprintf("tag of %s has no aggregation_scheme", t.v))
	}
	return nil, false, nil
}

func tagAttrNamesMore(t *Tag) []string {
	names := []string{"name", "annotations"}
	if t.v.V.Tag.ReplacementOf != nil {
		names = append(names, "replacement_of")
	}
	if _, ok := schemeValue(t.v.V.Tag.Aggregation); ok {
		names = append(names, "aggregation_scheme")
	}
	return names
}

func setTagFieldMore(t *Tag, name string, val starlark.Value) (bool, error) {
	switch name {
	case "aggregation_scheme":
		if t.v.frozen {
			return true, fmt.Errorf("cannot set the aggregation scheme of %s: it is frozen (defined by a module that has finished loading)", t.v)
		}
		if val == starlark.None {
			t.v.V.Tag.Aggregation = nil
			return true, nil
		}
		s, ok := val.(*AggregationScheme)
		if !ok {
			return true, fmt.Errorf("tag.aggregation_scheme: got %s, want an aggregation scheme (blocks.monitoring.aggregation.Mean, ...)", val.Type())
		}
		t.v.V.Tag.Aggregation = s.S
		return true, nil
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
	return false, nil
}
