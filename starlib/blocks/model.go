package blocks

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.model: the Model.
//
//	Model(outputs)   the computation graph of outputs (every ComputationGraph attribute)
//	    plus get_top_bricks() -> the bricks of the graph and its scans that are no child of one of them (Blocks');
//	    get_parameter_dict() -> {"/mlp/linear_0.W": W, ...} (Blocks' hierarchical names);
//	    get_parameter_values() -> {name: array} (copies);
//	    set_parameter_values(values) copies {name: array or nested list} into the
//	    parameters: a wrong shape is an error naming the parameter (nothing is set), and
//	    unknown names and parameters left without a value are reported (printed, as
//	    Blocks logs them).
func modelModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.model", Members: starlark.StringDict{
		"Model": starlib.NewBuiltin("Model", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var outputs starlark.Value
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "outputs", &outputs); err != nil {
				return nil, err
			}
			vs, err := variablesOf(thread, "Model: outputs", outputs)
			if err != nil {
				return nil, err
			}
			m, err := bricks.NewModel(vs)
			if err != nil {
				return nil, err
			}
			return &Model{M: m, g: &ComputationGraph{G: m.ComputationGraph}}, nil
		}),
	}})
	return
}

// Model is Blocks' Model as a Starlark value.
type Model struct {
	M *bricks.Model
	g *ComputationGraph
}

var _ starlark.HasAttrs = (*Model)(nil)

func (m *Model) String() string {
	return fmt.Sprintf("<Model: %d top bricks, %d parameters>", len(m.M.TopBricks()), len(m.M.ParameterNames()))
}
func (m *Model) Type() string         { return "Model" }
func (m *Model) Freeze()              {}
func (m *Model) Truth() starlark.Bool { return true }

// AttrNames lists the model's attributes.
func (m *Model) AttrNames() []string {
	names := append(m.g.AttrNames(), "get_parameter_dict", "get_parameter_values", "get_top_bricks", "set_parameter_values", "top_bricks")
	sort.Strings(names)
	return names
}

// Attr returns an attribute.
func (m *Model) Attr(name string) (starlark.Value, error) {
	method := func(fn func(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)) starlark.Value {
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return fn(thread, args, kwargs)
		}).BindReceiver(m)
	}
	noArgs := func(args starlark.Tuple, kwargs []starlark.Tuple) error {
		return starlark.UnpackArgs(name, args, kwargs)
	}
	switch name {
	case "top_bricks": // Blocks' Model keeps the list it computes in __init__
		var out []starlark.Value
		for _, b := range m.M.TopBricks() {
			out = append(out, &Brick{b})
		}
		return starlark.NewList(out), nil
	case "get_top_bricks":
		return method(func(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := noArgs(args, kwargs); err != nil {
				return nil, err
			}
			var out []starlark.Value
			for _, b := range m.M.TopBricks() {
				out = append(out, &Brick{b})
			}
			return starlark.NewList(out), nil
		}), nil
	case "get_parameter_dict", "get_parameter_values":
		return method(func(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := noArgs(args, kwargs); err != nil {
				return nil, err
			}
			d := starlark.NewDict(len(m.M.ParameterNames()))
			for _, n := range m.M.ParameterNames() {
				p := m.M.Parameter(n)
				var v starlark.Value = starlib.NewVariable(thread, p)
				if name == "get_parameter_values" {
					v = starlib.FromArray(p.Value().Copy())
				}
				_ = d.SetKey(starlark.String(n), v)
			}
			return d, nil
		}), nil
	case "set_parameter_values":
		return method(func(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var d *starlark.Dict
			if err := starlark.UnpackArgs(name, args, kwargs, "parameter_values", &d); err != nil {
				return nil, err
			}
			vals := map[string]*nd.Array{}
			for _, kv := range d.Items() {
				k, ok := starlark.AsString(kv[0])
				if !ok {
					return nil, fmt.Errorf("set_parameter_values: keys must be parameter names, got %s", kv[0].Type())
				}
				var dt *nd.DType
				if p := m.M.Parameter(k); p != nil {
					t := p.DType()
					dt = &t
				}
				a, err := starlib.ToArray(kv[1], dt)
				if err != nil {
					return nil, fmt.Errorf("set_parameter_values: value for %s: %v", k, err)
				}
				vals[k] = a
			}
			unknown, missing, err := m.M.SetParameterValues(vals)
			if err != nil {
				var se *bricks.ShapeError
				if errors.As(err, &se) {
					return nil, fmt.Errorf("set_parameter_values: shape mismatch for parameter %s: expected %s, got %s", se.Name, nd.ShapeString(se.Expected), nd.ShapeString(se.Got))
				}
				return nil, fmt.Errorf("set_parameter_values: %v", err)
			}
			report := func(msg string) {
				if thread.Print != nil {
					thread.Print(thread, msg)
				} else {
					fmt.Fprintln(os.Stderr, msg)
				}
			}
			if len(unknown) > 0 {
				report("set_parameter_values: unknown parameter names: " + strings.Join(unknown, ", "))
			}
			if len(missing) > 0 {
				report("set_parameter_values: missing values for parameters: " + strings.Join(missing, ", "))
			}
			return starlark.None, nil
		}), nil
	}
	return m.g.Attr(name)
}
