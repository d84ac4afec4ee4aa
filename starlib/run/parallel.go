package run

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/parallel"
	"github.com/blocks-go/blocks/train/plot"
)

// Parallel makes the main loops of a run data-parallel (docs/
// distributed.md): every process of Comm runs the same script; the
// algorithm cuts each batch into microbatches and sums their gradients in
// one canonical order over the processes; only process 0 writes
// (checkpoints, plots, printing: the caller discards the others' output).
type Parallel struct {
	// Comm is the job's processes (parallel.World()).
	Comm parallel.Comm
	// Microbatches is the number of microbatches of each batch; 0 means
	// the tunable microbatches when the script declares one
	// (config(microbatches=4)), else the number of processes.
	Microbatches int

	mu      sync.Mutex
	loops   []*mainloop.MainLoop
	sharded []bool // per loop: whether it reads only its microbatches
}

// Sharded reports, per main loop of the run, whether each process reads
// only its own microbatches from the data stream (fuel.Sharder) rather
// than whole batches.
func (p *Parallel) Sharded() []bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sharded)
}

// Training sums, over the run's main loops, the training steps done in
// this process, the time they took (Profile.Train: the steps'
// computation and exchanges) and the time spent reading their batches
// (Profile.ReadData).
func (p *Parallel) Training() (steps int, train, read time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.loops {
		steps += m.Log.Status.IterationsDone
		train += m.Profile.Train
		read += m.Profile.ReadData
	}
	return steps, train, read
}

// TunableMicrobatches is the name of the script tunable that sets the
// number of microbatches when --microbatches is not given.
const TunableMicrobatches = "microbatches"

// microbatches resolves the number of microbatches of the run: 0 when the
// run is not microbatched at all (one process, no setting).
func microbatches(thread *starlark.Thread) (int, parallel.Comm, error) {
	s := stateOf(thread)
	if s == nil {
		return 0, nil, nil
	}
	var comm parallel.Comm = parallel.Single{}
	k := 0
	if p := ParallelOf(thread); p != nil {
		if p.Comm != nil {
			comm = p.Comm
		}
		k = p.Microbatches
	}
	if k == 0 {
		if v, ok := starlib.TunableValue(thread, TunableMicrobatches); ok {
			n, err := starlark.AsInt32(starlib.IndexValue(v))
			if err != nil || n < 1 {
				return 0, nil, fmt.Errorf("the tunable %s must be a positive int, got %s", TunableMicrobatches, v)
			}
			k = n
		}
	}
	if k == 0 {
		k = comm.Size()
	}
	s.mu.Lock()
	s.microbatches = k
	s.mu.Unlock()
	return k, comm, nil
}

// ConfigureLoopParallel prepares a main loop for a microbatched or
// data-parallel run: the microbatching of its algorithm ua, and on
// processes other than 0 no writing (checkpoints are captured for the log
// but not written, plots not drawn, the progress bar discarded, no log
// backend).
func ConfigureLoopParallel(thread *starlark.Thread, ua *algorithms.UpdatesAlgorithm, ml *mainloop.MainLoop) error {
	k, comm, err := microbatches(thread)
	if err != nil || comm == nil {
		return err
	}
	p := ParallelOf(thread)
	if p != nil {
		p.mu.Lock()
		p.loops = append(p.loops, ml)
		p.sharded = append(p.sharded, false)
		p.mu.Unlock()
	}
	if k > 1 || comm.Size() > 1 {
		ua.Microbatching = &algorithms.Microbatching{K: k, Comm: comm}
		if shardStream(ml, ua.Microbatching) {
			if p != nil {
				p.mu.Lock()
				p.sharded[len(p.sharded)-1] = true
				p.mu.Unlock()
			}
		}
	}
	if comm.Size() > 1 {
		// A signal that reached one process stops all after the same batch.
		ml.Agree = comm.AllreduceMax
	}
	for _, e := range ml.Extensions {
		if d, ok := e.(*extensions.DataStreamMonitoring); ok {
			d.Evaluator.SetComm(comm)
		}
	}
	if comm.Rank() == 0 {
		return nil
	}
	ml.LogBackend = nil
	for _, e := range ml.Extensions {
		switch x := e.(type) {
		case *plot.Plot:
			x.Off = true
		case *checkpoint.CheckpointExtension:
			x.ReadOnly = true
		case *extensions.ProgressBar:
			x.Out = io.Discard
		}
	}
	return nil
}

// shardStream makes the main loop of a job of several processes read only
// this process's microbatches of each batch, when its data stream can (a
// DataStream with a batch scheme under row-by-row transformers, see
// fuel.Sharder); otherwise every process reads whole batches and keeps
// its microbatches. Either way the iteration state is the job's: every
// process walks the whole scheme.
func shardStream(ml *mainloop.MainLoop, mb *algorithms.Microbatching) bool {
	comm := mb.Comm
	if comm == nil || comm.Size() == 1 {
		return false
	}
	plan, err := parallel.NewPlan(mb.K, comm.Size(), comm.Rank())
	if err != nil {
		return false // the algorithm's Initialize says why
	}
	n := 0
	shard := &fuel.Shard{
		Rows: func(batch int) (int, int) {
			_, offsets := parallel.Sizes(batch, plan.K)
			return offsets[plan.Lo], offsets[plan.Hi]
		},
		Batch: func(batch int) { n = batch },
		First: func(whole []*nd.Array) error { return algorithms.SameData(comm, whole) },
	}
	s, ok := fuel.ShardStream(ml.DataStream, shard)
	if !ok {
		return false
	}
	ml.DataStream = s
	mb.BatchSize = func() int { return n }
	return true
}
