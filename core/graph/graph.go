// Package graph is Blocks' blocks.graph and blocks.filter: the
// ComputationGraph over the annotated symbolic variables of core, the
// VariableFilter that selects variables by role, brick, name and
// application, graph replacement and the transforms built on it
// (apply_dropout, apply_noise, collect_parameters), and printing a graph
// as text or Graphviz DOT. Batch normalization's graph functions live in
// package bricks, since they re-apply bricks.
package graph

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu" // the CPU backend, which core.Compile runs on
)

// ComputationGraph is the graph of everything its outputs depend on, with
// the auxiliary variables of the application calls met on the way.
type ComputationGraph struct {
	Outputs []*core.Variable
	// Variables are all the graph's variables in topological order from
	// the inputs (an input's dependents come after it).
	Variables []*core.Variable
}

// New builds the computation graph of outputs.
func New(outputs []*core.Variable) *ComputationGraph {
	g := &ComputationGraph{Outputs: append([]*core.Variable(nil), outputs...)}
	roots := append([]*core.Variable(nil), outputs...)
	seenCall := map[*core.ApplicationCall]bool{}
	seenBrick := map[core.Annotation]bool{}
	seenUser := map[*core.UserAnnotation]bool{}
	var brickAux []*core.Variable
	for {
		vars := core.Ancestors(roots)
		added := false
		for _, v := range vars {
			for _, a := range v.Tag.Annotations {
				if br, ok := a.(brickAuxiliaries); ok && !seenBrick[a] {
					seenBrick[a] = true
					brickAux = append(brickAux, br.BrickAuxiliaryVariables()...)
				}
				if ua, ok := a.(*core.UserAnnotation); ok && !seenUser[ua] {
					seenUser[ua] = true
					for _, aux := range ua.AuxiliaryVariables {
						roots = append(roots, aux)
						added = true
					}
				}
				call, ok := a.(*core.ApplicationCall)
				if !ok || seenCall[call] {
					continue
				}
				seenCall[call] = true
				for _, aux := range call.AuxiliaryVariables {
					roots = append(roots, aux)
					added = true
				}
			}
		}
		if !added {
			// A brick's own auxiliary variables join the list, but not
			// what they are computed from (as in Blocks, whose graph
			// does not walk them): Linear's W_norm is listed, its W only
			// where the graph uses it.
			in := map[*core.Variable]bool{}
			for _, v := range vars {
				in[v] = true
			}
			for _, v := range brickAux {
				if !in[v] {
					in[v] = true
					vars = append(vars, v)
				}
			}
			g.Variables = blocksOrder(g.Outputs, vars)
			return g
		}
	}
}

// blocksOrder is the variables of content in Blocks' order
// (ComputationGraph._get_variables): the inputs of the apply nodes in the
// order of Theano's io_toposort, each once, then the outputs not listed
// yet, and after each variable the auxiliary variables of those of its
// annotations (brick, application call) met first there. Where an
// elementwise op broadcasts an input of fewer dimensions (a bias added to
// a batch), Theano's graph has a DimShuffle node of its own, which
// io_toposort meets before the op: the order counts one there. A variable
// of content that this walk does not list (what an auxiliary variable is
// computed from: Blocks lists the auxiliary variable alone) comes right
// before the auxiliary variable, in Ancestors' order.
func blocksOrder(outputs, content []*core.Variable) []*core.Variable {
	var main []*core.Variable
	listed := map[*core.Variable]bool{}
	list := func(v *core.Variable) {
		if !listed[v] {
			listed[v] = true
			main = append(main, v)
		}
	}
	for _, n := range ioToposort(outputs) {
		if n.dimshuffle >= 0 {
			list(n.v.Inputs()[n.dimshuffle])
			continue
		}
		for i, in := range n.v.Inputs() {
			if !broadcasts(n.v, i) { // else the DimShuffle's output, not a variable here
				list(in)
			}
		}
	}
	for _, o := range outputs {
		list(o)
	}
	inContent := make(map[*core.Variable]bool, len(content))
	for _, v := range content {
		inContent[v] = true
	}
	out := make([]*core.Variable, 0, len(content))
	done := map[*core.Variable]bool{}
	seenAnn := map[core.Annotation]bool{}
	var add func(v *core.Variable)
	add = func(v *core.Variable) {
		if done[v] || !inContent[v] {
			return
		}
		done[v] = true
		out = append(out, v)
		for _, a := range v.Tag.Annotations {
			if seenAnn[a] {
				continue
			}
			seenAnn[a] = true
			for _, av := range annotationAuxiliaries(a) {
				if done[av] || listed[av] {
					continue
				}
				for _, anc := range core.Ancestors([]*core.Variable{av}) {
					if anc != av && !listed[anc] {
						add(anc)
					}
				}
				add(av)
			}
		}
	}
	for _, v := range main {
		add(v)
	}
	for _, v := range content { // none, unless the walks above disagree
		add(v)
	}
	return out
}

// annotationAuxiliaries are an annotation's auxiliary variables: a brick's
// own (brickAuxiliaries), an application call's, a user annotation's.
func annotationAuxiliaries(a core.Annotation) []*core.Variable {
	switch a := a.(type) {
	case *core.ApplicationCall:
		return a.AuxiliaryVariables
	case *core.UserAnnotation:
		return a.AuxiliaryVariables
	case brickAuxiliaries:
		return a.BrickAuxiliaryVariables()
	}
	return nil
}

// toposortNode is an apply node of Theano's graph: the op computing v, or
// (dimshuffle >= 0) the DimShuffle that broadcasts v's input of that index.
type toposortNode struct {
	v          *core.Variable
	dimshuffle int
}

// broadcasts reports whether Theano's graph has a DimShuffle before input
// i of v: v is elementwise and the input has fewer dimensions.
func broadcasts(v *core.Variable, i int) bool {
	return v.Kind() == core.KindOp && v.Inputs()[i].NDim() < v.NDim() && strings.HasPrefix(v.Op().String(), "Elemwise{")
}

// ioToposort is Theano's graph.io_toposort (without orderings): a stack
// that takes a node once its inputs are computed, else puts it back with
// the owners of its inputs above it.
func ioToposort(outputs []*core.Variable) []toposortNode {
	computed := map[toposortNode]bool{}
	// owner is the node computing input i of n (ok false for a leaf).
	owner := func(n toposortNode, i int) (toposortNode, bool) {
		if n.dimshuffle >= 0 {
			in := n.v.Inputs()[n.dimshuffle]
			return toposortNode{in, -1}, in.Kind() == core.KindOp
		}
		if broadcasts(n.v, i) {
			return toposortNode{n.v, i}, true
		}
		in := n.v.Inputs()[i]
		return toposortNode{in, -1}, in.Kind() == core.KindOp
	}
	nInputs := func(n toposortNode) int {
		if n.dimshuffle >= 0 {
			return 1
		}
		return len(n.v.Inputs())
	}
	var todo []toposortNode
	for i := len(outputs) - 1; i >= 0; i-- {
		if outputs[i].Kind() == core.KindOp {
			todo = append(todo, toposortNode{outputs[i], -1})
		}
	}
	var order []toposortNode
	for len(todo) > 0 {
		cur := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if computed[cur] {
			continue
		}
		ready := true
		for i := range nInputs(cur) {
			if o, ok := owner(cur, i); ok && !computed[o] {
				ready = false
				break
			}
		}
		if ready {
			computed[cur] = true
			order = append(order, cur)
			continue
		}
		todo = append(todo, cur)
		for i := range nInputs(cur) {
			if o, ok := owner(cur, i); ok {
				todo = append(todo, o)
			}
		}
	}
	return order
}

// brickAuxiliaries is a brick annotation with auxiliary variables of its
// own (Blocks' brick-level add_auxiliary_variable: Linear's W_norm).
type brickAuxiliaries interface {
	BrickAuxiliaryVariables() []*core.Variable
}

// ScanVariables are the variables of the step graphs of the loops among
// the graph's variables, loop after loop (Blocks' scan_variables: one
// level, a loop inside a step graph is not entered).
func (g *ComputationGraph) ScanVariables() []*core.Variable {
	var out []*core.Variable
	for _, v := range g.Variables {
		out = append(out, core.ScanInnerVariables(v)...)
	}
	return out
}

// Inputs are the data inputs (Theano's non-shared, non-constant leaves).
func (g *ComputationGraph) Inputs() []*core.Variable {
	return g.filter(func(v *core.Variable) bool { return v.IsInput() })
}

// DictOfInputs maps input names to the inputs.
func (g *ComputationGraph) DictOfInputs() map[string]*core.Variable {
	m := map[string]*core.Variable{}
	for _, v := range g.Inputs() {
		m[v.Name] = v
	}
	return m
}

// SharedVariables are the shared variables.
func (g *ComputationGraph) SharedVariables() []*core.Variable {
	return g.filter(func(v *core.Variable) bool { return v.IsShared() })
}

// Parameters are the shared variables with role PARAMETER.
func (g *ComputationGraph) Parameters() []*core.Variable {
	return g.filter(func(v *core.Variable) bool { return v.IsShared() && core.HasRole(v, core.Parameter) })
}

// AuxiliaryVariables are the variables with role AUXILIARY.
func (g *ComputationGraph) AuxiliaryVariables() []*core.Variable {
	return g.filter(func(v *core.Variable) bool { return core.HasRole(v, core.Auxiliary) })
}

// IntermediaryVariables are the variables that are neither inputs nor
// outputs (nor shared or constant).
func (g *ComputationGraph) IntermediaryVariables() []*core.Variable {
	return g.filter(func(v *core.Variable) bool {
		return v.Kind() == core.KindOp && !slices.Contains(g.Outputs, v)
	})
}

func (g *ComputationGraph) filter(keep func(*core.Variable) bool) []*core.Variable {
	var out []*core.Variable
	for _, v := range g.Variables {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// Replace returns a new graph in which each key of replacements is replaced
// by its value; the variables that depend on them are rebuilt, the rest are
// shared with g (which stays unchanged and usable).
//
// As in Blocks, the replacements are made one at a time in the graph's
// topological order, and each one also rewrites the replacement values that
// come after it: replacing h1 by dropout(h1) and h2 by dropout(h2), where h2
// depends on h1, gives dropout(h2') with h2' computed from dropout(h1). A
// replacement value may use the variable it replaces (x -> x * mask).
func (g *ComputationGraph) Replace(replacements map[*core.Variable]*core.Variable) (*ComputationGraph, error) {
	for old, new := range replacements {
		if old.NDim() != new.NDim() {
			return nil, fmt.Errorf("replace: %s is %d-d but its replacement %s is %d-d", old, old.NDim(), new, new.NDim())
		}
	}
	memo := map[*core.Variable]*core.Variable{}
	for _, v := range g.Variables {
		w, err := rebuildNode(v, memo)
		if err != nil {
			return nil, err
		}
		if r, ok := replacements[v]; ok {
			// The value sees v as rebuilt so far, then stands for v.
			memo[v] = w
			r2, err := rewrite(r, memo)
			if err != nil {
				return nil, err
			}
			memo[v] = r2
			continue
		}
		if w != v {
			memo[v] = w
		}
	}
	outs := make([]*core.Variable, len(g.Outputs))
	for i, o := range g.Outputs {
		outs[i] = o
		if r, ok := memo[o]; ok {
			outs[i] = r
		}
	}
	return New(outs), nil
}

// rebuildNode returns v computed from its inputs' replacements in memo (v
// itself when none is replaced).
func rebuildNode(v *core.Variable, memo map[*core.Variable]*core.Variable) (*core.Variable, error) {
	if v.Kind() != core.KindOp {
		return v, nil
	}
	changed := false
	ins := make([]*core.Variable, len(v.Inputs()))
	for k, in := range v.Inputs() {
		ins[k] = in
		if r, ok := memo[in]; ok && r != in {
			ins[k], changed = r, true
		}
	}
	if !changed {
		return v, nil
	}
	w, err := core.Rebuild(v, ins)
	if err != nil {
		return nil, fmt.Errorf("replace: %v", err)
	}
	return w, nil
}

// rewrite rebuilds the graph of x with memo's replacements, recording the
// rebuilt nodes in memo.
func rewrite(x *core.Variable, memo map[*core.Variable]*core.Variable) (*core.Variable, error) {
	for _, a := range core.Ancestors([]*core.Variable{x}) {
		if _, ok := memo[a]; ok {
			continue
		}
		w, err := rebuildNode(a, memo)
		if err != nil {
			return nil, err
		}
		if w != a {
			memo[a] = w
		}
	}
	if r, ok := memo[x]; ok {
		return r, nil
	}
	return x, nil
}

// Brick is what the filter needs to know of a brick annotation.
type Brick interface {
	core.Annotation
	// Class is the brick's class name.
	Class() string
}

// BrickSelector selects bricks: an instance (Brick set) or every brick of a
// class and its subclasses (IsInstance set: Python's isinstance, which the
// front end that knows the class hierarchy decides).
type BrickSelector struct {
	Brick      Brick
	IsInstance func(Brick) bool
}

func (s BrickSelector) matches(b Brick) bool {
	if s.Brick != nil {
		return s.Brick == b
	}
	return s.IsInstance != nil && s.IsInstance(b)
}

// ApplicationSelector selects application calls: the application named Name
// of a brick chosen as in BrickSelector.
type ApplicationSelector struct {
	BrickSelector
	Name string
}

// VariableFilter is Blocks' VariableFilter: each set criterion must hold.
type VariableFilter struct {
	// Roles: the variable has one of them (all of them with EachRole).
	Roles    []*core.Role
	EachRole bool
	// Bricks: the variable's brick is one of these (or of these classes).
	Bricks []BrickSelector
	// Name: the variable's tag name (the short name its brick gave it).
	Name string
	// NameRegex: a regular expression that matches the start of the tag
	// name (Python's re.match).
	NameRegex string
	// TheanoName and TheanoNameRegex match the variable's full name.
	TheanoName      string
	TheanoNameRegex string
	// Applications: the variable was made by a call of one of them.
	Applications []ApplicationSelector
	// CallID: the application call's id.
	CallID int64
	// CallIDValue: the call_id given to the application call (Blocks'
	// metadata['call_id'], a string here).
	CallIDValue string
}

// BrickOf returns the first brick annotating v (Blocks' get_brick).
func BrickOf(v *core.Variable) Brick {
	for _, a := range v.Tag.Annotations {
		if b, ok := a.(Brick); ok {
			return b
		}
	}
	return nil
}

// Apply returns the variables that pass the filter, in order.
func (f *VariableFilter) Apply(vars []*core.Variable) ([]*core.Variable, error) {
	var nameRe, theanoRe *regexp.Regexp
	var err error
	if f.NameRegex != "" {
		if nameRe, err = regexp.Compile("^(?:" + f.NameRegex + ")"); err != nil {
			return nil, fmt.Errorf("VariableFilter: name_regex: %v", err)
		}
	}
	if f.TheanoNameRegex != "" {
		if theanoRe, err = regexp.Compile("^(?:" + f.TheanoNameRegex + ")"); err != nil {
			return nil, fmt.Errorf("VariableFilter: theano_name_regex: %v", err)
		}
	}
	var out []*core.Variable
	for _, v := range vars {
		if f.keep(v, nameRe, theanoRe) {
			out = append(out, v)
		}
	}
	return out, nil
}

func (f *VariableFilter) keep(v *core.Variable, nameRe, theanoRe *regexp.Regexp) bool {
	if len(f.Roles) > 0 {
		n := 0
		for _, r := range f.Roles {
			if core.HasRole(v, r) {
				n++
			}
		}
		if n == 0 || f.EachRole && n < len(f.Roles) {
			return false
		}
	}
	if len(f.Bricks) > 0 {
		b := BrickOf(v)
		if b == nil || !slices.ContainsFunc(f.Bricks, func(s BrickSelector) bool { return s.matches(b) }) {
			return false
		}
	}
	if f.Name != "" && v.Tag.Name != f.Name {
		return false
	}
	if nameRe != nil && (v.Tag.Name == "" || !nameRe.MatchString(v.Tag.Name)) {
		return false
	}
	if f.TheanoName != "" && v.Name != f.TheanoName {
		return false
	}
	if theanoRe != nil && (v.Name == "" || !theanoRe.MatchString(v.Name)) {
		return false
	}
	if len(f.Applications) > 0 || f.CallID != 0 || f.CallIDValue != "" {
		call := v.Tag.ApplicationCall
		if call == nil {
			return false
		}
		if f.CallID != 0 && call.ID != f.CallID {
			return false
		}
		if f.CallIDValue != "" && call.Metadata["call_id"] != f.CallIDValue {
			return false
		}
		if len(f.Applications) > 0 {
			b, _ := call.Brick.(Brick)
			if b == nil || !slices.ContainsFunc(f.Applications, func(s ApplicationSelector) bool {
				return s.Name == call.Application && call.Super == "" && s.matches(b)
			}) {
				return false
			}
		}
	}
	return true
}
