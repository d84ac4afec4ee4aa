package algorithms

import (
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"slices"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/parallel"
)

// Microbatching makes a training algorithm cut each batch into K
// microbatches along the first axis, compute the data-dependent values of
// the step (the gradients, the values of data-dependent updates, the
// outputs monitored on training data) on each, and sum them, weighted by
// the share n_k/n of the batch each holds, along the canonical tree of
// package parallel, over the processes of Comm. The step rule then runs
// on the sums, identically on every process. With the same K the
// parameters are the same bits on any number of processes; K = 1 on one
// process is the plain algorithm.
type Microbatching struct {
	// K is the number of microbatches of each batch.
	K int
	// Comm is the job's processes (nil: this process alone). Each
	// computes a contiguous block of K/Size microbatches.
	Comm parallel.Comm
	// BatchSize, when set, says that each batch given to the algorithm
	// holds only this process's microbatches (the stream read only their
	// rows, fuel.Shard), and returns the size of the whole batch they
	// were cut from. The data are then compared across processes by the
	// stream (fuel.Shard.First), not by the algorithm.
	BatchSize func() int
}

func (m *Microbatching) active() bool {
	return m != nil && (m.K > 1 || m.Comm != nil && m.Comm.Size() > 1)
}

// microStep is the state of a microbatched algorithm: the per-microbatch
// function, the function that applies the reduced values, and buffers.
type microStep struct {
	comm parallel.Comm
	plan parallel.Plan

	// grad computes the reduced quantities of one microbatch.
	grad *core.Function
	// reduced are grad's outputs: what is summed over microbatches.
	reduced []*core.Variable
	// apply takes the sums (one input per reduced quantity) and makes the
	// updates; its outputs are the hook outputs that depend on the sums
	// only (total_gradient_norm).
	apply *core.Function
	// sources says where each of the algorithm's outputs (hooks', then
	// the finite check's) comes from: a reduced quantity or an output of
	// apply.
	sources []outSource

	// The layout of the reduced quantities in the flat vectors (found on
	// the first step), the vectors of this process's microbatches and the
	// sums.
	layout     []slot
	shapes     [][]int
	len32      int
	len64      int
	parts32    [][]float32
	parts64    [][]float64
	sum32      []float32
	sum64      []float64
	applyArgs  []*nd.Array
	checkedRun bool

	// rngs are the generators of the random ops (dropout, noise) of the
	// microbatch function, each once. At every step each draws K seeds,
	// one per microbatch, on every process; microbatch k draws its
	// numbers from a generator seeded with seed k, whichever process
	// computes it; the generators then continue from their state after
	// the seeds. So the draws do not depend on the number of processes.
	rngs  []*numpyrand.RandomState
	seeds [][]uint32
	after []numpyrand.State
}

type outSource struct {
	reduced bool
	index   int
}

type slot struct {
	f64       bool
	off, size int
}

// substitute rebuilds x with the variables of repl replaced, memoizing in
// memo.
func substitute(x *core.Variable, repl, memo map[*core.Variable]*core.Variable) (*core.Variable, error) {
	for _, a := range core.Ancestors([]*core.Variable{x}) {
		if _, ok := memo[a]; ok {
			continue
		}
		if r, ok := repl[a]; ok {
			memo[a] = r
			continue
		}
		if a.Kind() != core.KindOp {
			memo[a] = a
			continue
		}
		changed := false
		ins := make([]*core.Variable, len(a.Inputs()))
		for k, in := range a.Inputs() {
			ins[k] = memo[in]
			changed = changed || ins[k] != in
		}
		if !changed {
			memo[a] = a
			continue
		}
		w, err := core.Rebuild(a, ins)
		if err != nil {
			return nil, err
		}
		memo[a] = w
	}
	return memo[x], nil
}

// dataDependent reports whether x has an input variable among its
// ancestors that is not one of the placeholders.
func dataDependent(x *core.Variable, placeholders map[*core.Variable]bool) bool {
	for _, a := range core.Ancestors([]*core.Variable{x}) {
		if a.IsInput() && !placeholders[a] {
			return true
		}
	}
	return false
}

// initMicro compiles the two functions of a microbatched step in place of
// the fused one. outputs are the hooks' outputs then the finite check's.
func (g *UpdatesAlgorithm) initMicro(inputs, outputs []*core.Variable) error {
	m := g.Microbatching
	comm := m.Comm
	if comm == nil {
		comm = parallel.Single{}
	}
	k := m.K
	if k < 1 {
		k = comm.Size()
	}
	plan, err := parallel.NewPlan(k, comm.Size(), comm.Rank())
	if err != nil {
		return fmt.Errorf("%s: %w", g.name, err)
	}
	s := &microStep{comm: comm, plan: plan}

	var reducedIndex = map[*core.Variable]int{}
	addReduced := func(v *core.Variable) (int, error) {
		if i, ok := reducedIndex[v]; ok {
			return i, nil
		}
		if !v.DType().IsFloat() {
			return 0, fmt.Errorf("%s: %s (%s) depends on the data but is not a float, so it cannot be summed over microbatches", g.name, v, v.DType())
		}
		reducedIndex[v] = len(s.reduced)
		s.reduced = append(s.reduced, v)
		return len(s.reduced) - 1, nil
	}
	// The gradients are cut: the apply function sees their sums.
	repl := map[*core.Variable]*core.Variable{}
	for _, c := range g.cuts {
		if _, err := addReduced(c); err != nil {
			return err
		}
	}
	placeholders := map[*core.Variable]bool{}
	var holders []*core.Variable // holders[i] stands for the sum of reduced[i]
	holder := func(i int) *core.Variable {
		for len(holders) <= i {
			v := s.reduced[len(holders)]
			ph := core.NewInput(fmt.Sprintf("reduced_%d", len(holders)), v.DType(), v.NDim())
			placeholders[ph] = true
			holders = append(holders, ph)
		}
		return holders[i]
	}
	for i, c := range g.cuts {
		repl[c] = holder(i)
	}
	memo := map[*core.Variable]*core.Variable{}
	var applyUpdates []core.Update
	for _, u := range g.updates {
		v, err := substitute(u.Value, repl, memo)
		if err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		if dataDependent(v, placeholders) {
			i, err := addReduced(u.Value)
			if err != nil {
				return err
			}
			v = holder(i)
		}
		applyUpdates = append(applyUpdates, core.Update{Shared: u.Shared, Value: v})
	}
	var applyOutputs []*core.Variable
	for _, o := range outputs {
		v, err := substitute(o, repl, memo)
		if err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		if dataDependent(v, placeholders) {
			i, err := addReduced(o)
			if err != nil {
				return err
			}
			s.sources = append(s.sources, outSource{reduced: true, index: i})
			continue
		}
		s.sources = append(s.sources, outSource{index: len(applyOutputs)})
		applyOutputs = append(applyOutputs, v)
	}
	seen := map[*numpyrand.RandomState]bool{}
	for _, r := range core.RandomOps(s.reduced) {
		if g := r.RNG(); !seen[g] {
			seen[g] = true
			s.rngs = append(s.rngs, g)
			s.seeds = append(s.seeds, make([]uint32, plan.K))
		}
	}
	s.after = make([]numpyrand.State, len(s.rngs))
	applyInputs := make([]*core.Variable, len(s.reduced))
	for i := range s.reduced {
		applyInputs[i] = holder(i)
	}
	if s.grad, err = core.CompileFor(g.Device, inputs, s.reduced, nil); err != nil {
		return fmt.Errorf("%s: compiling the microbatch function: %w", g.name, err)
	}
	if s.apply, err = core.CompileFor(g.Device, applyInputs, applyOutputs, applyUpdates); err != nil {
		return fmt.Errorf("%s: compiling the update function: %w", g.name, err)
	}
	// Every process must start from the same state: compare a hash of
	// the shared variables of the step (parameters, step-rule state,
	// hyperparameters such as the learning rate).
	h := crc64.New(crc64.MakeTable(crc64.ECMA))
	roots := slices.Clone(outputs)
	for _, u := range g.updates {
		roots = append(roots, u.Shared, u.Value)
	}
	for _, v := range core.Ancestors(roots) {
		if v.IsShared() {
			hashArray(h, v.Value())
		}
	}
	if err := agree(comm, h.Sum64(), "initial parameters and algorithm state",
		"every process must run the same script with the same overrides, seed and configuration"); err != nil {
		return fmt.Errorf("%s: %w", g.name, err)
	}
	g.micro = s
	return nil
}

func hashArray(h interface{ Write([]byte) (int, error) }, a *nd.Array) {
	if a == nil {
		return
	}
	var b [8]byte
	for _, d := range a.Shape {
		binary.LittleEndian.PutUint64(b[:], uint64(d))
		h.Write(b[:])
	}
	h.Write(parallel.RawBytes(a))
}

// SameData checks that every process of comm has the same arrays (it
// compares a hash of them): the processes of a data-parallel job must
// read the same data.
func SameData(comm parallel.Comm, arrays []*nd.Array) error {
	if comm == nil || comm.Size() == 1 {
		return nil
	}
	h := crc64.New(crc64.MakeTable(crc64.ECMA))
	for _, a := range arrays {
		hashArray(h, a)
	}
	return agree(comm, h.Sum64(), "first batch", "every process must read the same data (same dataset files, same FUEL_DATA_PATH)")
}

// agree checks that every process has the same hash of what.
func agree(comm parallel.Comm, hash uint64, what, hint string) error {
	if comm.Size() == 1 {
		return nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], hash)
	all := make([]byte, 8*comm.Size())
	if err := comm.Allgather(b[:], all); err != nil {
		return fmt.Errorf("comparing the %s of the processes: %w", what, err)
	}
	for r := range comm.Size() {
		if h := binary.LittleEndian.Uint64(all[8*r:]); h != hash {
			return fmt.Errorf("process %d has other %s than process %d (hash %016x, here %016x): %s", r, what, comm.Rank(), h, hash, hint)
		}
	}
	return nil
}

// processMicro runs one microbatched step on args (ordered as g.inputs).
func (g *UpdatesAlgorithm) processMicro(args []*nd.Array) error {
	s := g.micro
	if !s.checkedRun && g.Microbatching.BatchSize == nil {
		// The same data on every process, checked once per run (every
		// process reads the whole batch and takes its microbatches).
		if err := SameData(s.comm, args); err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		s.checkedRun = true
	}
	n := -1
	for i, a := range args {
		if a.NDim() == 0 {
			return fmt.Errorf("%s: microbatches cut the batch along its first axis, but source %q is a scalar", g.name, g.inputs[i].Name)
		}
		if n >= 0 && a.Shape[0] != n {
			return fmt.Errorf("%s: microbatches cut the batch along its first axis, but the sources have %d and %d rows (source %q has shape %s)",
				g.name, n, a.Shape[0], g.inputs[i].Name, nd.ShapeString(a.Shape))
		}
		n = a.Shape[0]
	}
	base := 0 // the row of this process's first microbatch in args
	if g.Microbatching.BatchSize != nil {
		rows := n
		n = g.Microbatching.BatchSize()
		if n >= s.plan.K {
			_, offsets := parallel.Sizes(n, s.plan.K)
			if want := offsets[s.plan.Hi] - offsets[s.plan.Lo]; rows != want {
				return fmt.Errorf("%s: got %d rows of a batch of %d examples, want the %d of microbatches %d to %d", g.name, rows, n, want, s.plan.Lo, s.plan.Hi-1)
			}
			base = offsets[s.plan.Lo]
		}
	}
	if n < s.plan.K {
		return fmt.Errorf("%s: a batch of %d examples cannot be cut into %d microbatches", g.name, n, s.plan.K)
	}
	sizes, offsets := parallel.Sizes(n, s.plan.K)
	if len(s.rngs) > 0 {
		s.drawSeeds()
		defer s.restoreRNGs()
	}
	sub := make([]*nd.Array, len(args))
	for k := s.plan.Lo; k < s.plan.Hi; k++ {
		for i, g := range s.rngs {
			g.Seed(s.seeds[i][k])
		}
		for i, a := range args {
			sub[i] = a.Slice(offsets[k]-base, offsets[k+1]-base)
		}
		outs, err := s.grad.CallView(sub)
		if err != nil {
			return ExplainInputError(err, g.inputs, sub)
		}
		if s.layout == nil {
			s.setLayout(outs)
		}
		w := float64(sizes[k]) / float64(n)
		if err := s.store(k-s.plan.Lo, outs, w); err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
	}
	// The apply function and the next step draw from where the seeds
	// left the generators (random ops that do not depend on the data).
	s.restoreRNGs()
	if s.len32 > 0 {
		if err := parallel.Reduce(s.comm, s.plan, s.parts32, s.sum32); err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
	}
	if s.len64 > 0 {
		if err := parallel.Reduce(s.comm, s.plan, s.parts64, s.sum64); err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
	}
	outs, err := s.apply.Call(s.applyArgs)
	if err != nil {
		return fmt.Errorf("%s: applying the summed gradients: %w", g.name, err)
	}
	values := make([]*nd.Array, len(s.sources))
	for i, src := range s.sources {
		if src.reduced {
			values[i] = s.applyArgs[src.index].Copy()
		} else {
			values[i] = outs[src.index]
		}
	}
	off := 0
	for _, h := range g.hooks {
		n := len(h.outputs)
		if h.receive != nil {
			if err := h.receive(values[off : off+n : off+n]); err != nil {
				return err
			}
		}
		off += n
	}
	if g.finite != nil {
		return g.checkFinite(values[off])
	}
	return nil
}

// drawSeeds draws the step's K seeds from each generator of the random
// ops (numpy's randint(0, 2**32), one 32-bit draw each) and keeps the
// generators' states after them.
func (s *microStep) drawSeeds() {
	for i, g := range s.rngs {
		for k := range s.seeds[i] {
			s.seeds[i][k] = uint32(g.Randint(0, 1<<32))
		}
		s.after[i] = g.State()
	}
}

// restoreRNGs puts the generators back where the seeds left them, the
// same state on every process.
func (s *microStep) restoreRNGs() {
	for i, g := range s.rngs {
		g.SetState(s.after[i])
	}
}

// setLayout places the reduced quantities, shaped as outs, in the flat
// vectors and allocates them.
func (s *microStep) setLayout(outs []*nd.Array) {
	s.layout = make([]slot, len(outs))
	s.shapes = make([][]int, len(outs))
	for i, o := range outs {
		sz := o.Size()
		s.shapes[i] = append([]int(nil), o.Shape...)
		if o.DType() == nd.Float64 {
			s.layout[i] = slot{f64: true, off: s.len64, size: sz}
			s.len64 += sz
		} else {
			s.layout[i] = slot{off: s.len32, size: sz}
			s.len32 += sz
		}
	}
	b := s.plan.Hi - s.plan.Lo
	s.parts32 = make([][]float32, b)
	s.parts64 = make([][]float64, b)
	for j := range b {
		s.parts32[j] = make([]float32, s.len32)
		s.parts64[j] = make([]float64, s.len64)
	}
	s.sum32 = make([]float32, s.len32)
	s.sum64 = make([]float64, s.len64)
	s.applyArgs = make([]*nd.Array, len(outs))
	for i, l := range s.layout {
		// Views of the sums (a literal: FromSlice makes no 0-d array).
		if l.f64 {
			s.applyArgs[i] = &nd.Array{Shape: s.shapes[i], Data: s.sum64[l.off : l.off+l.size : l.off+l.size]}
		} else {
			s.applyArgs[i] = &nd.Array{Shape: s.shapes[i], Data: s.sum32[l.off : l.off+l.size : l.off+l.size]}
		}
	}
}

// store copies microbatch j's values into its flat vectors, times w (the
// microbatch's share of the batch; exactly 1/K for equal microbatches of
// K a power of two).
func (s *microStep) store(j int, outs []*nd.Array, w float64) error {
	for i, o := range outs {
		l := s.layout[i]
		if o.Size() != l.size {
			return fmt.Errorf("%s has shape %s in one microbatch and %s in another: only values of a fixed shape can be summed over microbatches",
				s.reduced[i], nd.ShapeString(o.Shape), nd.ShapeString(s.shapes[i]))
		}
		if l.f64 {
			dst := s.parts64[j][l.off : l.off+l.size]
			d, ok := o.Data.([]float64)
			if !ok {
				return fmt.Errorf("%s changed dtype between microbatches", s.reduced[i])
			}
			for x, v := range d[:len(dst)] {
				dst[x] = v * w
			}
		} else {
			dst := s.parts32[j][l.off : l.off+l.size]
			d, ok := o.Data.([]float32)
			if !ok {
				return fmt.Errorf("%s changed dtype between microbatches", s.reduced[i])
			}
			w32 := float32(w)
			for x, v := range d[:len(dst)] {
				dst[x] = v * w32
			}
		}
	}
	return nil
}
