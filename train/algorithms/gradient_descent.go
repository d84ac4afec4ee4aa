package algorithms

import (
	"fmt"
	"log"
	"slices"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/device"
	_ "github.com/blocks-go/blocks/core/exec/cpu" // the CPU backend, which core.Compile runs on
	"github.com/blocks-go/blocks/nd"
)

// Gradient pairs a parameter with an expression for the cost's gradient
// with respect to it (an entry of Blocks' gradients OrderedDict).
type Gradient struct {
	Parameter, Value *core.Variable
}

// GradientDescentConfig holds GradientDescent's arguments, as Blocks names
// them.
type GradientDescentConfig struct {
	// Cost is the scalar to minimise; unused when Gradients is given.
	Cost *core.Variable
	// Parameters are the shared variables to train, in the order steps
	// and updates are made. Inferred from Gradients when nil.
	Parameters []*core.Variable
	// StepRule computes the steps; nil means Scale(1.0) of FloatX.
	StepRule StepRule
	// FloatX is the run's floatX (Theano's config.floatX), the dtype of
	// the default step rule's learning rate; the zero value is float32.
	FloatX nd.DType
	// Device is where the training function runs (UpdatesAlgorithm's
	// Device); the zero Device is the CPU.
	Device device.Device
	// Gradients, optional, are precomputed gradients; when nil they are
	// taken from Cost with core.Grad.
	Gradients []Gradient
	// KnownGrads and ConsiderConstant pass through to core.Grad.
	KnownGrads       map[*core.Variable]*core.Variable
	ConsiderConstant []*core.Variable
	// Updates are extra updates made with every batch (UpdatesAlgorithm's
	// updates), after the parameter updates and the step rule's.
	Updates []core.Update
	// OnUnusedSources is "raise" (the default when empty), "warn" or
	// "ignore".
	OnUnusedSources string
	// ParameterName names parameters in the names of their algorithm
	// buffers (see GradientDescent.Buffers); nil means the variable's
	// name. Give bricks.ParameterPath for Blocks' hierarchical names.
	ParameterName func(*core.Variable) string
}

// GradientDescent is Blocks' GradientDescent: for each batch, every
// parameter p becomes p - step(p), with the steps from a step rule applied
// to the gradients of the cost. The fields are set by NewGradientDescent
// and must not be changed afterwards.
type GradientDescent struct {
	// Cost is the cost (nil when only gradients were given).
	Cost *core.Variable
	// Parameters are the trained shared variables, in order.
	Parameters []*core.Variable
	// Gradients are the gradients, parallel to Parameters.
	Gradients []*core.Variable
	// StepRule is the step rule in use.
	StepRule StepRule
	// Steps are the steps, parallel to Parameters.
	Steps []*core.Variable
	// StepRuleUpdates are the updates of the step rule's state.
	StepRuleUpdates []core.Update
	// TotalGradientNorm and TotalStepNorm are the L2 norms of all
	// gradients and all steps together (named "total_gradient_norm" and
	// "total_step_norm"); monitor them like any variable.
	TotalGradientNorm, TotalStepNorm *core.Variable

	UpdatesAlgorithm
	buffers []*core.Variable
}

// UpdatesAlgorithm is Blocks' UpdatesAlgorithm: with every batch it
// applies updates (shared variable ← expression), computed from the
// values before the batch. GradientDescent is one with the parameter and
// step-rule updates.
type UpdatesAlgorithm struct {
	// OnUnusedSources is "raise", "warn" or "ignore".
	OnUnusedSources string
	// Device is where Initialize compiles the training function (and the
	// microbatched step's functions) to run; the zero Device is the CPU.
	// Set it before Initialize.
	Device device.Device
	// Warn receives warnings (unused sources under "warn", ignored
	// arguments); nil logs them with the standard log package.
	Warn func(msg string)

	name         string           // for messages
	roots        []*core.Variable // extra roots whose inputs the function takes (the cost)
	updates      []core.Update
	hooks        []outputHook
	nOutputs     int
	inputs       []*core.Variable
	fn           *core.Function
	args         []*nd.Array
	warnUnused   func(string)
	pendingWarns []string

	// Microbatching, when set before Initialize with K > 1 or several
	// processes, cuts every batch into microbatches (microbatch.go).
	Microbatching *Microbatching
	// cuts are the values summed over microbatches before the updates
	// (GradientDescent's gradients); micro is the microbatched step.
	cuts  []*core.Variable
	micro *microStep

	// finite, when set, is a scalar computed with every batch (the cost)
	// that must be finite; see checkFinite.
	finite     *core.Variable
	finiteName func(*core.Variable) string
	params     []*core.Variable
}

// NewUpdatesAlgorithm returns Blocks' UpdatesAlgorithm(updates,
// on_unused_sources); onUnusedSources "" is "raise".
func NewUpdatesAlgorithm(updates []core.Update, onUnusedSources string) (*UpdatesAlgorithm, error) {
	if onUnusedSources == "" {
		onUnusedSources = UnusedSourcesRaise
	}
	if err := checkUnusedSourcesPolicy(onUnusedSources); err != nil {
		return nil, err
	}
	for i, u := range updates {
		if u.Shared == nil || u.Value == nil || !u.Shared.IsShared() {
			return nil, fmt.Errorf("UpdatesAlgorithm: update %d must set a shared variable to an expression", i)
		}
	}
	return &UpdatesAlgorithm{name: "UpdatesAlgorithm", OnUnusedSources: onUnusedSources, updates: slices.Clone(updates)}, nil
}

type outputHook struct {
	outputs []*core.Variable
	receive func([]*nd.Array) error
}

// NewGradientDescent builds the gradients, the steps and the updates (as
// Blocks' constructor does); Initialize compiles them.
func NewGradientDescent(c GradientDescentConfig) (*GradientDescent, error) {
	g := &GradientDescent{Cost: c.Cost}
	g.name = "GradientDescent"
	g.OnUnusedSources = c.OnUnusedSources
	g.Device = c.Device
	if g.OnUnusedSources == "" {
		g.OnUnusedSources = UnusedSourcesRaise
	}
	if err := checkUnusedSourcesPolicy(g.OnUnusedSources); err != nil {
		return nil, err
	}
	if len(c.Gradients) == 0 {
		if c.Cost == nil {
			return nil, fmt.Errorf("GradientDescent: can't infer gradients; no cost specified")
		}
		if len(c.Parameters) == 0 {
			return nil, fmt.Errorf("GradientDescent: can't infer gradients; no parameters specified")
		}
		if err := checkParameters(c.Parameters); err != nil {
			return nil, err
		}
		grads, err := core.Grad(c.Cost, c.Parameters, core.GradOptions{KnownGrads: c.KnownGrads, ConsiderConstant: c.ConsiderConstant})
		if err != nil {
			return nil, fmt.Errorf("GradientDescent: %w", err)
		}
		g.Parameters = slices.Clone(c.Parameters)
		g.Gradients = grads
	} else {
		if c.Cost != nil {
			g.pendingWarns = append(g.pendingWarns, "GradientDescent: gradients already specified directly; cost is unused")
		}
		if len(c.KnownGrads) > 0 {
			return nil, fmt.Errorf("GradientDescent: known_grads has no effect when gradients are passed in")
		}
		if c.ConsiderConstant != nil {
			return nil, fmt.Errorf("GradientDescent: consider_constant has no effect when gradients are passed in")
		}
		byParam := make(map[*core.Variable]*core.Variable, len(c.Gradients))
		keys := make([]*core.Variable, len(c.Gradients))
		for i, gr := range c.Gradients {
			if gr.Parameter == nil || gr.Value == nil {
				return nil, fmt.Errorf("GradientDescent: gradient %d has no parameter or no value", i)
			}
			if _, dup := byParam[gr.Parameter]; dup {
				return nil, fmt.Errorf("GradientDescent: two gradients for the parameter %s", gr.Parameter)
			}
			byParam[gr.Parameter] = gr.Value
			keys[i] = gr.Parameter
		}
		params := c.Parameters
		if params != nil && !sameSet(params, keys) {
			g.pendingWarns = append(g.pendingWarns, "GradientDescent: specified parameters list does not match keys in provided gradient dictionary; using parameters inferred from gradients")
			params = nil
		}
		if params == nil {
			params = keys
		}
		if err := checkParameters(params); err != nil {
			return nil, err
		}
		g.Parameters = slices.Clone(params)
		g.Gradients = make([]*core.Variable, len(params))
		for i, p := range params {
			g.Gradients[i] = byParam[p]
			if g.Gradients[i].NDim() != p.NDim() {
				return nil, fmt.Errorf("GradientDescent: the gradient %s of %s is %d-d, the parameter %d-d", g.Gradients[i], p, g.Gradients[i].NDim(), p.NDim())
			}
		}
	}
	g.TotalGradientNorm = l2Norm(g.Gradients, "total_gradient_norm")
	g.cuts = g.Gradients

	g.StepRule = c.StepRule
	if g.StepRule == nil {
		g.StepRule = NewScale(c.FloatX, DefaultLearningRate)
	}
	steps, ruleUpdates, err := g.StepRule.ComputeSteps(g.Parameters, g.Gradients)
	if err != nil {
		return nil, fmt.Errorf("GradientDescent: computing steps: %w", err)
	}
	if len(steps) != len(g.Parameters) {
		return nil, fmt.Errorf("GradientDescent: the step rule returned %d steps for %d parameters", len(steps), len(g.Parameters))
	}
	g.Steps = steps
	g.StepRuleUpdates = ruleUpdates
	g.buffers = nameBuffers(g.Parameters, ruleUpdates, c.ParameterName)
	g.TotalStepNorm = l2Norm(steps, "total_step_norm")
	for i, p := range g.Parameters {
		if steps[i].NDim() != p.NDim() {
			return nil, fmt.Errorf("GradientDescent: the step %s for %s is %d-d, the parameter %d-d", steps[i], p, steps[i].NDim(), p.NDim())
		}
		g.updates = append(g.updates, core.Update{Shared: p, Value: core.Sub(p, steps[i])})
	}
	g.updates = append(g.updates, ruleUpdates...)
	g.updates = append(g.updates, c.Updates...)
	if c.Cost != nil {
		g.roots = []*core.Variable{c.Cost}
		if c.Cost.NDim() == 0 && c.Cost.DType().IsFloat() && !HasRemoveNotFinite(g.StepRule) {
			g.finite = c.Cost
			g.params = g.Parameters
			g.finiteName = c.ParameterName
		}
	}
	return g, nil
}

func checkParameters(params []*core.Variable) error {
	seen := map[*core.Variable]bool{}
	for _, p := range params {
		if p == nil || !p.IsShared() {
			return fmt.Errorf("GradientDescent: parameter %v is not a shared variable", p)
		}
		if seen[p] {
			return fmt.Errorf("GradientDescent: parameter %s is listed twice", p)
		}
		seen[p] = true
	}
	return nil
}

func sameSet(a, b []*core.Variable) bool {
	in := map[*core.Variable]bool{}
	for _, v := range a {
		in[v] = true
	}
	inB := map[*core.Variable]bool{}
	for _, v := range b {
		if !in[v] {
			return false
		}
		inB[v] = true
	}
	return len(inB) == len(in)
}

// L2Norm is Blocks' l2_norm: the square root of the sum, over vars in
// order, of the sum of each one's squares.
func L2Norm(vars []*core.Variable) *core.Variable {
	var total *core.Variable
	for _, v := range vars {
		s := core.SumAll(core.Sqr(v))
		if total == nil {
			total = s
		} else {
			total = core.Add(total, s)
		}
	}
	if total == nil {
		return core.Const(nd.Float64, 0)
	}
	return core.Sqrt(total)
}

func l2Norm(vars []*core.Variable, name string) *core.Variable {
	n := L2Norm(vars).Copy()
	n.Name = name
	return n
}

func (g *UpdatesAlgorithm) warn(msg string) {
	if g.Warn != nil {
		g.Warn(msg)
		return
	}
	log.Print("WARNING: " + msg)
}

// Updates are the updates made with every batch: the parameters' first,
// then the step rule's, then those given in the configuration or added
// with AddUpdates.
func (g *UpdatesAlgorithm) Updates() []core.Update { return slices.Clone(g.updates) }

// AddUpdates adds updates made with every batch (Blocks' add_updates).
// They see the values from before the batch, as the parameter updates do.
// It is an error after Initialize.
func (g *UpdatesAlgorithm) AddUpdates(updates []core.Update) error {
	if g.fn != nil || g.micro != nil {
		return fmt.Errorf("add_updates after initialize would have no effect")
	}
	g.updates = append(g.updates, updates...)
	return nil
}

// AddOutputs asks the training function to compute outputs with every
// batch, from the values before the update (the same forward pass as the
// training step), and to hand them to receive after each batch. Monitoring
// of training data (TrainingDataMonitoring) uses it. It is an error after
// Initialize.
func (g *UpdatesAlgorithm) AddOutputs(outputs []*core.Variable, receive func(values []*nd.Array) error) error {
	if g.fn != nil || g.micro != nil {
		return fmt.Errorf("outputs added after initialize would never be computed")
	}
	g.hooks = append(g.hooks, outputHook{outputs: slices.Clone(outputs), receive: receive})
	return nil
}

// Initialize compiles the training function. Its inputs are the data input
// variables of the cost, the updates and the extra outputs, in the order of
// core.Ancestors over them (the cost first); each is fed the batch source
// of its name.
func (g *UpdatesAlgorithm) Initialize() error {
	for _, w := range g.pendingWarns {
		g.warn(w)
	}
	g.pendingWarns = nil
	var outputs []*core.Variable
	roots := slices.Clone(g.roots)
	for _, u := range g.updates {
		roots = append(roots, u.Value)
	}
	for _, h := range g.hooks {
		outputs = append(outputs, h.outputs...)
	}
	roots = append(roots, outputs...)
	if g.finite != nil {
		outputs = append(outputs, g.finite)
	}
	var inputs []*core.Variable
	for _, v := range core.Ancestors(roots) {
		if v.IsInput() {
			inputs = append(inputs, v)
		}
	}
	if err := CheckInputNames(inputs); err != nil {
		return fmt.Errorf("%s: %w", g.name, err)
	}
	if g.Microbatching.active() {
		if err := g.initMicro(inputs, outputs); err != nil {
			return err
		}
		g.inputs = inputs
		g.nOutputs = len(outputs)
		g.args = make([]*nd.Array, 0, len(inputs))
		g.warnUnused = g.warnUnusedOnce
		return nil
	}
	fn, err := core.CompileFor(g.Device, inputs, outputs, g.updates)
	if err != nil {
		return fmt.Errorf("%s: compiling the training function: %w", g.name, err)
	}
	g.inputs = inputs
	g.fn = fn
	g.nOutputs = len(outputs)
	g.args = make([]*nd.Array, 0, len(inputs))
	g.warnUnused = g.warnUnusedOnce
	return nil
}

// Inputs are the training function's input variables (after Initialize).
func (g *UpdatesAlgorithm) Inputs() []*core.Variable { return slices.Clone(g.inputs) }

// Function is the compiled training function (nil before Initialize).
func (g *UpdatesAlgorithm) Function() *core.Function { return g.fn }

// ProcessBatch runs one training step on batch, whose sources are matched
// to the input variables by name.
func (g *UpdatesAlgorithm) ProcessBatch(batch map[string]*nd.Array) error {
	if g.fn == nil && g.micro == nil {
		return fmt.Errorf("%s: process_batch before initialize", g.name)
	}
	args, err := MatchSources(g.inputs, batch, g.OnUnusedSources, g.name, g.args, g.warnUnused)
	if err != nil {
		return err
	}
	g.args = args
	if g.micro != nil {
		return g.processMicro(args)
	}
	call := g.fn.Call
	if len(g.hooks) == 0 {
		// Only the cost for the finite check: read it in place, allocate
		// nothing (monitoring hooks get copies taken before the updates).
		call = g.fn.CallView
	}
	outs, err := call(args)
	if err != nil {
		return ExplainInputError(err, g.inputs, args)
	}
	off := 0
	for _, h := range g.hooks {
		n := len(h.outputs)
		if h.receive != nil {
			if err := h.receive(outs[off : off+n : off+n]); err != nil {
				return err
			}
		}
		off += n
	}
	if g.finite != nil {
		return g.checkFinite(outs[off])
	}
	return nil
}

func (g *UpdatesAlgorithm) warnUnusedOnce(msg string) {
	g.warnUnused = nil // Blocks warns once
	g.warn(msg)
}
