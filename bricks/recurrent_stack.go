package bricks

import (
	"fmt"
	"slices"

	"github.com/blocks-go/blocks/core"
)

// RecurrentStack stacks recurrent transitions: layer 0 reads the given
// sequences, layer k > 0 the states of layer k-1 through a Fork (children
// fork_1, fork_2, ...). Names of layer k > 0 carry the suffix "#k"
// ("states#1"); the mask is shared. With skip_connections, layer k also
// adds the given sequences named with its suffix.
type RecurrentStack struct {
	*Base
	recurrentBase
	Transitions []Brick
	Forks       []*Parallel
	statesName  string
	skip        bool
}

// stackSuffix is Blocks' RecurrentStack.suffix.
func stackSuffix(name string, level int) string {
	if name == "mask" || level == 0 {
		return name
	}
	return fmt.Sprintf("%s#%d", name, level)
}

// NewRecurrentStack makes a RecurrentStack; forkPrototype nil means
// Linear without bias.
func NewRecurrentStack(cfg *Config, name string, transitions []Brick, forkPrototype *Linear, statesName string, skip bool) (*RecurrentStack, error) {
	if len(transitions) == 0 {
		return nil, fmt.Errorf("RecurrentStack: no transitions")
	}
	r := &RecurrentStack{Base: &Base{}, Transitions: transitions, statesName: statesName, skip: skip}
	r.initBase(r, cfg, name, []string{"RecurrentStack", "BaseRecurrent", "Initializable", "Brick"}, initializableSpecs)
	var apps []*RecurrentApp
	for i, t := range transitions {
		rb, ok := t.(RecurrentBrick)
		if !ok || rb.RecurrentApplication("apply") == nil {
			return nil, fmt.Errorf("RecurrentStack: transition %d (%s) is not a recurrent brick", i, t.BaseBrick().AnnotationName())
		}
		apps = append(apps, rb.RecurrentApplication("apply"))
	}
	children := append([]Brick(nil), transitions...)
	for level := 1; level < len(transitions); level++ {
		var normal []string
		for _, s := range apps[level].Spec.Sequences {
			if s != "mask" {
				normal = append(normal, s)
			}
		}
		f, err := NewFork(cfg, fmt.Sprintf("fork_%d", level), normal, 0, nil, forkPrototype)
		if err != nil {
			return nil, err
		}
		if forkPrototype == nil {
			for _, l := range f.Transforms {
				l.attrs["use_bias"] = false
			}
		}
		r.Forks = append(r.Forks, f)
		children = append(children, f)
	}
	r.SetChildren(children)
	var spec RecurrentSpec
	for level, a := range apps {
		if level == 0 || skip {
			for _, s := range a.Spec.Sequences {
				if n := stackSuffix(s, level); !slices.Contains(spec.Sequences, n) {
					spec.Sequences = append(spec.Sequences, n)
				}
			}
		}
		for _, s := range a.Spec.States {
			spec.States = append(spec.States, stackSuffix(s, level))
		}
		for _, s := range a.Spec.Contexts {
			spec.Contexts = append(spec.Contexts, stackSuffix(s, level))
		}
		for _, s := range a.Spec.Outputs {
			spec.Outputs = append(spec.Outputs, stackSuffix(s, level))
		}
	}
	r.addRecurrent(r.Base, "apply", &RecurrentApp{Spec: spec,
		Step: func(in map[string]*core.Variable) ([]*core.Variable, error) { return r.step(apps, in) },
		Initial: func(ref *core.Variable, axis int) ([]*core.Variable, error) {
			var out []*core.Variable
			for _, a := range apps {
				s, err := a.Initial(ref, axis)
				if err != nil {
					return nil, err
				}
				out = append(out, s...)
			}
			return out, nil
		}})
	return r, nil
}

// PushAllocationConfigHook sizes the forks from the transitions' dims.
func (r *RecurrentStack) PushAllocationConfigHook() error {
	for level := 1; level < len(r.Transitions); level++ {
		prev, ok := r.Transitions[level-1].(GetDimmer)
		cur, ok2 := r.Transitions[level].(GetDimmer)
		if !ok || !ok2 {
			return fmt.Errorf("%s: transitions must answer get_dim", r.AnnotationName())
		}
		// The transitions get their own configuration pushed after this
		// hook; their dims are set by the user.
		in, err := prev.GetDim(r.statesName)
		if err != nil {
			return err
		}
		f := r.Forks[level-1]
		f.attrs["input_dim"] = in
		var outs []int
		for _, n := range f.InputNames {
			d, err := cur.GetDim(n)
			if err != nil {
				return err
			}
			outs = append(outs, d)
		}
		f.attrs["output_dims"] = outs
	}
	return nil
}

// ApplyKeywords implements KeywordApplier.
func (r *RecurrentStack) ApplyKeywords(app string, in map[string]*core.Variable, o RecurrentOptions) ([]*core.Variable, error) {
	return ApplyRecurrent(r, app, in, o)
}

// GetDim answers for the suffixed names.
func (r *RecurrentStack) GetDim(name string) (int, error) {
	for level, t := range r.Transitions {
		gd, ok := t.(GetDimmer)
		if !ok {
			continue
		}
		ra := t.(RecurrentBrick).RecurrentApplication("apply")
		for _, n := range slices.Concat(ra.Spec.Sequences, ra.Spec.States, ra.Spec.Contexts) {
			if stackSuffix(n, level) == name {
				return gd.GetDim(n)
			}
		}
	}
	return 0, fmt.Errorf("%s has no input %s", r.AnnotationName(), name)
}

func (r *RecurrentStack) step(apps []*RecurrentApp, in map[string]*core.Variable) ([]*core.Variable, error) {
	var out []*core.Variable
	var prevStates *core.Variable
	for level, a := range apps {
		m := map[string]*core.Variable{}
		if level > 0 {
			f := r.Forks[level-1]
			fo, err := Apply(f, "apply", prevStates)
			if err != nil {
				return nil, err
			}
			for i, n := range f.InputNames {
				m[n] = fo[i]
				if r.skip {
					if v, ok := in[stackSuffix(n, level)]; ok {
						m[n] = core.Add(m[n], v)
					}
				}
			}
			if v, ok := in["mask"]; ok {
				m["mask"] = v
			}
		} else {
			for _, n := range a.Spec.Sequences {
				if v, ok := in[n]; ok {
					m[n] = v
				}
			}
		}
		for _, n := range slices.Concat(a.Spec.States, a.Spec.Contexts) {
			m[n] = in[stackSuffix(n, level)]
		}
		res, err := a.Step(m)
		if err != nil {
			return nil, err
		}
		out = append(out, res...)
		j := slices.Index(a.Spec.Outputs, r.statesName)
		if j < 0 {
			return nil, fmt.Errorf("%s: transition %d has no output %s", r.AnnotationName(), level, r.statesName)
		}
		prevStates = res[j]
	}
	return out, nil
}

var _ KeywordApplier = (*RecurrentStack)(nil)
