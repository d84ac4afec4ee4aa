package bricks

import (
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/bricks/initialization"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// TestTypedConstructors: the config structs set the same attributes a
// script's arguments set, leave the zero fields unset (lazy ones too),
// and the bricks allocate and initialize from them.
func TestTypedConstructors(t *testing.T) {
	cfg := NewConfig(nd.Float64, 1)
	no, seed := false, int64(7)
	l, err := NewLinearWith(cfg, "l", LinearConfig{InputDim: 3, OutputDim: 2,
		Init: Init{WeightsInit: initialization.Constant{Value: 2}, BiasesInit: initialization.Constant{Value: 0.5}, Seed: &seed}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Initialize(l); err != nil {
		t.Fatal(err)
	}
	if w := l.W.Value(); !slices.Equal(w.Shape, []int{3, 2}) || !slices.Equal(w.Float64s(), []float64{2, 2, 2, 2, 2, 2}) {
		t.Errorf("W %v %v", w.Shape, w.Float64s())
	}
	if b := l.B.Value().Float64s(); !slices.Equal(b, []float64{0.5, 0.5}) {
		t.Errorf("b %v", b)
	}
	if l.Seed() != 7 {
		t.Errorf("seed %d", l.Seed())
	}

	lazy, err := NewLinearWith(cfg, "lazy", LinearConfig{OutputDim: 4, Init: Init{UseBias: &no}})
	if err != nil {
		t.Fatal(err)
	}
	if lazy.InputDim != 0 || lazy.OutputDim != 4 || lazy.HasBias() {
		t.Errorf("lazy Linear: input_dim %v output_dim %v use_bias %v", lazy.InputDim, lazy.OutputDim, lazy.HasBias())
	}

	full := core.Border{Mode: "full"}
	conv, err := NewConvolutionalWith(cfg, "conv", ConvolutionalConfig{FilterSize: []int{3, 3}, NumFilters: 4, NumChannels: 2,
		BorderMode: &full, Init: Init{WeightsInit: initialization.Constant{Value: 1}, BiasesInit: initialization.Constant{Value: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Allocate(conv); err != nil {
		t.Fatal(err)
	}
	if w := conv.W.Value(); !slices.Equal(w.Shape, []int{4, 2, 3, 3}) {
		t.Errorf("conv W shape %v", w.Shape)
	}
	if conv.BorderMode == nil || *conv.BorderMode != full || conv.Step != nil {
		t.Errorf("conv border_mode %v step %v", conv.BorderMode, conv.Step)
	}
	if _, err := NewConvolutionalWith(cfg, "c", ConvolutionalConfig{UnusedEdge: []int{1, 1}}); err == nil || !strings.Contains(err.Error(), "ConvolutionalTranspose's") {
		t.Errorf("Convolutional with unused_edge: %v", err)
	}

	yes := true
	p, err := NewPoolingWith(cfg, "AveragePooling", "pool", PoolingConfig{PoolingSize: []int{2, 2}, IncludePadding: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.PoolingSize, []int{2, 2}) || p.IncludePadding == nil || !*p.IncludePadding || p.Step != nil {
		t.Errorf("pooling attrs %v %v %v", p.PoolingSize, p.IncludePadding, p.Step)
	}
	if _, err := NewPoolingWith(cfg, "MaxPooling", "m", PoolingConfig{IncludePadding: &yes}); err == nil {
		t.Error("MaxPooling took include_padding")
	}

	m, err := NewLinearMaxoutWith(cfg, "lm", LinearMaxoutConfig{InputDim: 3, OutputDim: 2, NumPieces: 4})
	if err != nil {
		t.Fatal(err)
	}
	if m.NumPieces != 4 {
		t.Errorf("num_pieces %v", m.NumPieces)
	}
	b, err := NewBiasWith(cfg, "b", BiasConfig{Dim: 5})
	if err != nil || b.Dim != 5 || b.BiasesInit != nil {
		t.Errorf("Bias: %v dim %v", err, b.Dim)
	}
	mx, err := NewMaxoutWith(cfg, "mx", MaxoutConfig{NumPieces: 2})
	if err != nil || mx.NumPieces != 2 {
		t.Errorf("Maxout: %v %v", err, mx.NumPieces)
	}
}
