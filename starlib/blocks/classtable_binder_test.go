package blocks_test

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// TestClassTableBinder checks the binder's rules on one table: Python's
// binding, Blocks' defaults, and the errors.
func TestClassTableBinder(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`Adam().learning_rate.get_value()`, "0.002"},
		{`Adam(0.1, 0.5).beta1.get_value()`, "0.5"},
		{`Adam(beta2=0.5).beta2.get_value()`, "0.5"},
		{`Adam(1, 2, 3, 4, 5, 6)`, "Adam takes at most 5 positional arguments (learning_rate, beta1, beta2, epsilon, decay_factor), got 6"},
		{`Adam(lr=1)`, "Adam got an unexpected keyword argument lr (it takes beta1, beta2, decay_factor, epsilon, learning_rate)"},
		{`Adam(0.1, learning_rate=1)`, "Adam got multiple values for argument learning_rate"},
		{`Adam("x")`, "Adam: for parameter learning_rate: got string, want a number"},
		{`Restrict(Scale())`, "Restrict: missing argument for variables"},
		{`StepClipping().threshold`, "None"},
		{`StepClipping(None).threshold`, "None"},
	} {
		got := evalBlocks(t, `load("blocks.algorithms", "Adam", "Restrict", "Scale", "StepClipping")`, c.src)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.src, got, c.want)
		}
	}
}

// TestClassTableBricksAndExtensions: the binder for brick classes (lazy
// arguments, Blocks' positional order, the rest set as attributes) and
// for extensions (the triggers beside the table's own).
func TestClassTableBricksAndExtensions(t *testing.T) {
	load := `load("blocks.bricks", "Linear", "Tanh", "MLP")
load("blocks.bricks.parallel", "Fork")
load("blocks.bricks.attention", "SequenceContentAttention")
load("blocks.extensions", "FinishAfter", "Timing")
load("blocks.extensions.saveload", "Checkpoint")`
	for _, c := range []struct{ src, want string }{
		{`Linear(3, 4).output_dim`, "4"},
		{`Linear().input_dim`, "NoneAllocation"},
		{`Linear(3, use_bias=False).use_bias`, "False"},
		{`Linear(3, 4, 5)`, "Linear takes at most 2 positional arguments (input_dim, output_dim), got 3"},
		{`Linear(input_dim="784")`, "input_dim must be an int, got string"},
		{`Tanh("t").name`, "t"},
		{`MLP([Tanh()], [2, 3], Linear(use_bias=False)).linear_transformations[0].use_bias`, "False"},
		{`MLP(dims=[2, 3])`, "MLP: missing argument for activations"},
		{`Fork(["a", "b"], 2, output_dims=[3, 4]).output_dims`, "[3, 4]"},
		{`Fork(["a"], 2, None, output_dims=[3]).input_dim`, "2"},
		{`SequenceContentAttention(5, state_names=["s"], attended_dim=3).match_dim`, "5"},
		{`SequenceContentAttention(5, 1)`, "state_transformer=1 is not supported"},
		{`FinishAfter(after_n_epochs=2).name`, "FinishAfter"},
		{`FinishAfter(1)`, "FinishAfter takes at most 0 positional arguments (), got 1"},
		{`Timing("p_", after_batch=True).name`, "Timing"},
		{`Timing(every_n_batches="x")`, "every_n_batches must be a bool or an int, got string"},
		{`Checkpoint("c.tar", None, None, True, False, 3)`, "Checkpoint takes at most 5 positional arguments"},
	} {
		got := evalBlocks(t, load, c.src)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.src, got, c.want)
		}
	}
}

// evalBlocks runs the load statement, then evaluates src: its value as
// text, or the error's message.
func evalBlocks(t *testing.T, load, src string) string {
	t.Helper()
	in, err := starlib.NewInterp(starlib.Options{Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := in.ExecFile("t.star", []byte(load+"\nresult = "+src+"\n"))
	if err != nil {
		return err.Error()
	}
	return g["result"].String()
}

// TestClassTableAlgorithmsAndMainLoop: GradientDescent, UpdatesAlgorithm
// and MainLoop bind as Blocks' __init__: positional order, keywords
// through **kwargs, Blocks' defaults and the binder's errors.
func TestClassTableAlgorithmsAndMainLoop(t *testing.T) {
	load := `load("tensor", "matrix", "shared")
load("blocks.algorithms", "GradientDescent", "UpdatesAlgorithm", "Scale")
load("blocks.main_loop", "MainLoop")
load("blocks.model", "Model")
load("numpy", "ones")
x = matrix("x")
w = shared(ones((2, 2)), name = "w")
cost = (x * w).sum()
cost.name = "cost"`
	for _, c := range []struct{ src, want string }{
		{`type(GradientDescent(cost, [w], Scale(0.5)).step_rule)`, "Scale"},
		{`GradientDescent(cost, [w], Scale(0.5)).step_rule.learning_rate.get_value()`, "0.5"},
		{`GradientDescent(cost, [w], None, None, None, None, None)`, "GradientDescent takes at most 6 positional arguments (cost, parameters, step_rule, gradients, known_grads, consider_constant), got 7"},
		{`GradientDescent(cost, [w], step_rule = 1)`, "GradientDescent: for parameter step_rule: got int, want a step rule"},
		{`GradientDescent("cost", [w])`, "GradientDescent: for parameter cost: got string, want a variable"},
		{`GradientDescent(cost, [w], cost = cost)`, "GradientDescent got multiple values for argument cost"},
		{`GradientDescent(cost, [w], learning_rate = 1)`, "GradientDescent got an unexpected keyword argument learning_rate"},
		{`GradientDescent(cost, [w], theano_func_kwargs = {"mode": "FAST_RUN"})`, "GradientDescent: theano_func_kwargs={\"mode\": \"FAST_RUN\"} is not supported (only None)"},
		{`GradientDescent(cost, [w], theano_func_kwargs = None, on_unused_sources = "ignore", updates = [(w, w)]).updates[0][0] == w`, "True"},
		{`type(UpdatesAlgorithm([(w, w * 2)], None, "warn"))`, "UpdatesAlgorithm"},
		{`UpdatesAlgorithm([(w, w * 2)], "warn")`, "UpdatesAlgorithm: theano_func_kwargs=\"warn\" is not supported (only None)"},
		{`UpdatesAlgorithm(on_unused_sources = 1)`, "UpdatesAlgorithm: for parameter on_unused_sources: got int, want a string"},
		{`len(UpdatesAlgorithm().updates)`, "0"},
		{`MainLoop(None)`, "MainLoop: missing argument for data_stream"},
		{`MainLoop(None, None, None, None, None, [], 1)`, "MainLoop takes at most 6 positional arguments (algorithm, data_stream, model, log, log_backend, extensions), got 7"},
		{`MainLoop(None, None).model`, "None"},
		{`MainLoop(None, None, Model(cost)).model.outputs[0] == cost`, "True"},
		{`MainLoop(None, None, model = 3)`, "MainLoop: model must be a Model (blocks.model) or None, got int"},
	} {
		got := evalBlocks(t, load, c.src)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.src, got, c.want)
		}
	}
}
