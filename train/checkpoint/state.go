package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Bindings say where a main loop's state lives: the loop (its algorithm,
// data stream and log), the parameters to save (nil: the algorithm's) and
// how to name them.
type Bindings struct {
	Loop *mainloop.MainLoop
	// Parameters are saved under _parameters; nil means the parameters
	// the algorithm trains (GradientDescent.Parameters).
	Parameters []*core.Variable
	// Namer gives a parameter's hierarchical name ("/mlp/linear_0.W");
	// nil means its plain name. "/" becomes "|" in the .npz keys, as in
	// Blocks.
	Namer func(*core.Variable) string
	// RandomStreams gives the run's random streams (Theano's
	// RandomStreams and MRG_RandomStreams, in the order the script made
	// them): the state of every draw's generator is saved under
	// random_streams, whichever graph the draw is in (training,
	// monitoring, a theano.function), and restored. nil: none.
	RandomStreams func() []*core.RandomStreams
	// Objects, when set, saves and restores the script objects of the
	// training state (objects.go).
	Objects ObjectStates
}

// streamGenerators lists the generators of the draws of b's random
// streams with their owners' names, in order.
func (b Bindings) streamGenerators() ([]string, []*numpyrand.RandomState) {
	if b.RandomStreams == nil {
		return nil, nil
	}
	var names []string
	var gens []*numpyrand.RandomState
	for i, s := range b.RandomStreams() {
		for j, g := range s.Generators() {
			names = append(names, fmt.Sprintf("random stream %d (seed %d), draw %d", i, s.DefaultSeed(), j))
			gens = append(gens, g)
		}
	}
	return names, gens
}

// ParameterKey is the .npz key of a parameter name: Blocks' "|mlp|linear_0.W"
// for "/mlp/linear_0.W".
func ParameterKey(name string) string { return strings.ReplaceAll(name, "/", "|") }

func (b Bindings) name(p *core.Variable) string {
	if b.Namer != nil {
		return b.Namer(p)
	}
	return p.Name
}

func (b Bindings) gd() *algorithms.GradientDescent {
	g, _ := b.Loop.Algorithm.(*algorithms.GradientDescent)
	return g
}

func (b Bindings) parameters() []*core.Variable {
	if b.Parameters != nil {
		return b.Parameters
	}
	if g := b.gd(); g != nil {
		return g.Parameters
	}
	return nil
}

// namedParameters pairs the parameters with their keys (unique).
func (b Bindings) namedParameters() ([]string, []*core.Variable, error) {
	ps := b.parameters()
	keys := make([]string, len(ps))
	seen := map[string]bool{}
	for i, p := range ps {
		if p.Value() == nil {
			return nil, nil, fmt.Errorf("parameter %s is not a shared variable", p)
		}
		keys[i] = ParameterKey(b.name(p))
		if seen[keys[i]] {
			return nil, nil, fmt.Errorf("two parameters are named %q: give the bricks distinct names", b.name(p))
		}
		seen[keys[i]] = true
	}
	return keys, ps, nil
}

// trainingRoots are the outputs of the training graph: the cost and the
// values of every update.
func (b Bindings) trainingRoots() []*core.Variable {
	g := b.gd()
	if g == nil {
		return nil
	}
	var roots []*core.Variable
	if g.Cost != nil {
		roots = append(roots, g.Cost)
	}
	for _, u := range g.Updates() {
		roots = append(roots, u.Value)
	}
	return roots
}

// algorithmState lists the shared variables of the algorithm's state, in a
// fixed order: every shared variable of the training graph that is not a
// saved parameter and is either updated by the algorithm (step-rule
// buffers, population statistics) or has role ALGORITHM_STATE
// (hyperparameters, buffers).
func (b Bindings) algorithmState() ([]string, []*core.Variable) {
	g := b.gd()
	if g == nil {
		return nil, nil
	}
	params := map[*core.Variable]bool{}
	for _, p := range b.parameters() {
		params[p] = true
	}
	updated := map[*core.Variable]bool{}
	roots := b.trainingRoots()
	for _, u := range g.Updates() {
		updated[u.Shared] = true
		roots = append(roots, u.Shared)
	}
	var keys []string
	var vars []*core.Variable
	for _, v := range core.Ancestors(roots) {
		if !v.IsShared() || params[v] || !(updated[v] || core.HasRole(v, core.AlgorithmState)) {
			continue
		}
		name := v.Name
		if p := v.Tag.ForParameter; p != nil {
			name = b.name(p) + "." + name
		}
		keys = append(keys, fmt.Sprintf("%03d:%s", len(vars), ParameterKey(name)))
		vars = append(vars, v)
	}
	return keys, vars
}

// savedAlgorithmState is the checkpoint's algorithm state in the order of
// keys: its own order, unless the names without their "NNN:" numbers are
// the same set, each once, in another order (a checkpoint written when
// the graph listed the parameters in another order), where each entry is
// matched by its name.
func savedAlgorithmState(keys []string, saved []Named) []Named {
	byName := map[string]int{}
	same := true
	for i, s := range saved {
		byName[stateName(s.Name)] = i
		same = same && s.Name == keys[i]
	}
	if same || len(byName) != len(saved) {
		return saved
	}
	out := make([]Named, len(keys))
	for i, k := range keys {
		j, ok := byName[stateName(k)]
		if !ok {
			return saved
		}
		delete(byName, stateName(k))
		out[i] = saved[j]
	}
	return out
}

// stateName is an algorithm state key without its "NNN:" number.
func stateName(key string) string {
	if i := strings.IndexByte(key, ':'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// Capture records the state of b's main loop: parameters, algorithm
// state, iteration state and log. callback names the callback it runs in.
// It fails, changing nothing, when the epoch in progress cannot report its
// position.
func Capture(b Bindings, callback string) (*Checkpoint, error) {
	c, _, err := capture(b, callback)
	return c, err
}

// capture is Capture; it also returns the variables whose arrays
// c.Parameters then c.AlgorithmState hold (the model's own).
func capture(b Bindings, callback string) (*Checkpoint, []*core.Variable, error) {
	loop := b.Loop
	c := &Checkpoint{}
	keys, ps, err := b.namedParameters()
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: %w", err)
	}
	for i, p := range ps {
		c.Parameters = append(c.Parameters, Named{keys[i], p.Value()})
	}
	akeys, avars := b.algorithmState()
	for i, v := range avars {
		c.AlgorithmState = append(c.AlgorithmState, Named{akeys[i], v.Value()})
	}
	vars := append(slices.Clip(ps), avars...)
	c.Iteration.Callback = callback
	if loop.Log.Status.EpochStarted {
		si, ok := loop.EpochIterator().(fuel.StatefulIterator)
		if !ok {
			return nil, nil, fmt.Errorf("checkpoint: the epoch iterator (%T) cannot report its position, so training cannot be saved mid-epoch; save after epochs (every_n_epochs) instead", loop.EpochIterator())
		}
		st, err := si.State()
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint: saving the position in the epoch: %w", err)
		}
		c.Iteration.EpochIterator = &st
	}
	for _, g := range fuel.Generators(loop.DataStream) {
		c.Iteration.StreamRNGs = append(c.Iteration.StreamRNGs, RNGState{g.Owner, g.RNG.State()})
	}
	for _, s := range fuel.States(loop.DataStream) {
		st, err := s.SaveState()
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint: saving the data stream's state: %w", err)
		}
		c.Iteration.StreamStates = append(c.Iteration.StreamStates, st)
	}
	for _, op := range core.RandomOps(b.trainingRoots()) {
		c.Iteration.RandomOps = append(c.Iteration.RandomOps, RNGState{op.String(), op.RNG().State()})
	}
	names, gens := b.streamGenerators()
	for i, g := range gens {
		c.Iteration.RandomStreams = append(c.Iteration.RandomStreams, RNGState{names[i], g.State()})
	}
	for i, ext := range loop.Extensions {
		se, ok := ext.(mainloop.StatefulExtension)
		if !ok {
			continue
		}
		st, err := se.CheckpointState()
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint: extension %s: %w", mainloop.ExtensionName(ext), err)
		}
		d := ExtensionData{Index: i, Name: mainloop.ExtensionName(ext)}
		for _, arrays := range st {
			var vs []Value
			for _, a := range arrays {
				if a == nil {
					vs = append(vs, EncodeValue(nil))
				} else {
					vs = append(vs, EncodeValue(a))
				}
			}
			d.Arrays = append(d.Arrays, vs)
		}
		c.Iteration.Extensions = append(c.Iteration.Extensions, d)
	}
	if err := b.captureObjects(c); err != nil {
		return nil, nil, err
	}
	c.Log = EncodeLog(loop.Log)
	c.Manifest.IterationsDone = loop.Log.Status.IterationsDone
	c.Manifest.EpochsDone = loop.Log.Status.EpochsDone
	return c, vars, nil
}

// What selects the parts of a checkpoint Restore applies.
type What struct {
	// Parameters: the values of the parameters.
	Parameters bool
	// AlgorithmState: step-rule buffers, hyperparameters, the generators
	// of the data pipeline and of the graph's random ops.
	AlgorithmState bool
	// Log: the training log (and with it the status: iterations, epochs).
	Log bool
	// EpochIterator: the position in the epoch in progress (needs Log).
	EpochIterator bool
	// Extensions: the state extensions keep between callbacks.
	Extensions bool
	// Objects: the attributes of the script objects (Bindings.Objects),
	// put back before the epoch resumes (a script scheme's requests may
	// depend on them).
	Objects bool
}

// Everything is what resuming restores.
var Everything = What{Parameters: true, AlgorithmState: true, Log: true, EpochIterator: true, Extensions: true, Objects: true}

// Restore puts c's state into b's main loop. It checks everything first
// (names, shapes and dtypes of parameters and buffers, the number of
// generators, the epoch position) and changes nothing when anything does
// not fit: the model and pipeline must be those the checkpoint was made
// from.
func Restore(b Bindings, c *Checkpoint, what What) error {
	loop := b.Loop
	var apply []func()
	// reads: the arrays ReadDeferred left in the file, read straight into
	// the model's, first of what is applied; beforeReads: the variables
	// they write, whose write guards run before.
	var reads []func() error
	var beforeReads []*core.Variable
	params, algState := c.Parameters, c.AlgorithmState
	dp, da := c.deferred[MemberParameters], c.deferred[MemberAlgorithmState]
	if dp != nil {
		params = dp.named()
	}
	if da != nil {
		algState = da.named()
	}
	// readInto reads d's arrays into the variables' values (by name), or
	// when one cannot be read into in place, loads them and copies.
	readInto := func(d *deferredNPZ, vars map[string]*core.Variable) error {
		into := map[string]*nd.Array{}
		for k, v := range vars {
			into[k] = v.Value()
		}
		if r := deferredReads(d, into); r != nil {
			for _, v := range vars {
				beforeReads = append(beforeReads, v)
			}
			reads = append(reads, r)
			return nil
		}
		arrays, err := d.load()
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		for _, a := range arrays {
			v, src := vars[a.Name], a.Array
			dst := v.Value()
			apply = append(apply, func() { v.BeforeWrite(); _ = dst.CopyFrom(src) })
		}
		return nil
	}
	if what.Parameters {
		keys, ps, err := b.namedParameters()
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		saved := map[string]*Named{}
		for i := range params {
			saved[params[i].Name] = &params[i]
		}
		byKey := map[string]*core.Variable{}
		var missing []string
		for i, p := range ps {
			s, ok := saved[keys[i]]
			if !ok {
				missing = append(missing, keys[i])
				continue
			}
			delete(saved, keys[i])
			if s.Array.DType() != p.Value().DType() || !slices.Equal(s.Array.Shape, p.Value().Shape) {
				return fmt.Errorf("checkpoint: parameter %s is %s%v in the checkpoint but %s%v in the model (the script builds a different model)",
					keys[i], s.Array.DType(), s.Array.Shape, p.Value().DType(), p.Value().Shape)
			}
			byKey[keys[i]] = p
			if dp == nil {
				dst, src := p.Value(), s.Array
				apply = append(apply, func() { p.BeforeWrite(); _ = dst.CopyFrom(src) })
			}
		}
		if len(missing) > 0 || len(saved) > 0 {
			var extra []string
			for k := range saved {
				extra = append(extra, k)
			}
			slices.Sort(extra)
			return fmt.Errorf("checkpoint: the model's parameters differ from the checkpoint's (the script builds a different model): not in the checkpoint: %v; only in the checkpoint: %v", missing, extra)
		}
		if dp != nil {
			if err := readInto(dp, byKey); err != nil {
				return err
			}
		}
	}
	if what.AlgorithmState {
		keys, vars := b.algorithmState()
		if len(vars) != len(algState) {
			return fmt.Errorf("checkpoint: the algorithm has %d state variables, the checkpoint %d (a different step rule?)", len(vars), len(algState))
		}
		saved := savedAlgorithmState(keys, algState)
		byKey := map[string]*core.Variable{}
		for i, v := range vars {
			s := saved[i]
			if s.Name != keys[i] && stateName(s.Name) != stateName(keys[i]) || s.Array.DType() != v.Value().DType() || !slices.Equal(s.Array.Shape, v.Value().Shape) {
				return fmt.Errorf("checkpoint: algorithm state %d is %s %s%v in the checkpoint but %s %s%v here (a different step rule?)",
					i, DisplayName(s.Name), s.Array.DType(), s.Array.Shape, DisplayName(keys[i]), v.Value().DType(), v.Value().Shape)
			}
			byKey[s.Name] = v // the checkpoint's name: the member's arrays are read by it
			if da == nil {
				dst, src := v.Value(), s.Array
				apply = append(apply, func() { v.BeforeWrite(); _ = dst.CopyFrom(src) })
			}
		}
		if da != nil {
			if len(byKey) != len(vars) {
				return fmt.Errorf("checkpoint: the algorithm state's names repeat in the checkpoint")
			}
			if err := readInto(da, byKey); err != nil {
				return err
			}
		}
		gens := fuel.Generators(loop.DataStream)
		if len(gens) != len(c.Iteration.StreamRNGs) {
			return fmt.Errorf("checkpoint: the data stream has %d random generators, the checkpoint %d (a different pipeline?)", len(gens), len(c.Iteration.StreamRNGs))
		}
		for i, g := range gens {
			rng, st := g.RNG, c.Iteration.StreamRNGs[i].State
			apply = append(apply, func() { rng.SetState(st) })
		}
		states := fuel.States(loop.DataStream)
		if len(states) != len(c.Iteration.StreamStates) {
			return fmt.Errorf("checkpoint: the data stream has %d parts with a state, the checkpoint %d (a different pipeline?)", len(states), len(c.Iteration.StreamStates))
		}
		for i, s := range states {
			f, err := s.RestoreState(c.Iteration.StreamStates[i])
			if err != nil {
				return fmt.Errorf("checkpoint: restoring the data stream's state: %w", err)
			}
			apply = append(apply, f)
		}
		ops := core.RandomOps(b.trainingRoots())
		if len(ops) != len(c.Iteration.RandomOps) {
			return fmt.Errorf("checkpoint: the training graph has %d random ops, the checkpoint %d (a different model?)", len(ops), len(c.Iteration.RandomOps))
		}
		for i, op := range ops {
			rng, st := op.RNG(), c.Iteration.RandomOps[i].State
			apply = append(apply, func() { rng.SetState(st) })
		}
		// After the random ops: a draw in the training graph is in both
		// lists, with the same state.
		_, sgens := b.streamGenerators()
		if len(sgens) != len(c.Iteration.RandomStreams) {
			return fmt.Errorf("checkpoint: the script made %d random draws from random streams (RandomStreams, MRG_RandomStreams, theano_rng), the checkpoint %d (a different model?)", len(sgens), len(c.Iteration.RandomStreams))
		}
		for i, g := range sgens {
			st := c.Iteration.RandomStreams[i].State
			apply = append(apply, func() { g.SetState(st) })
		}
	}
	if what.Extensions {
		f, err := extensionStates(loop, c)
		if err != nil {
			return err
		}
		apply = append(apply, func() { _ = f() })
	}
	if what.Objects {
		f, err := b.restoreObjects(c)
		if err != nil {
			return err
		}
		if f != nil && what.Log {
			// The epoch resumes below from the script scheme's and
			// transformers' attributes: they are put back first (when
			// the resume is then refused, nothing trains).
			if err := f(); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
		} else if f != nil {
			apply = append(apply, func() { _ = f() })
		}
	}
	if what.Log {
		l, err := c.Log.Decode()
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		var it fuel.EpochIterator
		if l.Status.EpochStarted {
			if what.EpochIterator && c.Iteration.EpochIterator != nil {
				rs, ok := loop.DataStream.(fuel.ResumableStream)
				if !ok {
					return fmt.Errorf("checkpoint: the data stream (%T) cannot resume an epoch", loop.DataStream)
				}
				it, err = rs.ResumeEpochIterator(*c.Iteration.EpochIterator)
				if err != nil {
					return fmt.Errorf("checkpoint: resuming the epoch: %w", err)
				}
			} else {
				// Without its position the epoch cannot continue: the
				// next one starts.
				l.Status.EpochStarted = false
			}
		}
		apply = append(apply, func() {
			*loop.Log = *l
			loop.SetEpochIterator(it)
		})
	}
	for _, v := range beforeReads {
		v.BeforeWrite()
	}
	// The members are read at once (each its own arrays): their
	// SHA-256s, each sequential, run side by side.
	errs := make([]error, len(reads))
	var wg sync.WaitGroup
	for i, r := range reads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	for _, f := range apply {
		f()
	}
	return nil
}

// Diff compares the state of b's main loop with c's, bit for bit:
// parameters, algorithm state and generators. It returns one line per
// difference (nil when they match).
func Diff(b Bindings, c *Checkpoint) ([]string, error) {
	now, err := Capture(b, c.Iteration.Callback)
	if err != nil {
		return nil, err
	}
	var diffs []string
	cmp := func(what string, a, s []Named) {
		if len(a) != len(s) {
			diffs = append(diffs, fmt.Sprintf("%s: %d arrays here, %d in the checkpoint", what, len(a), len(s)))
			return
		}
		for i := range a {
			if a[i].Name != s[i].Name || !bytes.Equal(arrayBytes(a[i].Array), arrayBytes(s[i].Array)) ||
				!slices.Equal(a[i].Array.Shape, s[i].Array.Shape) || a[i].Array.DType() != s[i].Array.DType() {
				diffs = append(diffs, fmt.Sprintf("%s %s: differs (max |difference| %g)", what, DisplayName(s[i].Name), maxAbsDiff(a[i], s[i])))
			}
		}
	}
	cmp("parameter", now.Parameters, c.Parameters)
	cmp("algorithm state", now.AlgorithmState, c.AlgorithmState)
	rngs := func(what string, a, s []RNGState) {
		if len(a) != len(s) {
			diffs = append(diffs, fmt.Sprintf("%s: %d generators here, %d in the checkpoint", what, len(a), len(s)))
			return
		}
		for i := range a {
			if a[i].State != s[i].State {
				diffs = append(diffs, fmt.Sprintf("%s %d (%s): generator state differs", what, i, s[i].Owner))
			}
		}
	}
	diffs = append(diffs, diffObjects(now, c)...)
	rngs("data stream", now.Iteration.StreamRNGs, c.Iteration.StreamRNGs)
	if !slices.EqualFunc(now.Iteration.StreamStates, c.Iteration.StreamStates, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		diffs = append(diffs, "data stream: the state of a dataset defined in the script differs")
	}
	rngs("random op", now.Iteration.RandomOps, c.Iteration.RandomOps)
	rngs("random stream draw", now.Iteration.RandomStreams, c.Iteration.RandomStreams)
	return diffs, nil
}

func maxAbsDiff(a, b Named) float64 {
	if a.Array.Size() != b.Array.Size() {
		return 0
	}
	m := 0.0
	for i := 0; i < a.Array.Size(); i++ {
		d := a.Array.Flat(i) - b.Array.Flat(i)
		if d < 0 {
			d = -d
		}
		if d > m || d != d {
			m = d
		}
	}
	return m
}

// ErrReplayReached ends a replay run once the checkpoint's iteration is
// reached (see CheckpointExtension.Replay).
var ErrReplayReached = errors.New("replay reached the checkpoint's iteration")

// extensionStates checks the saved extension states against the loop's
// extensions and returns the function that restores them.
func extensionStates(loop *mainloop.MainLoop, c *Checkpoint) (func() error, error) {
	type pending struct {
		se mainloop.StatefulExtension
		st [][]*nd.Array
	}
	var todo []pending
	n := 0
	for i, ext := range loop.Extensions {
		se, ok := ext.(mainloop.StatefulExtension)
		if !ok {
			continue
		}
		if n >= len(c.Iteration.Extensions) {
			return nil, fmt.Errorf("checkpoint: extension %s has state but the checkpoint has none for it (different extensions?)", mainloop.ExtensionName(ext))
		}
		d := c.Iteration.Extensions[n]
		n++
		if d.Index != i || d.Name != mainloop.ExtensionName(ext) {
			return nil, fmt.Errorf("checkpoint: extension %d is %s here but %s (at %d) in the checkpoint", i, mainloop.ExtensionName(ext), d.Name, d.Index)
		}
		var st [][]*nd.Array
		for _, vs := range d.Arrays {
			var arrays []*nd.Array
			for _, v := range vs {
				x, err := v.Decode()
				if err != nil {
					return nil, fmt.Errorf("checkpoint: extension %s: %w", d.Name, err)
				}
				a, _ := x.(*nd.Array)
				arrays = append(arrays, a)
			}
			st = append(st, arrays)
		}
		todo = append(todo, pending{se, st})
	}
	if n != len(c.Iteration.Extensions) {
		return nil, fmt.Errorf("checkpoint: the checkpoint holds the state of %d extensions, the main loop has %d with state", len(c.Iteration.Extensions), n)
	}
	return func() error {
		for _, p := range todo {
			if err := p.se.RestoreCheckpointState(p.st); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
		return nil
	}, nil
}
