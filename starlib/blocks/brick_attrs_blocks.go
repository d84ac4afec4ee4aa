package blocks

import (
	"fmt"
	"reflect"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
)

// Brick attributes under the names Blocks' classes store them, where
// that is not the constructor parameter's name:
//
//	leaky_rectifier._leak    LeakyRectifier's leak (Blocks keeps it as _leak); read and set
//	pooling.mode             'max', 'average_exc_pad' or 'average_inc_pad'; read and set
//
// and the structural arguments Blocks' __init__ keeps, read only (the
// brick is built from them):
//
//	lstm.activation, lstm.gate_activation        (GatedRecurrent's too)
//	parallel.input_names                         (Fork, Distribute, Merge: the names of their children)
//	fork.output_names, distribute.target_names   the same names
//	readout.emitter, readout.feedback_brick, readout.merge, readout.post_merge, readout.source_names
//	recurrent_stack.states_name, recurrent_stack.skip_connections
//	attention.state_names                        (SequenceContentAttention's)
//	attention_recurrent.transition, .attention, .distribute
//	generator.readout, .transition (the transition, or its AttentionRecurrent), .fork
//	lookup_feedback.lookup, softmax_emitter.theano_seed (the brick's seed when not given)
//
// (Hooks of bricks.go's brickAttrHooks and brickSetHooks.)

// brickAttrAliases maps a brick class's Blocks attribute to the project's
// attribute of the same value.
var brickAttrAliases = map[string]map[string]string{
	"LeakyRectifier": {"_leak": "leak"},
}

func blocksNamedAttrNames(b bricks.Brick) []string {
	var names []string
	for alias := range brickAttrAliases[b.BaseBrick().Class()] {
		names = append(names, alias)
	}
	switch b.(type) {
	case *bricks.Pooling:
		names = append(names, "mode")
	case *bricks.LSTM, *bricks.GatedRecurrent:
		names = append(names, "activation", "gate_activation")
	case *bricks.Readout:
		names = append(names, "emitter", "feedback_brick", "merge", "post_merge", "source_names")
	case *bricks.SequenceGenerator:
		names = append(names, "readout", "transition", "fork")
	case *bricks.RecurrentStack:
		names = append(names, "states_name", "skip_connections")
	case *bricks.SequenceContentAttention:
		names = append(names, "state_names")
	case *bricks.AttentionRecurrent:
		names = append(names, "transition", "attention", "distribute")
	case *bricks.LookupFeedback:
		names = append(names, "lookup")
	case *bricks.SoftmaxEmitter:
		names = append(names, "theano_seed")
	case *bricks.Parallel:
		names = append(names, "input_names")
		switch b.BaseBrick().Class() {
		case "Fork":
			names = append(names, "output_names")
		case "Distribute":
			names = append(names, "output_names", "target_names")
		}
	}
	return names
}

// structuralAttr answers the structural arguments a brick was built
// from, as Blocks' classes keep them.
func structuralAttr(b bricks.Brick, name string) (starlark.Value, bool) {
	brick := func(x bricks.Brick) starlark.Value {
		if x == nil {
			return starlark.None
		}
		if v := reflect.ValueOf(x); v.Kind() == reflect.Pointer && v.IsNil() {
			return starlark.None
		}
		return &Brick{x}
	}
	switch x := b.(type) {
	case *bricks.LSTM:
		switch name {
		case "activation":
			return brick(x.Activation), true
		case "gate_activation":
			return brick(x.GateActivation), true
		}
	case *bricks.GatedRecurrent:
		switch name {
		case "activation":
			return brick(x.Activation), true
		case "gate_activation":
			return brick(x.GateActivation), true
		}
	case *bricks.Readout:
		switch name {
		case "emitter":
			return brick(x.Emitter), true
		case "feedback_brick":
			return brick(x.FeedbackBr), true
		case "merge":
			return brick(x.Merge), true
		case "post_merge":
			return brick(x.PostMerge), true
		case "source_names":
			return stringList(x.SourceNames), true
		}
	case *bricks.SequenceGenerator:
		switch name {
		case "readout":
			return brick(x.Readout), true
		case "transition":
			return brick(x.Transition), true
		case "fork":
			return brick(x.Fork), true
		}
	case *bricks.RecurrentStack:
		switch name {
		case "states_name":
			return starlark.String(x.StatesName()), true
		case "skip_connections":
			return starlark.Bool(x.SkipConnections()), true
		}
	case *bricks.SequenceContentAttention:
		if name == "state_names" {
			return stringList(x.StateNames), true
		}
	case *bricks.AttentionRecurrent:
		switch name {
		case "transition":
			return brick(x.Transition), true
		case "attention":
			return brick(x.Attention), true
		case "distribute":
			return brick(x.Distribute), true
		}
	case *bricks.LookupFeedback:
		if name == "lookup" {
			return brick(x.Lookup), true
		}
	case *bricks.SoftmaxEmitter:
		if name == "theano_seed" {
			if x.TheanoSeed != nil {
				return starlark.MakeInt64(*x.TheanoSeed), true
			}
			return starlark.MakeInt64(x.Seed()), true
		}
	case *bricks.Parallel:
		class := x.Class()
		if name == "input_names" || (name == "output_names" && (class == "Fork" || class == "Distribute")) ||
			(name == "target_names" && class == "Distribute") {
			return stringList(x.InputNames), true
		}
	}
	return nil, false
}

func stringList(ss []string) *starlark.List {
	out := make([]starlark.Value, len(ss))
	for i, s := range ss {
		out[i] = starlark.String(s)
	}
	return starlark.NewList(out)
}

func blocksNamedAttr(b *Brick, name string) (starlark.Value, bool, error) {
	if target, ok := brickAttrAliases[b.B.BaseBrick().Class()][name]; ok {
		v, err := b.Attr(target)
		return v, true, err
	}
	if p, ok := b.B.(*bricks.Pooling); ok && name == "mode" {
		return starlark.String(p.Mode()), true, nil
	}
	if v, ok := structuralAttr(b.B, name); ok {
		return v, true, nil
	}
	return nil, false, nil
}

func setBlocksNamedAttr(b *Brick, name string, v starlark.Value) (bool, error) {
	if target, ok := brickAttrAliases[b.B.BaseBrick().Class()][name]; ok {
		return true, b.SetField(target, v)
	}
	if p, ok := b.B.(*bricks.Pooling); ok && name == "mode" {
		s, ok := starlark.AsString(v)
		if !ok {
			return true, fmt.Errorf("%s.mode must be a string, got %s", p.Name, v.Type())
		}
		return true, p.SetMode(s)
	}
	if _, ok := structuralAttr(b.B, name); ok {
		return true, fmt.Errorf("%s.%s cannot be set here: the brick was built from it (make a new %s)", b.B.BaseBrick().Name, name, b.B.BaseBrick().Class())
	}
	return false, nil
}
