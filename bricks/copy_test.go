package bricks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// TestMLPOfLinearMaxoutCopies: an MLP whose layers are copies of a
// LinearMaxout prototype (Blocks' MLP(prototype=LinearMaxout(...))): each
// copy has the prototype's settings and seed and children of its own, the
// MLP pushes dims into each, and the output is the closed form.
func TestMLPOfLinearMaxoutCopies(t *testing.T) {
	cfg := NewConfig(nd.Float64, 1)
	noBias := false
	seed := int64(7)
	proto, err := NewLinearMaxoutWith(cfg, "proto", LinearMaxoutConfig{NumPieces: 2, Init: Init{UseBias: &noBias, Seed: &seed}})
	if err != nil {
		t.Fatal(err)
	}
	var layers []Feedforward
	for i := range 2 {
		memo := map[Brick]Brick{}
		c, err := Copy(proto, memo)
		if err != nil {
			t.Fatal(err)
		}
		c.BaseBrick().Name = fmt.Sprintf("linearmaxout_%d", i)
		lm := c.(*LinearMaxout)
		if memo[proto.Linear] != lm.Linear || memo[proto.Maxout] != lm.Maxout || lm.Linear == proto.Linear {
			t.Fatalf("copy %d: the children are not the copy's own", i)
		}
		if lm.Seed() != 7 || lm.HasBias() || lm.NumPieces != 2 {
			t.Errorf("copy %d: seed %d, use_bias %v, num_pieces %v; want the prototype's 7, false, 2", i, lm.Seed(), lm.HasBias(), lm.NumPieces)
		}
		layers = append(layers, lm)
	}
	ident, _ := NewActivation(cfg, "Identity", "", 0)
	mlp, err := NewMLPOf(cfg, "", []Brick{ident, nil}, []int{3, 4, 2}, layers)
	if err != nil {
		t.Fatal(err)
	}
	mlp.WeightsInit = initialization.Constant{Value: 1}
	if err := Initialize(mlp); err != nil {
		t.Fatal(err)
	}
	if proto.Allocated || proto.Linear.InputDim != 0 {
		t.Errorf("the prototype was changed through its copies")
	}
	var paths []string
	for _, p := range AllParameters(mlp) {
		paths = append(paths, ParameterPath(p))
	}
	if got, want := strings.Join(paths, " "), "/mlp/linearmaxout_0/linear.W /mlp/linearmaxout_1/linear.W"; got != want {
		t.Errorf("parameters %q, want %q", got, want)
	}
	x := core.NewInput("x", nd.Float64, 2)
	in := nd.New(nd.Float64, 1, 3)
	for i := range 3 {
		in.SetFlat(i, 1)
	}
	// ones(3)·ones(3, 8) = 3, the maximum of pairs 3; then 4·3 = 12.
	out := eval(t, []*core.Variable{x}, []*nd.Array{in}, mustApply(t, mlp, "apply", x))[0]
	if got := []float64{out.Flat(0), out.Flat(1)}; !slices.Equal(got, []float64{12, 12}) || !slices.Equal(out.Shape, []int{1, 2}) {
		t.Errorf("output %v %v, want (1, 2) of 12", out.Shape, got)
	}
}

// TestForkOfLinearMaxoutCopies: a Fork whose transformations are copies
// of a LinearMaxout prototype (Blocks' Fork(prototype=...)): each copy is
// named fork_{name}, gets its dimensions from the Fork, and computes the
// closed form; the prototype stays as it was.
func TestForkOfLinearMaxoutCopies(t *testing.T) {
	cfg := NewConfig(nd.Float64, 1)
	proto, err := NewLinearMaxoutWith(cfg, "proto", LinearMaxoutConfig{NumPieces: 2})
	if err != nil {
		t.Fatal(err)
	}
	fork, err := NewFork(cfg, "fork", []string{"a", "b"}, 3, []int{2, 1}, proto)
	if err != nil {
		t.Fatal(err)
	}
	fork.WeightsInit = initialization.Constant{Value: 1}
	fork.BiasesInit = initialization.Constant{Value: 0.5}
	if err := Initialize(fork); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range fork.Transforms {
		lm := tr.(*LinearMaxout)
		names = append(names, fmt.Sprintf("%s:%dx%d", lm.Name, lm.Linear.InputDim, lm.Linear.OutputDim))
	}
	if got, want := strings.Join(names, " "), "fork_a:3x4 fork_b:3x2"; got != want {
		t.Errorf("transforms %q, want %q", got, want)
	}
	if proto.Allocated || proto.Linear.InputDim != 0 || proto.Name != "proto" {
		t.Errorf("the prototype was changed through its copies")
	}
	x := core.NewInput("x", nd.Float64, 2)
	in := nd.FromSlice([]float64{1, 2, 3}, 1, 3)
	ys, err := Apply(fork, "apply", x)
	if err != nil {
		t.Fatal(err)
	}
	out := eval(t, []*core.Variable{x}, []*nd.Array{in}, ys...)
	// (1+2+3)·1 + 0.5 in every piece: 6.5 after the maximum.
	if a, b := out[0].Float64s(), out[1].Float64s(); !slices.Equal(a, []float64{6.5, 6.5}) || !slices.Equal(b, []float64{6.5}) {
		t.Errorf("outputs %v %v, want [6.5 6.5] [6.5]", a, b)
	}
}

// TestCopy: the generator's state is copied (the copy draws what the
// original would), a brick met twice is copied once, and an allocated
// brick or one of another type is refused.
func TestCopy(t *testing.T) {
	cfg := NewConfig(nd.Float32, 1)
	l := NewLinear(cfg, "l")
	l.RNG().Randint(0, 100)
	c, err := Copy(l, map[Brick]Brick{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := l.RNG().Randint(0, 1<<30), c.BaseBrick().RNG().Randint(0, 1<<30); a != b {
		t.Errorf("the copy draws %d, the original %d", b, a)
	}
	memo := map[Brick]Brick{}
	s := NewScriptBrick(cfg, "s", ScriptClass{Name: "Initializable", Initializable: true})
	s.SetChildren([]Brick{l, l})
	sc, err := Copy(s, memo)
	if err != nil {
		t.Fatal(err)
	}
	if ch := sc.BaseBrick().Children; len(ch) != 2 || ch[0] != ch[1] || ch[0] == Brick(l) || !slices.Contains(ch[0].BaseBrick().Parents, sc) {
		t.Errorf("children %v: want one copy of l twice, parented by the copy", ch)
	}
	l2 := NewLinear(cfg, "l2")
	l2.InputDim, l2.OutputDim = 2, 2
	if err := Allocate(l2); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(l2, map[Brick]Brick{}); err == nil || !strings.Contains(err.Error(), "it is allocated") {
		t.Errorf("copying an allocated brick: %v", err)
	}
	seq := NewSequence(cfg, "", nil)
	if _, err := Copy(seq, map[Brick]Brick{}); err == nil || !strings.Contains(err.Error(), "a Sequence brick cannot be copied") {
		t.Errorf("copying a Sequence: %v", err)
	}
}
