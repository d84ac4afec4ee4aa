package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core/graph"
)

// Module blocks.graph: the computation graph.
//
//	ComputationGraph(outputs)   the graph of a variable or a list of variables, with
//	    inputs, outputs, variables (topological order from the inputs), parameters,
//	    intermediary_variables, auxiliary_variables, shared_variables,
//	    dict_of_inputs, and replace(replacements) -> a new graph with each key
//	    variable replaced by its value (the original stays usable).
func init() {
	Register("blocks.graph", &starlarkstruct.Module{Name: "blocks.graph", Members: starlark.StringDict{
		"ComputationGraph": NewBuiltin("ComputationGraph", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var outputs starlark.Value
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "outputs", &outputs); err != nil {
				return nil, err
			}
			vs, err := variablesOf(thread, "ComputationGraph: outputs", outputs)
			if err != nil {
				return nil, err
			}
			return &ComputationGraph{G: graph.New(vs)}, nil
		}),
	}})
}

// ComputationGraph is Blocks' ComputationGraph as a Starlark value.
type ComputationGraph struct{ G *graph.ComputationGraph }

var _ starlark.HasAttrs = (*ComputationGraph)(nil)

func (g *ComputationGraph) String() string {
	return fmt.Sprintf("<ComputationGraph: %d variables, %d inputs, %d parameters>", len(g.G.Variables), len(g.G.Inputs()), len(g.G.Parameters()))
}
func (g *ComputationGraph) Type() string         { return "ComputationGraph" }
func (g *ComputationGraph) Freeze()              {}
func (g *ComputationGraph) Truth() starlark.Bool { return true }
func (g *ComputationGraph) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable: ComputationGraph")
}

// AttrNames lists the graph's attributes.
func (g *ComputationGraph) AttrNames() []string {
	return []string{"auxiliary_variables", "dict_of_inputs", "inputs", "intermediary_variables", "outputs", "parameters", "replace", "shared_variables", "variables"}
}

// Attr returns an attribute.
func (g *ComputationGraph) Attr(name string) (starlark.Value, error) {
	switch name {
	case "inputs":
		return variableList(nil, g.G.Inputs()), nil
	case "outputs":
		return variableList(nil, g.G.Outputs), nil
	case "variables":
		return variableList(nil, g.G.Variables), nil
	case "parameters":
		return variableList(nil, g.G.Parameters()), nil
	case "intermediary_variables":
		return variableList(nil, g.G.IntermediaryVariables()), nil
	case "auxiliary_variables":
		return variableList(nil, g.G.AuxiliaryVariables()), nil
	case "shared_variables":
		return variableList(nil, g.G.SharedVariables()), nil
	case "dict_of_inputs":
		d := starlark.NewDict(0)
		for _, v := range g.G.Inputs() {
			d.SetKey(starlark.String(v.Name), &Variable{V: v})
		}
		return d, nil
	case "replace":
		return starlark.NewBuiltin("replace", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var repl *starlark.Dict
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "replacements", &repl); err != nil {
				return nil, err
			}
			m := map[*coreVariable]*coreVariable{}
			for _, kv := range repl.Items() {
				k, ok := kv[0].(*Variable)
				if !ok {
					return nil, fmt.Errorf("replace: key %s is not a variable", kv[0].Type())
				}
				v, err := AsVariable(thread, kv[1])
				if err != nil {
					return nil, fmt.Errorf("replace: value for %s: %v", k.V, err)
				}
				m[k.V] = v
			}
			ng, err := g.G.Replace(m)
			if err != nil {
				return nil, err
			}
			return &ComputationGraph{G: ng}, nil
		}).BindReceiver(g), nil
	}
	return nil, nil
}
