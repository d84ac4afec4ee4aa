package blocks

import (
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/starlib"
)

// Module blocks.graph: the computation graph.
//
//	ComputationGraph(outputs)   the graph of a variable or a list of variables, with
//	    inputs, outputs, variables (in Blocks' order: Theano's io_toposort), parameters,
//	    intermediary_variables, auxiliary_variables, shared_variables,
//	    dict_of_inputs, and replace(replacements) -> a new graph with each key
//	    variable replaced by its value (the original stays usable); summary(input_shapes=None)
//	    -> the graph as text, one variable a line with its op, type, shape (inferred from
//	    input_shapes, a dict of input name to shape, where given), roles and brick;
//	    to_dot(input_shapes=None) -> the graph in Graphviz's DOT language.
//	apply_dropout(computation_graph, variables, drop_prob, rng=None, seed=None, custom_divisor=None)
//	    a new graph with each variable v replaced by v * mask / (1 - drop_prob) (or
//	    custom_divisor), role DROPOUT; a fresh mask each call of the compiled function,
//	    binomial draws from numpy.random.RandomState(seed) (default seed 1, Blocks' default), or,
//	    with rng (MRG_RandomStreams), one rng.binomial(v.shape, p=1 - drop_prob) draw per variable
//	apply_noise(computation_graph, variables, level, seed=None)
//	    a new graph with each variable v replaced by v + normal(0, level) noise, fresh each call
//	collect_parameters(computation_graph, parameters)
//	    a new graph whose parameters are slices of one vector "collected_parameters" (COLLECTOR)
//	apply_batch_normalization(computation_graph)
//	    the training graph: BatchNormalization applications use minibatch statistics
//	get_batch_normalization_updates(training_graph, allow_duplicates=False)
//	    [(population_mean, minibatch mean), (population_stdev, minibatch stdev), ...]
//	batch_normalization(*bricks)
//	    training mode for the BatchNormalization bricks among bricks and their descendants:
//	    batch_normalization(mlp)(lambda: mlp.apply(x)) calls the function in training mode
//	    and returns its result (Starlark has no with statement); .enter() and .exit() do the
//	    same in two steps
func graphModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.graph", Members: starlark.StringDict{
		"apply_dropout":                   starlib.NewBuiltin("apply_dropout", applyDropout),
		"apply_noise":                     starlib.NewBuiltin("apply_noise", applyNoise),
		"collect_parameters":              starlib.NewBuiltin("collect_parameters", collectParameters),
		"apply_batch_normalization":       starlib.NewBuiltin("apply_batch_normalization", applyBatchNormalization),
		"get_batch_normalization_updates": starlib.NewBuiltin("get_batch_normalization_updates", getBatchNormalizationUpdates),
		"batch_normalization":             starlib.NewBuiltin("batch_normalization", batchNormalization),
		"ComputationGraph": starlib.NewBuiltin("ComputationGraph", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
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
	return
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

// AttrNames lists the graph's attributes.
func (g *ComputationGraph) AttrNames() []string {
	n := []string{"auxiliary_variables", "dict_of_inputs", "inputs", "intermediary_variables", "outputs", "parameters", "replace", "shared_variables", "summary", "to_dot", "variables"}
	n = append(n, graphMoreAttrNames...)
	sort.Strings(n)
	return n
}

// Attr returns an attribute.
func (g *ComputationGraph) Attr(name string) (starlark.Value, error) {
	if v := graphMoreAttr(g, name); v != nil {
		return v, nil
	}
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
			d.SetKey(starlark.String(v.Name), &starlib.Variable{V: v})
		}
		return d, nil
	case "summary", "to_dot":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var shapes starlark.Value = starlark.None
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "input_shapes?", &shapes); err != nil {
				return nil, err
			}
			in := map[string][]int{}
			if shapes != starlark.None {
				d, ok := shapes.(*starlark.Dict)
				if !ok {
					return nil, fmt.Errorf("%s: input_shapes must be a dict of input name to shape, got %s", name, shapes.Type())
				}
				for _, kv := range d.Items() {
					k, ok := starlark.AsString(kv[0])
					if !ok {
						return nil, fmt.Errorf("%s: input_shapes keys must be input names, got %s", name, kv[0].Type())
					}
					s, err := starlib.AsInts(kv[1])
					if err != nil {
						return nil, fmt.Errorf("%s: input_shapes[%q]: %v", name, k, err)
					}
					in[k] = s
				}
			}
			var sb strings.Builder
			var err error
			if name == "summary" {
				err = g.G.Print(&sb, in)
			} else {
				err = g.G.WriteDOT(&sb, in)
			}
			if err != nil {
				return nil, err
			}
			return starlark.String(sb.String()), nil
		}).BindReceiver(g), nil
	case "replace":
		return starlib.NewBuiltin("replace", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var repl *starlark.Dict
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "replacements", &repl); err != nil {
				return nil, err
			}
			m := map[*core.Variable]*core.Variable{}
			for _, kv := range repl.Items() {
				k, ok := kv[0].(*starlib.Variable)
				if !ok {
					return nil, fmt.Errorf("replace: key %s is not a variable", kv[0].Type())
				}
				v, err := starlib.AsVariable(thread, kv[1])
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

func graphArg(what string, v starlark.Value) (*graph.ComputationGraph, error) {
	switch g := v.(type) {
	case *ComputationGraph:
		return g.G, nil
	case *Model:
		return g.M.ComputationGraph, nil
	}
	return nil, fmt.Errorf("%s: got %s, want a ComputationGraph", what, v.Type())
}

// seedArg reads an optional seed: None (Blocks' default_seed, 1) or an int
// in [0, 2**32).
func seedArg(what string, v starlark.Value) (uint32, error) {
	if v == nil || v == starlark.None {
		return graph.DefaultSeed, nil
	}
	var s int64
	if err := starlark.AsInt(v, &s); err != nil || s < 0 || s >= 1<<32 {
		return 0, fmt.Errorf("%s: seed must be an int in [0, 2**32), got %s", what, v.String())
	}
	return uint32(s), nil
}

func applyDropout(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cgv, vars, rng, seed, div starlark.Value = nil, nil, starlark.None, starlark.None, starlark.None
	var p starlib.FloatArg // an int too: apply_dropout(cg, vars, 1)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "computation_graph", &cgv, "variables", &vars, "drop_prob", &p, "rng?", &rng, "seed?", &seed, "custom_divisor?", &div); err != nil {
		return nil, err
	}
	g, err := graphArg("apply_dropout: computation_graph", cgv)
	if err != nil {
		return nil, err
	}
	vs, err := variablesOf(thread, "apply_dropout: variables", vars)
	if err != nil {
		return nil, err
	}
	var streams *core.RandomStreams
	if rng != starlark.None {
		r, ok := rng.(*starlib.RandomStreams)
		if !ok {
			return nil, fmt.Errorf("apply_dropout: rng must be random streams (MRG_RandomStreams), got %s", rng.Type())
		}
		streams = r.S
	}
	s, err := seedArg("apply_dropout", seed)
	if err != nil {
		return nil, err
	}
	var cd *float64
	if div != starlark.None {
		f, ok := starlark.AsFloat(div)
		if !ok {
			return nil, fmt.Errorf("apply_dropout: custom_divisor must be a number, got %s", div.Type())
		}
		cd = &f
	}
	var ng *graph.ComputationGraph
	if streams != nil {
		ng, err = graph.ApplyDropoutStreams(g, vs, float64(p), streams, cd)
	} else {
		ng, err = graph.ApplyDropout(g, vs, float64(p), s, cd)
	}
	if err != nil {
		return nil, err
	}
	return &ComputationGraph{G: ng}, nil
}

func applyNoise(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cgv, vars, seed starlark.Value = nil, nil, starlark.None
	var level starlib.FloatArg // an int too: apply_noise(cg, vars, 1)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "computation_graph", &cgv, "variables", &vars, "level", &level, "seed?", &seed); err != nil {
		return nil, err
	}
	g, err := graphArg("apply_noise: computation_graph", cgv)
	if err != nil {
		return nil, err
	}
	vs, err := variablesOf(thread, "apply_noise: variables", vars)
	if err != nil {
		return nil, err
	}
	s, err := seedArg("apply_noise", seed)
	if err != nil {
		return nil, err
	}
	ng, err := graph.ApplyNoise(g, vs, float64(level), s)
	if err != nil {
		return nil, err
	}
	return &ComputationGraph{G: ng}, nil
}

func collectParameters(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cgv, vars starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "computation_graph", &cgv, "parameters", &vars); err != nil {
		return nil, err
	}
	g, err := graphArg("collect_parameters: computation_graph", cgv)
	if err != nil {
		return nil, err
	}
	vs, err := variablesOf(thread, "collect_parameters: parameters", vars)
	if err != nil {
		return nil, err
	}
	ng, _, err := graph.CollectParameters(g, vs)
	if err != nil {
		return nil, err
	}
	return &ComputationGraph{G: ng}, nil
}

func applyBatchNormalization(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cgv starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "computation_graph", &cgv); err != nil {
		return nil, err
	}
	g, err := graphArg("apply_batch_normalization: computation_graph", cgv)
	if err != nil {
		return nil, err
	}
	ng, err := bricks.ApplyBatchNormalization(g)
	if err != nil {
		return nil, err
	}
	return &ComputationGraph{G: ng}, nil
}

func getBatchNormalizationUpdates(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cgv starlark.Value
	dup := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "training_graph", &cgv, "allow_duplicates?", &dup); err != nil {
		return nil, err
	}
	g, err := graphArg("get_batch_normalization_updates: training_graph", cgv)
	if err != nil {
		return nil, err
	}
	ups, err := bricks.BatchNormalizationUpdates(g, dup)
	if err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(ups))
	for i, u := range ups {
		out[i] = starlark.Tuple{starlib.NewVariable(thread, u.Shared), starlib.NewVariable(thread, u.Value)}
	}
	return starlark.NewList(out), nil
}

func batchNormalization(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("batch_normalization takes bricks only, no keyword arguments")
	}
	bs, err := brickList("batch_normalization", args, false)
	if err != nil {
		return nil, err
	}
	return &BNContext{bricks: bs}, nil
}

// BNContext is batch_normalization(*bricks): call it with a function to
// run the function in training mode, or enter() and exit().
type BNContext struct {
	bricks  []bricks.Brick
	entered []*bricks.BatchNormalization
}

var (
	_ starlark.Callable = (*BNContext)(nil)
	_ starlark.HasAttrs = (*BNContext)(nil)
)

func (c *BNContext) String() string       { return "<batch_normalization>" }
func (c *BNContext) Type() string         { return "batch_normalization" }
func (c *BNContext) Name() string         { return "batch_normalization" }
func (c *BNContext) Freeze()              {}
func (c *BNContext) Truth() starlark.Bool { return true }

// AttrNames lists enter and exit.
func (c *BNContext) AttrNames() []string { return []string{"enter", "exit"} }

// Attr returns enter or exit.
func (c *BNContext) Attr(name string) (starlark.Value, error) {
	switch name {
	case "enter", "exit":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			if name == "enter" {
				c.enter()
			} else {
				c.exit()
			}
			return starlark.None, nil
		}), nil
	}
	return nil, nil
}

func (c *BNContext) enter() {
	bns := bricks.FindBatchNormalizations(c.bricks...)
	for _, b := range bns {
		b.Enter()
	}
	c.entered = append(c.entered, bns...)
}

func (c *BNContext) exit() {
	for i := len(c.entered) - 1; i >= 0; i-- {
		c.entered[i].Exit()
	}
	c.entered = nil
}

// CallInternal runs fn() in training mode and returns its result.
func (c *BNContext) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Callable
	if err := starlark.UnpackArgs("batch_normalization", args, kwargs, "function", &fn); err != nil {
		return nil, err
	}
	bns := bricks.FindBatchNormalizations(c.bricks...)
	for _, b := range bns {
		b.Enter()
	}
	defer func() {
		for i := len(bns) - 1; i >= 0; i-- {
			bns[i].Exit()
		}
	}()
	return starlark.Call(thread, fn, nil, nil)
}
