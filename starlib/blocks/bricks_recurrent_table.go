package blocks

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
)

// The brick classes of blocks.bricks.recurrent, blocks.bricks.lookup,
// blocks.bricks.parallel, blocks.bricks.sequence_generators and
// blocks.bricks.attention as tables.
func bricksRecurrentTableModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.recurrent", Members: registerClasses(true, recurrentBrickTables()...)})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.lookup", Members: registerClasses(true, lookupBrickTables()...)})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.parallel", Members: registerClasses(true, parallelBrickTables()...)})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.sequence_generators", Members: registerClasses(true, generatorBrickTables()...)})
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.bricks.attention", Members: registerClasses(true, attentionBrickTables()...)})
	return
}

func recurrentBrickTables() []*classTable {
	const m = "blocks.bricks.recurrent"
	gated := func(class, doc string) *classTable {
		return brickTable(m, class, doc, params(ps(lazyInt("dim"), opt("activation", "None"), opt("gate_activation", "None")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				act, err := optBrick(class, "activation", c.Take("activation"))
				if err != nil {
					return nil, err
				}
				gate, err := optBrick(class, "gate_activation", c.Take("gate_activation"))
				if err != nil {
					return nil, err
				}
				if class == "LSTM" {
					return bricks.NewLSTM(cfg, name, c.Int("dim"), act, gate), nil
				}
				return bricks.NewGatedRecurrent(cfg, name, c.Int("dim"), act, gate), nil
			})
	}
	return []*classTable{
		brickTable(m, "SimpleRecurrent", "h(t) = activation(inputs(t) + h(t-1)·W)", params(ps(lazyInt("dim"), req("activation")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				act, err := optBrick("SimpleRecurrent", "activation", c.Take("activation"))
				if err != nil {
					return nil, err
				}
				if act == nil {
					return nil, fmt.Errorf("SimpleRecurrent: activation is required (e.g. Tanh())")
				}
				return bricks.NewSimpleRecurrent(cfg, name, c.Int("dim"), act), nil
			}),
		gated("LSTM", "long short-term memory with diagonal peepholes"),
		gated("GatedRecurrent", "gated recurrent unit (update and reset gates)"),
		brickTable(m, "Bidirectional", "a forward and a backward copy of prototype, outputs concatenated", params(ps(req("prototype")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				proto, err := optBrick("Bidirectional", "prototype", c.Take("prototype"))
				if err != nil {
					return nil, err
				}
				if proto == nil {
					return nil, fmt.Errorf("Bidirectional: prototype is required")
				}
				return bricks.NewBidirectional(cfg, name, proto)
			}),
		brickTable(m, "RecurrentStack", "layers of recurrent transitions, each reading the one below through a Fork",
			params(ps(req("transitions"), opt("fork_prototype", "None"), classParam{Name: "states_name", Default: "'states'", Kind: argString},
				opt("skip_connections", "False")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				ts, err := brickList("RecurrentStack: transitions", c.Take("transitions"), false)
				if err != nil {
					return nil, err
				}
				fp, err := optPrototype("RecurrentStack", "fork_prototype", c.Take("fork_prototype"), false)
				if err != nil {
					return nil, err
				}
				statesName := c.String("states_name")
				if statesName == "" {
					statesName = "states" // None: Blocks' default
				}
				return bricks.NewRecurrentStack(cfg, name, ts, fp, statesName, c.Bool("skip_connections"))
			}),
	}
}

func lookupBrickTables() []*classTable {
	return []*classTable{
		brickTable("blocks.bricks.lookup", "LookupTable", "apply(indices) gives W[indices]", params(ps(lazyInt("length"), lazyInt("dim")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewLookupTable(cfg, name, c.Int("length"), c.Int("dim")), nil
			}),
	}
}

func parallelBrickTables() []*classTable {
	const m = "blocks.bricks.parallel"
	ints := func(c *classCall, k string) ([]int, error) { return optInts(c.table.Name, k, c.Take(k)) }
	proto := func(c *classCall) (bricks.Feedforward, error) {
		if err := mustBeDefault(c, "child_prefix"); err != nil {
			return nil, err
		}
		return optPrototype(c.table.Name, "prototype", c.Take("prototype"), true)
	}
	// copies are the transforms of a brick whose prototype is a script
	// class's brick (the face copies its script parts); nil otherwise,
	// for the Go brick to copy the prototype.
	copies := func(c *classCall, p bricks.Feedforward, n int) ([]bricks.Feedforward, error) {
		if p == nil || brickExtra(p) == nil {
			return nil, nil
		}
		return copyPrototype(c.thread, c.table.Name, p, n)
	}
	names := func(c *classCall, k string) ([]string, error) { return strList(c.table.Name, k, c.Take(k)) }
	// protoNamesDims reads what each of these bricks takes first, in this
	// order: the prototype, the names (namesKey) and their dimensions
	// (dimsKey).
	protoNamesDims := func(c *classCall, namesKey, dimsKey string) (bricks.Feedforward, []string, []int, error) {
		p, err := proto(c)
		if err != nil {
			return nil, nil, nil, err
		}
		ns, err := names(c, namesKey)
		if err != nil {
			return nil, nil, nil, err
		}
		dims, err := ints(c, dimsKey)
		if err != nil {
			return nil, nil, nil, err
		}
		return p, ns, dims, nil
	}
	prefix := kw("child_prefix", "None")
	return []*classTable{
		brickTable(m, "Parallel", "one transformation (a copy of prototype) per input",
			params(ps(lazy("input_names"), lazy("input_dims"), lazy("output_dims"), opt("prototype", "None"), opt("child_prefix", "None")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				p, ns, in, err := protoNamesDims(c, "input_names", "input_dims")
				if err != nil {
					return nil, err
				}
				out, err := ints(c, "output_dims")
				if err != nil {
					return nil, err
				}
				if cs, err := copies(c, p, len(ns)); err != nil || cs != nil {
					if err != nil {
						return nil, err
					}
					return bricks.NewParallelOf(cfg, "Parallel", name, ns, in, 0, out, "", cs)
				}
				return bricks.NewParallel(cfg, name, ns, in, out, p)
			}),
		brickTable(m, "Fork", "one transformation of the input per output name",
			params(ps(lazy("output_names"), lazyInt("input_dim"), opt("prototype", "None"), classParam{Name: "output_dims", Lazy: true, Keyword: true}, prefix), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				p, ns, out, err := protoNamesDims(c, "output_names", "output_dims")
				if err != nil {
					return nil, err
				}
				if cs, err := copies(c, p, len(ns)); err != nil || cs != nil {
					if err != nil {
						return nil, err
					}
					return bricks.NewParallelOf(cfg, "Fork", name, ns, out, c.Int("input_dim"), nil, "", cs)
				}
				return bricks.NewFork(cfg, name, ns, c.Int("input_dim"), out, p)
			}),
		brickTable(m, "Distribute", "adds a transformation of the source to each target",
			params(ps(lazy("target_names"), lazy("source_name"), lazy("target_dims"), lazyInt("source_dim"), opt("prototype", "None"), prefix), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				p, ns, td, err := protoNamesDims(c, "target_names", "target_dims")
				if err != nil {
					return nil, err
				}
				src, ok := starlark.AsString(c.Take("source_name"))
				if !ok {
					return nil, fmt.Errorf("Distribute: source_name must be a string")
				}
				if cs, err := copies(c, p, len(ns)); err != nil || cs != nil {
					if err != nil {
						return nil, err
					}
					return bricks.NewParallelOf(cfg, "Distribute", name, ns, td, c.Int("source_dim"), nil, src, cs)
				}
				return bricks.NewDistribute(cfg, name, ns, src, td, c.Int("source_dim"), p)
			}),
		brickTable(m, "Merge", "the sum of one transformation per input",
			params(ps(lazy("input_names"), lazy("input_dims"), lazyInt("output_dim"), opt("prototype", "None"), prefix), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				p, ns, in, err := protoNamesDims(c, "input_names", "input_dims")
				if err != nil {
					return nil, err
				}
				if cs, err := copies(c, p, len(ns)); err != nil || cs != nil {
					if err != nil {
						return nil, err
					}
					return bricks.NewParallelOf(cfg, "Merge", name, ns, in, c.Int("output_dim"), nil, "", cs)
				}
				return bricks.NewMerge(cfg, name, ns, in, c.Int("output_dim"), p)
			}),
	}
}

func generatorBrickTables() []*classTable {
	const m = "blocks.bricks.sequence_generators"
	return []*classTable{
		brickTable(m, "SequenceGenerator", "a readout, a transition and an optional attention generating sequences",
			params(ps(req("readout"), req("transition"), opt("attention", "None"), opt("add_contexts", "True")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				const class = "SequenceGenerator"
				ro, err := optBrick(class, "readout", c.Take("readout"))
				if err != nil {
					return nil, err
				}
				readout, ok := ro.(*bricks.Readout)
				if !ok {
					return nil, fmt.Errorf("SequenceGenerator: readout must be a Readout brick, got %s", typeOfBrick(ro))
				}
				tr, err := optBrick(class, "transition", c.Take("transition"))
				if err != nil || tr == nil {
					return nil, fmt.Errorf("SequenceGenerator: transition must be a recurrent brick")
				}
				at, err := optBrick(class, "attention", c.Take("attention"))
				if err != nil {
					return nil, err
				}
				var att *bricks.SequenceContentAttention
				if at != nil {
					if att, ok = at.(*bricks.SequenceContentAttention); !ok {
						return nil, fmt.Errorf("SequenceGenerator: attention must be a SequenceContentAttention, got %s", typeOfBrick(at))
					}
				}
				if v := c.Take("add_contexts"); !bool(v.Truth()) {
					return nil, fmt.Errorf("SequenceGenerator: add_contexts=False is not supported")
				}
				return bricks.NewSequenceGenerator(cfg, name, readout, tr, att)
			}),
		brickTable(m, "Readout", "readouts = Bias(Merge(sources)), with an emitter and a feedback brick",
			params(ps(opt("emitter", "None"), opt("feedback_brick", "None"), opt("merge", "None"), opt("merge_prototype", "None"),
				opt("post_merge", "None"), opt("merged_dim", "None"),
				classParam{Name: "source_names", Lazy: true, Keyword: true}, classParam{Name: "readout_dim", Lazy: true, Keyword: true, Kind: argInt}), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				const class = "Readout"
				rd := c.Int("readout_dim")
				em, err := optBrick(class, "emitter", c.Take("emitter"))
				if err != nil {
					return nil, err
				}
				if em == nil { // Blocks' default: TrivialEmitter(readout_dim)
					em = bricks.NewTrivialEmitter(cfg, "", rd)
				}
				emitter, ok := em.(bricks.Emitter)
				if !ok {
					return nil, fmt.Errorf("Readout: emitter must be an emitter (SoftmaxEmitter, TrivialEmitter), got %s", typeOfBrick(em))
				}
				fb, err := optBrick(class, "feedback_brick", c.Take("feedback_brick"))
				if err != nil {
					return nil, err
				}
				if fb == nil { // Blocks' default: TrivialFeedback(readout_dim)
					fb = bricks.NewTrivialFeedback(cfg, "", rd)
				}
				feedback, ok := fb.(bricks.Feedback)
				if !ok {
					return nil, fmt.Errorf("Readout: feedback_brick must be LookupFeedback or TrivialFeedback, got %s", typeOfBrick(fb))
				}
				for _, k := range []string{"merge", "post_merge", "merged_dim"} {
					if !c.IsNone(k) {
						return nil, fmt.Errorf("Readout: %s is not supported (the default Merge and Bias are used)", k)
					}
					c.Take(k)
				}
				mp, err := optPrototype(class, "merge_prototype", c.Take("merge_prototype"), false)
				if err != nil {
					return nil, err
				}
				sn, err := strList(class, "source_names", c.Take("source_names"))
				if err != nil {
					return nil, err
				}
				return bricks.NewReadout(cfg, name, emitter, feedback, sn, rd, mp)
			}),
		brickTable(m, "SoftmaxEmitter", "outputs drawn from softmax(readouts); cost -log p",
			params(ps(classParam{Name: "initial_output", Default: "0", Kind: argInt}, classParam{Name: "theano_seed", Default: "None", Keyword: true, Kind: argInt}), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				e := bricks.NewSoftmaxEmitter(cfg, name, c.Int("initial_output"))
				if v := c.Take("theano_seed"); v != starlark.None {
					var seed int64
					if err := starlark.AsInt(v, &seed); err != nil {
						return nil, fmt.Errorf("SoftmaxEmitter: theano_seed must be an int, got %s", v.Type())
					}
					e.TheanoSeed = &seed
				}
				return e, nil
			}),
		brickTable(m, "TrivialEmitter", "outputs = readouts; cost the squared error", ps(lazyInt("readout_dim"), nameParam), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewTrivialEmitter(cfg, name, c.Int("readout_dim")), nil
			}),
		brickTable(m, "LookupFeedback", "feedback = LookupTable(outputs)",
			params(ps(classParam{Name: "num_outputs", Default: "None", Kind: argInt}, classParam{Name: "feedback_dim", Default: "None", Kind: argInt}), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewLookupFeedback(cfg, name, c.Int("num_outputs"), c.Int("feedback_dim")), nil
			}),
		brickTable(m, "TrivialFeedback", "feedback = outputs", ps(lazyInt("output_dim"), nameParam), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				return bricks.NewTrivialFeedback(cfg, name, c.Int("output_dim")), nil
			}),
	}
}

func attentionBrickTables() []*classTable {
	const m = "blocks.bricks.attention"
	return []*classTable{
		brickTable(m, "SequenceContentAttention", "content-based attention over a sequence: glimpses weighted_averages and weights",
			params(ps(lazyInt("match_dim"), opt("state_transformer", "None"), opt("attended_transformer", "None"), opt("energy_computer", "None"),
				classParam{Name: "state_names", Lazy: true, Keyword: true}, classParam{Name: "state_dims", Lazy: true, Keyword: true},
				classParam{Name: "attended_dim", Lazy: true, Keyword: true, Kind: argInt}), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				const class = "SequenceContentAttention"
				if err := mustBeDefault(c, "state_transformer", "attended_transformer", "energy_computer"); err != nil {
					return nil, err
				}
				sn, err := strList(class, "state_names", c.Take("state_names"))
				if err != nil {
					return nil, err
				}
				sd, err := optInts(class, "state_dims", c.Take("state_dims"))
				if err != nil {
					return nil, err
				}
				return bricks.NewSequenceContentAttention(cfg, name, sn, sd, c.Int("attended_dim"), c.Int("match_dim"))
			}),
		brickTable(m, "AttentionRecurrent", "a transition with attention: its states, then the glimpses",
			params(ps(req("transition"), req("attention"), opt("distribute", "None"), opt("add_contexts", "True"),
				opt("attended_name", "None"), opt("attended_mask_name", "None")), initKw), nil,
			func(c *classCall, cfg *bricks.Config, name string) (bricks.Brick, error) {
				const class = "AttentionRecurrent"
				if err := mustBeDefault(c, "distribute", "add_contexts", "attended_name", "attended_mask_name"); err != nil {
					return nil, err
				}
				tr, err := optBrick(class, "transition", c.Take("transition"))
				if err != nil || tr == nil {
					return nil, fmt.Errorf("AttentionRecurrent: transition must be a recurrent brick")
				}
				at, err := optBrick(class, "attention", c.Take("attention"))
				if err != nil {
					return nil, err
				}
				att, ok := at.(*bricks.SequenceContentAttention)
				if !ok {
					return nil, fmt.Errorf("AttentionRecurrent: attention must be a SequenceContentAttention, got %s", typeOfBrick(at))
				}
				return bricks.NewAttentionRecurrent(cfg, name, tr, att)
			}),
	}
}
