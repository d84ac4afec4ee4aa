package blocks_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	"github.com/blocks-go/blocks/starlib/blocks"
)

// brickExample builds one brick of a class: src is the constructor call
// with "@" where more keyword arguments go ("name=value, " each); given
// are the parameters src gives; apply (a function of the brick) gives a
// text of what the brick computes on a fixed input and the shapes of its
// parameters, for the classes with a default to compare.
type brickExample struct {
	src   string
	given []string
	apply string
}

// brickDefaultsPrelude defines the fixed inputs and out(b, y, givens),
// the outputs' values and the parameters' shapes as text.
const brickDefaultsPrelude = `
load("numpy.random", "RandomState")
load("theano", "config")
load("tensor", "tensor4", "tensor3", "matrix", "lvector")
load("blocks.initialization", "IsotropicGaussian", "Constant")
rng = RandomState(1)
X4 = tensor4("x4")
V4 = (rng.rand(2, 2, 5, 5) - 0.5).astype(config.floatX)
XM = matrix("xm")
VM = (rng.rand(3, 4) - 0.5).astype(config.floatX)
LV = lvector("lv")
X3 = tensor3("x3")
V3 = (rng.rand(4, 2, 3) - 0.5).astype(config.floatX)
def out(b, y, givens):
    b.initialize()
    return str([y.eval(givens).tolist(), [p.get_value().shape for p in b.parameters]])
W = IsotropicGaussian(0.5)
`

var brickExamples = map[string]brickExample{
	"Brick":               {src: `Brick(@)`},
	"Initializable":       {src: `Initializable(@)`},
	"Linear":              {src: `Linear(@)`},
	"Bias":                {src: `Bias(@)`},
	"MLP":                 {src: `MLP([Tanh()], [2, 3], @)`, given: []string{"activations", "dims"}},
	"Sequence":            {src: `Sequence([Tanh().apply], @)`, given: []string{"application_methods"}},
	"FeedforwardSequence": {src: `FeedforwardSequence([Tanh().apply], @)`, given: []string{"application_methods"}},
	"Identity":            {src: `Identity(@)`},
	"Tanh":                {src: `Tanh(@)`},
	"Logistic":            {src: `Logistic(@)`},
	"Softplus":            {src: `Softplus(@)`},
	"Rectifier":           {src: `Rectifier(@)`},
	"Softmax":             {src: `Softmax(@)`},
	"LeakyRectifier":      {src: `LeakyRectifier(@)`, apply: `lambda b: out(b, b.apply(XM), {XM: VM})`},
	"Maxout":              {src: `Maxout(@)`},
	"LinearMaxout":        {src: `LinearMaxout(@)`},
	"BatchNormalization":  {src: `BatchNormalization(4, @)`, given: []string{"input_dim"}, apply: `lambda b: out(b, b.apply(XM), {XM: VM})`},
	"SpatialBatchNormalization": {src: `SpatialBatchNormalization((2, 5, 5), @)`, given: []string{"input_dim"},
		apply: `lambda b: out(b, b.apply(X4), {X4: V4})`},
	"BatchNormalizedMLP": {src: `BatchNormalizedMLP([Tanh()], [4, 3], @weights_init=W, seed=1)`, given: []string{"activations", "dims", "weights_init", "seed"},
		apply: `lambda b: out(b, b.apply(XM), {XM: VM})`},
	"Convolutional": {src: `Convolutional((2, 2), 3, 2, @weights_init=W, biases_init=W, seed=1)`,
		given: []string{"filter_size", "num_filters", "num_channels", "weights_init", "biases_init", "seed"},
		apply: `lambda b: out(b, b.apply(X4), {X4: V4})`},
	"ConvolutionalTranspose": {src: `ConvolutionalTranspose((2, 2), 3, 2, @image_size=(5, 5), weights_init=W, biases_init=W, seed=1)`,
		given: []string{"filter_size", "num_filters", "num_channels", "image_size", "weights_init", "biases_init", "seed"},
		apply: `lambda b: out(b, b.apply(X4), {X4: V4})`},
	"MaxPooling":     {src: `MaxPooling((2, 2), @)`, given: []string{"pooling_size"}, apply: `lambda b: out(b, b.apply(X4), {X4: V4})`},
	"AveragePooling": {src: `AveragePooling((2, 2), @)`, given: []string{"pooling_size"}, apply: `lambda b: out(b, b.apply(X4), {X4: V4})`},
	"ConvolutionalSequence": {src: `ConvolutionalSequence([Convolutional((2, 2), 3)], 2, @weights_init=W, biases_init=W, seed=1)`,
		given: []string{"layers", "num_channels", "weights_init", "biases_init", "seed"}, apply: `lambda b: out(b, b.apply(X4), {X4: V4})`},
	"Flattener":               {src: `Flattener(@)`},
	"CategoricalCrossEntropy": {src: `CategoricalCrossEntropy(@)`},
	"MisclassificationRate": {src: `MisclassificationRate(@)`,
		apply: `lambda b: out(b, b.apply(LV, XM), {LV: [0, 3, 1], XM: VM})`},
	"SquaredError":       {src: `SquaredError(@)`},
	"AbsoluteError":      {src: `AbsoluteError(@)`},
	"BinaryCrossEntropy": {src: `BinaryCrossEntropy(@)`},
	"LookupTable":        {src: `LookupTable(@)`},
	"Parallel":           {src: `Parallel(["a"], @)`, given: []string{"input_names"}},
	"Fork":               {src: `Fork(["a"], @)`, given: []string{"output_names"}},
	"Distribute":         {src: `Distribute(["a"], "s", @)`, given: []string{"target_names", "source_name"}},
	"Merge":              {src: `Merge(["a"], @)`, given: []string{"input_names"}},
	"SimpleRecurrent":    {src: `SimpleRecurrent(3, Tanh(), @)`, given: []string{"dim", "activation"}},
	"LSTM":               {src: `LSTM(@)`},
	"GatedRecurrent":     {src: `GatedRecurrent(@)`},
	"Bidirectional":      {src: `Bidirectional(SimpleRecurrent(3, Tanh()), @)`, given: []string{"prototype"}},
	"RecurrentStack": {src: `RecurrentStack([SimpleRecurrent(3, Tanh()), SimpleRecurrent(3, Tanh())], @weights_init=W, biases_init=W, seed=1)`,
		given: []string{"transitions", "weights_init", "biases_init", "seed"}, apply: `lambda b: out(b, b.apply(inputs=X3)[-1], {X3: V3})`},
	"SoftmaxEmitter":  {src: `SoftmaxEmitter(@)`, apply: `lambda b: str(b.initial_outputs(2).eval().tolist())`},
	"TrivialEmitter":  {src: `TrivialEmitter(@)`},
	"LookupFeedback":  {src: `LookupFeedback(@)`},
	"TrivialFeedback": {src: `TrivialFeedback(@)`},
	"Readout":         {src: `Readout(@source_names=["a"], readout_dim=3)`, given: []string{"source_names", "readout_dim"}},
	"SequenceGenerator": {src: `SequenceGenerator(Readout(source_names=["states"], readout_dim=3, emitter=SoftmaxEmitter(), feedback_brick=LookupFeedback(3, 2)), SimpleRecurrent(3, Tanh()), @)`,
		given: []string{"readout", "transition"}},
	"SequenceContentAttention": {src: `SequenceContentAttention(3, @state_names=["s"])`, given: []string{"match_dim", "state_names"}},
	"AttentionRecurrent": {src: `AttentionRecurrent(SimpleRecurrent(3, Tanh()), SequenceContentAttention(3, state_names=["states"], attended_dim=2), @)`,
		given: []string{"transition", "attention"}},
}

// runBrickExample runs the prelude, the loads of every brick class, and
// src; it returns the globals.
func runBrickExample(t *testing.T, classes map[string]*blocks.BrickTableForTest, src string) starlark.StringDict {
	t.Helper()
	var loads strings.Builder
	for name, c := range classes {
		fmt.Fprintf(&loads, "load(%q, %q)\n", c.Module, name)
	}
	in, err := starlib.NewInterp(starlib.Options{Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := in.ExecFile("example.star", []byte(brickDefaultsPrelude+loads.String()+src+"\n"))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return g
}

// TestUnsetBrickAttributesReadBlocksDefaults checks, for every brick
// class, that an attribute whose constructor argument was left out reads
// what Blocks' __init__ stores (the table's default, NoneAllocation for a
// lazy argument), and that the brick computes the same with the default
// given explicitly: that the Go bricks apply Blocks' defaults where they
// read an unset attribute.
func TestUnsetBrickAttributesReadBlocksDefaults(t *testing.T) {
	classes := blocks.BrickClasses()
	for name := range brickExamples {
		if classes[name] == nil {
			t.Errorf("example for %s, which is not a brick class", name)
		}
	}
	var names []string
	for name := range classes {
		names = append(names, name)
	}
	sort.Strings(names)
	read, compared := 0, 0
	for _, name := range names {
		ex, ok := brickExamples[name]
		if !ok {
			t.Errorf("brick class %s has no example in brickExamples", name)
			continue
		}
		build := func(extra string) string { return "b = " + strings.Replace(ex.src, "@", extra, 1) }
		g := runBrickExample(t, classes, build(""))
		b := g["b"].(starlark.HasAttrs)
		var want string // what the brick computes with its arguments left out
		for _, p := range classes[name].Params {
			if p.Unset == nil || contains(ex.given, p.Name) || brickOwn[p.Name] {
				continue
			}
			got, err := b.Attr(p.Name)
			if err != nil || got == nil {
				continue // not an attribute of the project's brick
			}
			read++
			if class, ok := blocksBuilds[name+"."+p.Name]; ok {
				if got.Type() != class {
					t.Errorf("%s().%s = %s, want Blocks' %s()", name, p.Name, got, class)
				}
				continue
			}
			if eq, err := starlark.Equal(got, p.Unset); err != nil || !eq {
				t.Errorf("%s().%s = %s, want Blocks' %s", name, p.Name, got, p.Unset)
			}
			given := p.Default // what the brick is given explicitly: what Blocks stores
			if p.Stored != "" {
				given = p.Stored
			}
			if p.Lazy || given == "None" {
				continue
			}
			if ex.apply == "" {
				t.Errorf("%s: %s has the default %s: its example needs an apply to compare", name, p.Name, given)
				continue
			}
			if want == "" {
				want = runBrickExample(t, classes, build("")+"\nresult = ("+ex.apply+")(b)")["result"].String()
			}
			src := build(p.Name+"="+given+", ") + "\nresult = (" + ex.apply + ")(b)"
			got2 := runBrickExample(t, classes, src)["result"].String()
			if got2 != want {
				t.Errorf("%s with %s=%s computes\n%.300s\nwith it left out\n%.300s", name, p.Name, given, got2, want)
			}
			compared++
		}
	}
	t.Logf("%d brick classes: %d unset attributes read Blocks' values, %d defaults computed the same given explicitly", len(names), read, compared)
	if read < 60 || compared < 15 {
		t.Errorf("too few checks: %d reads, %d comparisons", read, compared)
	}
}

// blocksBuilds are the arguments whose None Blocks' __init__ replaces by
// a brick it builds, by that brick's class (recurrent/architectures.py:
// "if not activation: activation = Tanh()"; sequence_generators.py's
// Readout: "if not emitter: emitter = TrivialEmitter(...)", ...).
var blocksBuilds = map[string]string{
	"LSTM.activation":                "Tanh",
	"LSTM.gate_activation":           "Logistic",
	"GatedRecurrent.activation":      "Tanh",
	"GatedRecurrent.gate_activation": "Logistic",
	"Readout.emitter":                "TrivialEmitter",
	"Readout.feedback_brick":         "TrivialFeedback",
	"Readout.merge":                  "Merge",
	"Readout.post_merge":             "Bias",
	"AttentionRecurrent.distribute":  "Distribute",
}

// brickOwn are Brick's and Initializable's parameters whose attribute
// Blocks computes when the argument is None: name (the class name in
// lower case), children ([]) and seed (drawn from the configuration's);
// and Random's theano_seed (SoftmaxEmitter's: drawn when None).
var brickOwn = map[string]bool{"name": true, "children": true, "seed": true, "theano_seed": true}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
