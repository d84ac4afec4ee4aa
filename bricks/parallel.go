package bricks

import (
	"fmt"

	"github.com/blocks-go/blocks/core"
)

// Parallel applies a copy of a prototype (any Feedforward brick: a Linear
// by default) to each of several inputs (blocks.bricks.parallel). Fork,
// Distribute and Merge are built on it.
type Parallel struct {
	*Base
	InitConfig
	InputNames []string
	// Transforms are the copies of the prototype, one per input name,
	// named {prefix}_{name}; the brick pushes their dimensions.
	Transforms []Feedforward
	// InputDims and OutputDims are the dimensions of each input and
	// output (Parallel; Merge's InputDims; Fork's OutputDims), nil when
	// unset.
	InputDims, OutputDims []int
	InputDim              int   // Fork's input dimension (0: unset)
	OutputDim             int   // Merge's output dimension
	SourceDim             int   // Distribute's source dimension
	TargetDims            []int // Distribute's target dimensions
	kind                  string
}

// newParallel makes a Parallel of the class whose children are the
// copies given, else copies of prototype (a Linear with use_bias useBias
// when nil), named prefix_name.
func newParallel(cfg *Config, class string, name, prefix string, names []string, prototype Feedforward, copies []Feedforward, useBias bool) (*Parallel, error) {
	p := &Parallel{Base: &Base{}, InputNames: names, kind: class}
	p.initBase(p, cfg, name, class)
	if copies != nil && len(copies) != len(names) {
		return nil, fmt.Errorf("%s: %d names need %d transforms, got %d", p.AnnotationName(), len(names), len(names), len(copies))
	}
	var children []Brick
	for i, n := range names {
		var l Feedforward
		if copies != nil {
			l = copies[i]
		} else if prototype == nil {
			lin := NewLinear(cfg, "")
			lin.UseBias = new(useBias)
			l = lin
		} else {
			c, err := Copy(prototype, map[Brick]Brick{})
			if err != nil {
				return nil, fmt.Errorf("%s: copying the prototype: %w", p.AnnotationName(), err)
			}
			f, ok := c.(Feedforward)
			if !ok {
				return nil, fmt.Errorf("%s: the prototype's copy %s is not Feedforward", p.AnnotationName(), c.BaseBrick().AnnotationName())
			}
			l = f
		}
		l.BaseBrick().Name = prefix + "_" + n
		p.Transforms = append(p.Transforms, l)
		children = append(children, l)
	}
	p.SetChildren(children)
	return p, nil
}

// NewParallelOf makes a Parallel (class "Parallel", "Fork", "Distribute"
// or "Merge") of the given transforms, one per name: copies of a
// prototype made by the caller (a front end that copies what Copy
// cannot, a script class's brick). The other arguments are those of
// NewParallel, NewFork, NewDistribute and NewMerge: dims (input_dims,
// Fork's output_dims, Distribute's target_dims, Merge's input_dims), dim
// (Fork's input_dim, Distribute's source_dim, Merge's output_dim),
// outputDims (Parallel's) and sourceName (Distribute's).
func NewParallelOf(cfg *Config, class, name string, names []string, dims []int, dim int, outputDims []int, sourceName string, transforms []Feedforward) (*Parallel, error) {
	switch class {
	case "Parallel":
		return newParallelBrick(cfg, name, names, dims, outputDims, nil, transforms)
	case "Fork":
		return newFork(cfg, name, names, dim, dims, nil, transforms)
	case "Distribute":
		return newDistribute(cfg, name, names, sourceName, dims, dim, nil, transforms)
	case "Merge":
		return newMerge(cfg, name, names, dims, dim, nil, transforms)
	}
	return nil, fmt.Errorf("NewParallelOf: unknown class %s", class)
}

// PushAllocationConfigHook gives each copy its dimensions.
func (p *Parallel) PushAllocationConfigHook() error {
	n := len(p.InputNames)
	in, out := p.InputDims, p.OutputDims
	switch p.kind {
	case "Fork":
		d := p.InputDim
		if d == 0 {
			return fmt.Errorf("%s: allocation argument input_dim is not set", p.AnnotationName())
		}
		in = make([]int, n)
		for i := range in {
			in[i] = d
		}
	case "Distribute":
		d := p.SourceDim
		if d == 0 {
			return fmt.Errorf("%s: allocation argument source_dim is not set", p.AnnotationName())
		}
		in = make([]int, n)
		for i := range in {
			in[i] = d
		}
		out = p.TargetDims
	case "Merge":
		d := p.OutputDim
		if d == 0 {
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
		if err := l.SetInputDim(in[i]); err != nil {
			return err
		}
		if err := l.SetOutputDim(out[i]); err != nil {
			return err
		}
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
func NewParallel(cfg *Config, name string, inputNames []string, inputDims, outputDims []int, prototype Feedforward) (*Parallel, error) {
	return newParallelBrick(cfg, name, inputNames, inputDims, outputDims, prototype, nil)
}

func newParallelBrick(cfg *Config, name string, inputNames []string, inputDims, outputDims []int, prototype Feedforward, copies []Feedforward) (*Parallel, error) {
	p, err := newParallel(cfg, "Parallel", name, "transform", inputNames, prototype, copies, true)
	if err != nil {
		return nil, err
	}
	p.InputDims, p.OutputDims = inputDims, outputDims
	p.addApplication(&Application{Name: "apply", Inputs: inputNames, Outputs: inputNames,
		Fn: func(_ *core.ApplicationCall, in []*core.Variable) ([]*core.Variable, error) { return p.applyAll(in) }})
	return p, nil
}

// NewFork makes a Fork: apply(input_) gives one transformed output per
// output name (children fork_<name>; the prototype defaults to Linear).
func NewFork(cfg *Config, name string, outputNames []string, inputDim int, outputDims []int, prototype Feedforward) (*Parallel, error) {
	return newFork(cfg, name, outputNames, inputDim, outputDims, prototype, nil)
}

func newFork(cfg *Config, name string, outputNames []string, inputDim int, outputDims []int, prototype Feedforward, copies []Feedforward) (*Parallel, error) {
	p, err := newParallel(cfg, "Fork", name, "fork", outputNames, prototype, copies, true)
	if err != nil {
		return nil, err
	}
	p.InputDim, p.OutputDims = inputDim, outputDims
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
func NewDistribute(cfg *Config, name string, targetNames []string, sourceName string, targetDims []int, sourceDim int, prototype Feedforward) (*Parallel, error) {
	return newDistribute(cfg, name, targetNames, sourceName, targetDims, sourceDim, prototype, nil)
}

func newDistribute(cfg *Config, name string, targetNames []string, sourceName string, targetDims []int, sourceDim int, prototype Feedforward, copies []Feedforward) (*Parallel, error) {
	p, err := newParallel(cfg, "Distribute", name, "distribute", targetNames, prototype, copies, false)
	if err != nil {
		return nil, err
	}
	p.SourceDim, p.TargetDims = sourceDim, targetDims
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
func NewMerge(cfg *Config, name string, inputNames []string, inputDims []int, outputDim int, prototype Feedforward) (*Parallel, error) {
	return newMerge(cfg, name, inputNames, inputDims, outputDim, prototype, nil)
}

func newMerge(cfg *Config, name string, inputNames []string, inputDims []int, outputDim int, prototype Feedforward, copies []Feedforward) (*Parallel, error) {
	p, err := newParallel(cfg, "Merge", name, "transform", inputNames, prototype, copies, false)
	if err != nil {
		return nil, err
	}
	p.InputDims, p.OutputDim = inputDims, outputDim
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
