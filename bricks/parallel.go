package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
)

// Parallel applies a copy of a prototype (a Linear brick) to each of
// several inputs (blocks.bricks.parallel). Fork, Distribute and Merge are
// built on it.
type Parallel struct {
	*Base
	InputNames []string
	Transforms []*Linear
	inputDims  []int
	outputDims []int
	kind       string
}

var parallelSpecs = []AttrSpec{
	{Name: "input_dims", Kind: AttrInts, Doc: "input dimensions, one per input name"},
	{Name: "output_dims", Kind: AttrInts, Doc: "output dimensions, one per input name"},
	{Name: "input_dim", Kind: AttrInt, Doc: "the input dimension (Fork)"},
	{Name: "output_dim", Kind: AttrInt, Doc: "the output dimension (Merge)"},
	{Name: "source_dim", Kind: AttrInt, Doc: "the source's dimension (Distribute)"},
	{Name: "target_dims", Kind: AttrInts, Doc: "the targets' dimensions (Distribute)"},
}

// newParallel makes the copies of the prototype, named prefix_name.
func newParallel(cfg *Config, class []string, name, prefix string, names []string, prototype *Linear, useBias bool) *Parallel {
	p := &Parallel{Base: &Base{}, InputNames: names, kind: class[0]}
	p.initBase(p, cfg, name, append(class, "Initializable", "Brick"), append(append([]AttrSpec(nil), parallelSpecs...), initializableSpecs...))
	if prototype != nil {
		useBias = prototype.HasBias()
	}
	var children []Brick
	for _, n := range names {
		l := NewLinear(cfg, prefix+"_"+n)
		ub := useBias
		l.UseBias = &ub
		if prototype != nil {
			if w := prototype.WeightsInit; w != nil {
				l.WeightsInit = w
			}
			if b := prototype.BiasesInit; b != nil {
				l.BiasesInit = b
			}
		}
		p.Transforms = append(p.Transforms, l)
		children = append(children, l)
	}
	p.SetChildren(children)
	return p
}

func intsAttr(b *Base, name string) []int { v, _ := b.Attr(name).([]int); return v }

// PushAllocationConfigHook gives each copy its dimensions.
func (p *Parallel) PushAllocationConfigHook() error {
	n := len(p.InputNames)
	in, out := intsAttr(p.Base, "input_dims"), intsAttr(p.Base, "output_dims")
	switch p.kind {
	case "Fork":
		d, ok := p.Int("input_dim")
		if !ok {
			return fmt.Errorf("%s: allocation argument input_dim is not set", p.AnnotationName())
		}
		in = make([]int, n)
		for i := range in {
			in[i] = d
		}
	case "Distribute":
		d, ok := p.Int("source_dim")
		if !ok {
			return fmt.Errorf("%s: allocation argument source_dim is not set", p.AnnotationName())
		}
		in = make([]int, n)
		for i := range in {
			in[i] = d
		}
		out = intsAttr(p.Base, "target_dims")
	case "Merge":
		d, ok := p.Int("output_dim")
		if !ok {
			return fmt.Errorf("%s: allocation argument output_dim is not set", p.AnnotationName())
		}
		out = make([]int, n)
		for i := range out {
			out[i] = d
		}
	}
	if len(in) != n || len(out) != n {
		return fmt.Errorf("%s: need %d input and output dimensions (one per name %v), got %v and %v", p.AnnotationName(), n, p.InputNames, in, out)
	}
	for i, l := range p.Transforms {
		l.InputDim, l.OutputDim = in[i], out[i]
	}
	return nil
}

func (p *Parallel) applyAll(in []*core.Variable) ([]*core.Variable, error) {
	out := make([]*core.Variable, len(in))
	for i, l := range p.Transforms {
		y, err := Apply(l, "apply", in[i])
		if err != nil {
			return nil, err
		}
		out[i] = y[0]
	}
	return out, nil
}

// NewParallel makes a Parallel: apply(**inputs) transforms each input.
func NewParallel(cfg *Config, name string, inputNames []string, inputDims, outputDims []int, prototype *Linear) (*Parallel, error) {
	p := newParallel(cfg, []string{"Parallel"}, name, "transform", inputNames, prototype, true)
	if inputDims != nil {
		p.attrs["input_dims"] = inputDims
	}
	if outputDims != nil {
		p.attrs["output_dims"] = outputDims
	}
	p.addApplication(&Application{Name: "apply", Inputs: inputNames, Outputs: inputNames,
		Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) { return p.applyAll(in) }})
	return p, nil
}

// NewFork makes a Fork: apply(input_) gives one transformed output per
// output name (children fork_<name>; the prototype defaults to Linear).
func NewFork(cfg *Config, name string, outputNames []string, inputDim int, outputDims []int, prototype *Linear) (*Parallel, error) {
	p := newParallel(cfg, []string{"Fork", "Parallel"}, name, "fork", outputNames, prototype, true)
	if inputDim > 0 {
		p.attrs["input_dim"] = inputDim
	}
	if outputDims != nil {
		p.attrs["output_dims"] = outputDims
	}
	p.addApplication(&Application{Name: "apply", Inputs: []string{"input_"}, Outputs: outputNames,
		Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			xs := make([]*core.Variable, len(outputNames))
			for i := range xs {
				xs[i] = in[0]
			}
			return p.applyAll(xs)
		}})
	return p, nil
}

// NewDistribute makes a Distribute: apply(source, targets...) adds a
// transformation of the source to each target (children
// distribute_<target>; the prototype defaults to Linear without bias).
func NewDistribute(cfg *Config, name string, targetNames []string, sourceName string, targetDims []int, sourceDim int, prototype *Linear) (*Parallel, error) {
	p := newParallel(cfg, []string{"Distribute", "Fork", "Parallel"}, name, "distribute", targetNames, prototype, false)
	if sourceDim > 0 {
		p.attrs["source_dim"] = sourceDim
	}
	if targetDims != nil {
		p.attrs["target_dims"] = targetDims
	}
	p.addApplication(&Application{Name: "apply", Inputs: append([]string{sourceName}, targetNames...), Outputs: targetNames,
		Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			xs := make([]*core.Variable, len(targetNames))
			for i := range xs {
				xs[i] = in[0]
			}
			out, err := p.applyAll(xs)
			if err != nil {
				return nil, err
			}
			for i := range out {
				out[i] = core.Add(in[1+i], out[i])
			}
			return out, nil
		}})
	return p, nil
}

// NewMerge makes a Merge: apply(inputs...) is the sum of a transformation
// of each input (children transform_<name>; the prototype defaults to
// Linear without bias).
func NewMerge(cfg *Config, name string, inputNames []string, inputDims []int, outputDim int, prototype *Linear) (*Parallel, error) {
	p := newParallel(cfg, []string{"Merge", "Parallel"}, name, "transform", inputNames, prototype, false)
	if inputDims != nil {
		p.attrs["input_dims"] = inputDims
	}
	if outputDim > 0 {
		p.attrs["output_dim"] = outputDim
	}
	// Blocks' Merge.apply calls Parallel.apply (an application of its
	// own: its outputs are OUTPUT variables of the merge brick too).
	parallelApply := &Application{Name: "apply", Inputs: inputNames, Outputs: inputNames,
		Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) { return p.applyAll(in) }}
	p.addApplication(&Application{Name: "apply", Inputs: inputNames, Outputs: []string{"output"},
		Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) {
			out, err := applySuper(p, parallelApply, "Parallel", in)
			if err != nil {
				return nil, err
			}
			s := out[0]
			for _, o := range out[1:] {
				s = core.Add(s, o)
			}
			return one(s), nil
		}})
	return p, nil
}
