package blocks

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
)

func init() { starlib.SetTagExtension(blocksTag{}) }

// blocksTag adds Blocks' tag attributes to every variable's tag:
//
//	tag.aggregation_scheme   the monitoring aggregation scheme (Mean(...), ...);
//	                         reading it when unset is an error, as in Python
//	tag.annotations          the bricks and application calls that made it
type blocksTag struct{}

func (blocksTag) TagAttr(x *starlib.Variable, name string) (starlark.Value, bool, error) {
	v := x.V
	switch name {
	case "annotations":
		out := make([]starlark.Value, len(v.Tag.Annotations))
		for i, a := range v.Tag.Annotations {
			out[i] = annotationValue(a)
		}
		return starlark.NewList(out), true, nil
	case "aggregation_scheme":
		if s, ok := schemeValue(v.Tag.Aggregation); ok {
			return s, true, nil
		}
		return nil, true, starlark.NoSuchAttrError(fmt.Sprintf("tag of %s has no aggregation_scheme", x))
	}
	return nil, false, nil
}

func (blocksTag) TagAttrNames(x *starlib.Variable) []string {
	names := []string{"annotations"}
	if _, ok := schemeValue(x.V.Tag.Aggregation); ok {
		names = append(names, "aggregation_scheme")
	}
	return names
}

func (blocksTag) SetTagField(x *starlib.Variable, name string, val starlark.Value) (bool, error) {
	if name != "aggregation_scheme" {
		return false, nil
	}
	if x.Frozen() {
		return true, fmt.Errorf("cannot set the aggregation scheme of %s: it is frozen (defined by a module that has finished loading)", x)
	}
	if val == starlark.None {
		x.V.Tag.Aggregation = nil
		return true, nil
	}
	s, ok := val.(*AggregationScheme)
	if !ok {
		return true, fmt.Errorf("tag.aggregation_scheme: got %s, want an aggregation scheme (blocks.monitoring.aggregation.Mean, ...)", val.Type())
	}
	x.V.Tag.Aggregation = s.S
	return true, nil
}
