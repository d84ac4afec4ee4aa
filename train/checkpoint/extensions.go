package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// The log records of saving and loading (Blocks' SAVED_TO and
// LOADED_FROM).
const (
	RecordSavedTo    = "saved_to"
	RecordLoadedFrom = "loaded_from"
)

// RunInfo is what the script runner knows about the run: the files and
// settings a checkpoint stores so that it can be resumed and replayed.
type RunInfo struct {
	Run     RunConfig
	Command []string
	Script  string
}

// ReplayTarget makes a Checkpoint extension compare instead of save: when
// the run reaches the target's iteration, in the callback that wrote it,
// the extension compares the state bit for bit, records the result and
// stops training with ErrReplayReached.
type ReplayTarget struct {
	Target *Checkpoint
	// Reached, Diffs are the result.
	Reached bool
	Diffs   []string
}

// ResumeSource is a checkpoint to restore when the main loop starts, held
// by the run; the first Checkpoint extension to start claims it.
type ResumeSource struct {
	Checkpoint *Checkpoint
	// Path is the file it was read from: a resumed run writes its
	// checkpoints there, whatever path the script names.
	Path string
	// ScriptPath is the path the script gave the Checkpoint that wrote
	// it (SavedTo): the Checkpoint given that path is the one redirected
	// to Path.
	ScriptPath string
	// Claimed is set by the extension that restored it.
	Claimed bool
}

// CheckpointExtension is Blocks' Checkpoint: it saves the main loop's
// state to Path, by default after training (use every_n_epochs,
// every_n_batches, ... for more).
type CheckpointExtension struct {
	*extensions.SimpleExtension
	Path string
	// KeepLast is how many checkpoints to keep: Path and KeepLast-1 older
	// ones named STEM_iterN.EXT (1: only Path).
	KeepLast int
	// SaveSeparately lists members the caller wants as separate files of
	// the archive; every part already is one, so this only checks names.
	SaveSeparately []string
	Bindings       Bindings
	// Info gives what the run knows (script, overrides, config).
	Info func() RunInfo
	// Resume, when set and not yet claimed, is restored when the main
	// loop starts, before any callback.
	Resume *ResumeSource
	// Replay, when set, turns saving into comparing.
	Replay *ReplayTarget
	// ReadOnly captures and logs as usual but writes nothing: the
	// processes other than 0 of a data-parallel job, whose state is the
	// same as process 0's.
	ReadOnly bool
	// PauseHalfway is WriteOptions.PauseHalfway (a test hook); with it a
	// save that waits for the write in flight says so on stderr.
	PauseHalfway func()
	// Sync makes every save write the file before the callback returns.
	// By default a save during training (before_training, before_epoch,
	// before_batch, after_batch, after_epoch, on_resumption) copies the
	// state and writes it in the background while training goes on;
	// saves at after_training and on_error, and the end of the main
	// loop's Run, wait for the write.
	Sync bool

	// inflight is the background write in progress, if any.
	inflight *pendingWrite
	// beforeWrite and writeSecondHalf (test hooks), when set, run in the
	// background writer before it writes and as WriteOptions'.
	beforeWrite     func()
	writeSecondHalf func(*os.File, []byte) (int, error)
	// deferMin (a test hook), when set, replaces deferredMin.
	deferMin int
	// snap holds the copies of the arrays the background writes stream,
	// reused from one save to the next (a save waits for the write in
	// flight before it copies).
	snap []*nd.Array
	// prepared is closed once prepareSnapshot has allocated snap.
	prepared chan struct{}
	// snapshots are the stats of the last background saves' copies.
	snapshots []SnapshotStats

	lastIteration int
	// owned are the older checkpoints this run (and the runs it resumed)
	// kept: the only ones it prunes.
	owned   []string
	pending error
	// applyExt restores the extensions' states at on_resumption.
	applyExt func() error
}

// SeparateMembers are the names save_separately accepts.
var SeparateMembers = []string{"log", "iteration_state", "algorithm_state", "parameters", "model"}

// CheckSaveSeparately refuses a save_separately name that is not one of
// SeparateMembers (Blocks raises AttributeError for it when saving).
func CheckSaveSeparately(names []string) error {
	for _, s := range names {
		if !slices.Contains(SeparateMembers, s) {
			return fmt.Errorf("Checkpoint: save_separately: %q is not one of %v", s, SeparateMembers)
		}
	}
	return nil
}

// NewCheckpointExtension returns the extension; triggers default to
// after_training.
func NewCheckpointExtension(path string, keepLast int, saveSeparately []string, b Bindings, triggers extensions.Triggers) (*CheckpointExtension, error) {
	if err := CheckSaveSeparately(saveSeparately); err != nil {
		return nil, err
	}
	if path == "" {
		return nil, fmt.Errorf("Checkpoint: path must not be empty")
	}
	if keepLast < 1 {
		return nil, fmt.Errorf("Checkpoint: keep_last must be at least 1, got %d", keepLast)
	}
	t := extensions.Triggers{"after_training": true}
	for k, v := range triggers {
		t[k] = v
	}
	e := &CheckpointExtension{Path: path, KeepLast: keepLast, SaveSeparately: saveSeparately, Bindings: b, lastIteration: -1}
	se, err := extensions.NewSimpleExtension("Checkpoint", e.do, t)
	if err != nil {
		return nil, fmt.Errorf("Checkpoint: %w", err)
	}
	e.SimpleExtension = se
	return e, nil
}

// SetMainLoop records the loop and, on a resumed run, restores the
// checkpoint before any callback runs; before_training and the
// algorithm's initialization then run as in Blocks after a Load.
func (e *CheckpointExtension) SetMainLoop(m *mainloop.MainLoop) {
	e.SimpleExtension.SetMainLoop(m)
	e.Bindings.Loop = m
	if e.Bindings.Objects != nil {
		e.Bindings.Objects.Seal()
	}
	if e.Resume == nil || e.Resume.Claimed || e.Replay != nil {
		return
	}
	e.Resume.Claimed = true
	c := e.Resume.Checkpoint
	what := Everything
	what.Extensions = false // after before_training, which resets them
	applyExt, err := extensionStates(m, c)
	if err == nil {
		err = Restore(e.Bindings, c, what)
	}
	var applyObjects func() error
	if err == nil {
		// The script objects' attributes are put back again at
		// on_resumption, after before_training (a monitored quantity's
		// initialize resets them).
		applyObjects, err = e.Bindings.restoreObjects(c)
	}
	if err != nil {
		e.pending = err
		return
	}
	e.applyExt = func() error {
		if applyObjects != nil {
			if err := applyObjects(); err != nil {
				return err
			}
		}
		return applyExt()
	}
	e.lastIteration = c.Manifest.IterationsDone
	e.owned = slices.Clone(c.Manifest.Kept)
	// The main loop now runs before_training (extensions set themselves
	// up: TrainingDataMonitoring adds its outputs) and initializes the
	// algorithm, as Blocks does after its Load extension.
	m.Log.Status.TrainingStarted = false
	m.Log.CurrentRow()[RecordLoadedFrom] = e.Path
}

// SetupError is the checkpoint that SetMainLoop could not restore (it does
// not fit the model): the main loop then refuses to run, before any
// extension and without the error banner (mainloop.SetupChecker).
func (e *CheckpointExtension) SetupError() error {
	if e.pending == nil {
		return nil
	}
	return fmt.Errorf("resuming from %s refused, nothing trained: %w", e.Resume.Path, e.pending)
}

func (e *CheckpointExtension) do(c extensions.Call) error {
	if e.pending != nil {
		return e.pending
	}
	b := e.Bindings
	b.Loop = c.MainLoop
	if e.Replay != nil {
		t := e.Replay.Target
		st := c.MainLoop.Log.Status
		if st.IterationsDone != t.Log.Status.IterationsDone || st.EpochsDone != t.Log.Status.EpochsDone ||
			string(c.Callback) != t.Iteration.Callback {
			return nil
		}
		diffs, err := Diff(b, t)
		if err != nil {
			return err
		}
		e.Replay.Reached, e.Replay.Diffs = true, diffs
		return ErrReplayReached
	}
	path := e.Path
	if len(c.Args) == 1 {
		if p, ok := c.Args[0].(string); ok {
			path = p
		}
	}
	row := c.MainLoop.Log.CurrentRow()
	var already []any
	if prev, ok := row[RecordSavedTo].([]any); ok {
		already = prev
	}
	// A save waits for the write in flight, whose failure it reports.
	if err := e.WaitWrites(); err != nil {
		return err
	}
	row[RecordSavedTo] = append(slices.Clone(already), path)
	err := e.save(b, path, c.Callback, row)
	if err != nil {
		row[RecordSavedTo] = nil
	}
	return err
}

// pendingWrite is a checkpoint being written in the background.
type pendingWrite struct {
	done chan struct{}
	err  error
	// row is the log row whose saved_to names the checkpoint: None when
	// the write fails.
	row mainloop.Row
	// iteration is the checkpoint's.
	iteration int
	// copy is the copy of the state it writes.
	copy *deferredCopy
}

// backgroundCallbacks are the callbacks whose saves write in the
// background: training goes on after them.
var backgroundCallbacks = map[mainloop.Callback]bool{
	mainloop.BeforeTraining: true, mainloop.BeforeEpoch: true, mainloop.BeforeBatch: true,
	mainloop.AfterBatch: true, mainloop.AfterEpoch: true, mainloop.OnResumption: true,
}

// WaitWrites waits for the checkpoint being written in the background,
// if any, and returns its error (its log row's saved_to then becomes
// None). The main loop calls it before Run returns (a
// mainloop.BackgroundWriter).
func (e *CheckpointExtension) WaitWrites() error {
	pw := e.inflight
	if pw == nil {
		return nil
	}
	select {
	case <-pw.done:
	default:
		if e.PauseHalfway != nil {
			fmt.Fprintf(os.Stderr, "checkpoint: waiting for the write in progress (iteration %d)\n", pw.iteration)
		}
		<-pw.done
	}
	e.inflight = nil
	if len(e.snapshots) == snapshotsKept {
		e.snapshots = slices.Delete(e.snapshots, 0, 1)
	}
	e.snapshots = append(e.snapshots, pw.copy.stats)
	if pw.err != nil {
		pw.row[RecordSavedTo] = nil
		return pw.err
	}
	return nil
}

// pollWrite reports the failure of a background write that has ended,
// without waiting for one in progress.
func (e *CheckpointExtension) pollWrite() error {
	if pw := e.inflight; pw != nil {
		select {
		case <-pw.done:
			return e.WaitWrites()
		default:
		}
	}
	return nil
}

func (e *CheckpointExtension) save(b Bindings, path string, callback mainloop.Callback, row mainloop.Row) error {
	if e.ReadOnly {
		return nil
	}
	c, vars, err := capture(b, string(callback))
	if err != nil {
		return err
	}
	if e.Info != nil {
		info := e.Info()
		c.Run = info.Run
		c.Manifest.Command = info.Command
		c.Manifest.Script = info.Script
	}
	if len(c.Run.Scripts) == 0 {
		// A Go program: nothing to re-run, but the state is whole.
		c.Run.Scripts = []ScriptFile{{Path: "<go>", Source: []byte{}}}
	}
	if err := Lock(path); err != nil {
		return err
	}
	if err := CheckReplaceable(path); err != nil {
		return err
	}
	if e.Sync || !backgroundCallbacks[callback] || !b.Loop.Running() {
		return e.write(path, c)
	}
	// The state as it is now: the arrays are copied (training changes
	// them in place) while training goes on, each before training first
	// writes it; the rest Capture made anew.
	dc := e.snapshot(c, vars)
	pw := &pendingWrite{done: make(chan struct{}), row: row, iteration: c.Manifest.IterationsDone, copy: dc}
	e.inflight = pw
	go func() {
		defer close(pw.done)
		if e.beforeWrite != nil {
			e.beforeWrite()
		}
		dc.finish()
		pw.err = e.write(path, c)
	}()
	return nil
}

// snapshot replaces the arrays of c (the model's own, those of vars) by
// the extension's buffers, kept from the last save when the shapes agree,
// and returns the copy into them, which is not made yet: the background
// writer makes it (deferredCopy.finish) while training goes on, and a
// write guard on each variable makes the copy of its array first when
// training is about to change it (the next step's update). Small arrays
// (hyperparameters, biases, Adam's time) are copied at once.
func (e *CheckpointExtension) snapshot(c *Checkpoint, vars []*core.Variable) *deferredCopy {
	if e.prepared != nil {
		<-e.prepared
	}
	var arrays []*Named
	for i := range c.Parameters {
		arrays = append(arrays, &c.Parameters[i])
	}
	for i := range c.AlgorithmState {
		arrays = append(arrays, &c.AlgorithmState[i])
	}
	if len(e.snap) != len(arrays) {
		e.snap = make([]*nd.Array, len(arrays))
	}
	dc := &deferredCopy{stats: SnapshotStats{Iteration: c.Manifest.IterationsDone}}
	small := deferredMin
	if e.deferMin > 0 {
		small = e.deferMin
	}
	for i, na := range arrays {
		s := e.snap[i]
		if s == nil || s.DType() != na.Array.DType() || !slices.Equal(s.Shape, na.Array.Shape) {
			s = nd.New(na.Array.DType(), na.Array.Shape...)
			e.snap[i] = s
		}
		dst, src := nd.RawBytes(s), nd.RawBytes(na.Array)
		dc.stats.Bytes += int64(len(dst))
		switch {
		case dst == nil || src == nil || len(dst) != len(src):
			_ = s.CopyFrom(na.Array)
		case len(dst) < small || i >= len(vars):
			copy(dst, src)
		default:
			a := &pendingArray{dst: dst, src: src, copied: make(chan struct{})}
			dc.arrays = append(dc.arrays, a)
			vars[i].SetWriteGuard(e, func() { dc.guard(a) })
		}
		na.Array = s
	}
	return dc
}

// deferredMin is the size from which snapshot defers an array's copy.
const deferredMin = 64 << 10

// SnapshotStats says how a background save's copy of the state was made
// (BenchmarkCheckpointStall reports them).
type SnapshotStats struct {
	// Iteration is the save's.
	Iteration int
	// Bytes is the state copied: the parameters and step-rule buffers.
	Bytes int64
	// LoopBytes is the part the training loop copied itself, in write
	// guards: training was about to change those arrays before the
	// background writer had copied them.
	LoopBytes int64
	// LoopWait is the time the training loop spent in write guards
	// (copying, or waiting for the writer's copy of an array to end).
	LoopWait time.Duration
	// Copy is the time the background writer spent copying.
	Copy time.Duration
}

// Snapshots are the copies of the latest background saves whose writes
// have ended (at most the last snapshotsKept), oldest first.
func (e *CheckpointExtension) Snapshots() []SnapshotStats { return slices.Clone(e.snapshots) }

// snapshotsKept bounds CheckpointExtension.snapshots.
const snapshotsKept = 1000

// deferredCopy is the copy of a background save's arrays into the
// extension's buffers, made off the training loop's path: the writer
// goroutine copies them in order (finish); a variable's write guard
// copies its array on the loop (guard) if training is about to write it
// before the writer has. Each array is copied once, by whoever claims it
// first; the other waits for that copy.
type deferredCopy struct {
	arrays []*pendingArray
	// stats' LoopBytes and LoopWait belong to the training loop's
	// goroutine, Copy to the writer's; the others are set before either
	// runs.
	stats SnapshotStats
}

// pendingArray is one array of a deferredCopy.
type pendingArray struct {
	dst, src []byte
	// state is 0 until claimed, 1 while copied, 2 once copied (then
	// copied is closed).
	state  atomic.Int32
	copied chan struct{}
}

// claim copies the array if no one has started to (on every processor
// with all, the training loop waiting for it), or waits for the copy in
// progress; it says whether it copied.
func (a *pendingArray) claim(all bool) bool {
	if !a.state.CompareAndSwap(0, 1) {
		<-a.copied
		return false
	}
	if all {
		var chunks [][2][]byte
		for lo := 0; lo < len(a.dst); lo += copyChunk {
			hi := min(lo+copyChunk, len(a.dst))
			chunks = append(chunks, [2][]byte{a.dst[lo:hi], a.src[lo:hi]})
		}
		parallelCopy(chunks)
	} else {
		copy(a.dst, a.src)
	}
	a.state.Store(2)
	close(a.copied)
	return true
}

// guard is the write guard of a's variable: training is about to change
// the array, so its copy must be made first.
func (dc *deferredCopy) guard(a *pendingArray) {
	if a.state.Load() == 2 {
		return
	}
	t := time.Now()
	if a.claim(true) {
		dc.stats.LoopBytes += int64(len(a.dst))
	}
	dc.stats.LoopWait += time.Since(t)
}

// finish copies the arrays the loop has not (in the background writer,
// which then writes the copy).
func (dc *deferredCopy) finish() {
	t := time.Now()
	for _, a := range dc.arrays {
		a.claim(false)
	}
	dc.stats.Copy = time.Since(t)
}

// copyChunk is the unit of a parallel copy.
const copyChunk = 1 << 20

// parallelCopy copies the chunks (dst, src) on every processor: the copy
// a write guard makes while the training loop waits for it.
func parallelCopy(chunks [][2][]byte) {
	workers := min(runtime.GOMAXPROCS(0), len(chunks))
	if workers <= 1 {
		for _, c := range chunks {
			copy(c[0], c[1])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(chunks) {
				return
			}
			copy(chunks[i][0], chunks[i][1])
		}
	}
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// write writes c at path (in the background: the extension's fields it
// uses belong to the write in flight until WaitWrites returns).
func (e *CheckpointExtension) write(path string, c *Checkpoint) error {
	if e.lastIteration < 0 {
		if old, err := readManifest(path); err == nil {
			e.lastIteration = old.IterationsDone
			e.owned = slices.Clone(old.Kept)
		}
	}
	// The manifest lists the kept files as they will be after this write.
	kept := slices.Clone(e.owned)
	if e.KeepLast > 1 && e.lastIteration >= 0 {
		if _, err := os.Stat(path); err == nil {
			if k := filepath.Base(KeptName(path, e.lastIteration)); !slices.Contains(kept, k) {
				kept = append(kept, k)
			}
		}
	}
	if n := e.KeepLast - 1; len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	c.Manifest.Kept = kept
	if err := WriteFile(path, c, WriteOptions{KeepLast: e.KeepLast, PrevIteration: e.lastIteration, Owned: &e.owned, PauseHalfway: e.PauseHalfway,
		writeSecondHalf: e.writeSecondHalf}); err != nil {
		return err
	}
	e.lastIteration = c.Manifest.IterationsDone
	return nil
}

// The callbacks report a failed restore before doing anything else.
func (e *CheckpointExtension) BeforeTraining() error {
	if e.pending != nil {
		return e.pending
	}
	e.prepareSnapshot()
	return e.SimpleExtension.BeforeTraining()
}

// prepareSnapshot allocates the buffers of the background saves' copy on
// a goroutine, touching every page, so that the first save during
// training does not wait for fresh memory (snapshot waits for it).
func (e *CheckpointExtension) prepareSnapshot() {
	if e.Sync || e.ReadOnly || e.Replay != nil || e.Bindings.Loop == nil || e.prepared != nil {
		return
	}
	background := false
	for _, c := range e.Conditions() {
		background = background || backgroundCallbacks[c.Callback] || c.Callback == extensions.TriggerBeforeFirstEpoch
	}
	if !background {
		return // only after training: nothing to copy
	}
	_, ps, err := e.Bindings.namedParameters()
	if err != nil {
		return
	}
	_, avars := e.Bindings.algorithmState()
	type like struct {
		dt    nd.DType
		shape []int
	}
	var shapes []like
	for _, v := range append(ps, avars...) {
		shapes = append(shapes, like{v.Value().DType(), slices.Clone(v.Value().Shape)})
	}
	done := make(chan struct{})
	e.prepared = done
	go func() {
		defer close(done)
		snap := make([]*nd.Array, len(shapes))
		for i, a := range shapes {
			snap[i] = nd.New(a.dt, a.shape...)
			if b := nd.RawBytes(snap[i]); b != nil {
				for j := 0; j < len(b); j += 4096 {
					b[j] = 0
				}
			}
		}
		e.snap = snap
	}()
}

// OnResumption reports a failed restore, and restores the state of the
// extensions that keep one (their before_training has reset it).
func (e *CheckpointExtension) OnResumption() error {
	if e.pending != nil {
		return e.pending
	}
	if f := e.applyExt; f != nil {
		e.applyExt = nil
		if err := f(); err != nil {
			return err
		}
	}
	return e.SimpleExtension.OnResumption()
}

// BeforeEpoch reports a failed restore.
func (e *CheckpointExtension) BeforeEpoch() error {
	if e.pending != nil {
		return e.pending
	}
	return e.SimpleExtension.BeforeEpoch()
}

// BeforeBatch reports a failed restore, and a background write that
// failed.
func (e *CheckpointExtension) BeforeBatch(b mainloop.Batch) error {
	if e.pending != nil {
		return e.pending
	}
	if err := e.pollWrite(); err != nil {
		return err
	}
	return e.SimpleExtension.BeforeBatch(b)
}

// LoadExtension is Blocks' Load: before training it reads a checkpoint
// (only data: nothing in it runs) and restores the parameters, with
// LoadIterationState the algorithm state and generators too, and with
// LoadLog the log (and, with both, the position in the epoch).
type LoadExtension struct {
	*extensions.SimpleExtension
	Path               string
	LoadIterationState bool
	LoadLog            bool
	Bindings           Bindings
}

// NewLoadExtension returns the extension; triggers default to
// before_training.
func NewLoadExtension(path string, loadIterationState, loadLog bool, b Bindings, triggers extensions.Triggers) (*LoadExtension, error) {
	t := extensions.Triggers{"before_training": true}
	for k, v := range triggers {
		t[k] = v
	}
	e := &LoadExtension{Path: path, LoadIterationState: loadIterationState, LoadLog: loadLog, Bindings: b}
	se, err := extensions.NewSimpleExtension("Load", e.do, t)
	if err != nil {
		return nil, fmt.Errorf("Load: %w", err)
	}
	e.SimpleExtension = se
	return e, nil
}

func (e *LoadExtension) do(c extensions.Call) error {
	if _, err := os.Stat(e.Path); errors.Is(err, fs.ErrNotExist) {
		// Blocks warns and trains on from the start.
		c.MainLoop.Warn("blocks.extensions.saveload", "No dump found")
		return nil
	} else if err != nil {
		return fmt.Errorf("Load: %w", err)
	}
	ck, err := Read(e.Path)
	if err != nil {
		return fmt.Errorf("Load: %w", err)
	}
	b := e.Bindings
	b.Loop = c.MainLoop
	what := What{Parameters: true, AlgorithmState: e.LoadIterationState, Log: e.LoadLog,
		EpochIterator: e.LoadIterationState && e.LoadLog}
	if err := Restore(b, ck, what); err != nil {
		return fmt.Errorf("Load: %w", err)
	}
	c.MainLoop.Log.CurrentRow()[RecordLoadedFrom] = e.Path
	return nil
}

// ParametersOf returns the parameters of c as a map from key to array
// (for Go callers).
func ParametersOf(c *Checkpoint) map[string]*Named {
	m := map[string]*Named{}
	for i := range c.Parameters {
		m[c.Parameters[i].Name] = &c.Parameters[i]
	}
	return m
}

// SavedTo is the path the run that wrote c named for it: the last
// saved_to record of its log ("" when none is found). A resumed run
// writes to the file resumed instead of this path.
func (c *Checkpoint) SavedTo() string {
	for i := len(c.Log.Rows) - 1; i >= 0; i-- {
		v, ok := c.Log.Rows[i].Records[RecordSavedTo]
		if !ok {
			continue
		}
		d, err := v.Decode()
		if err != nil {
			continue
		}
		if l, ok := d.([]any); ok {
			for j := len(l) - 1; j >= 0; j-- {
				if s, ok := l[j].(string); ok {
					return s
				}
			}
		}
	}
	return ""
}

// ScriptsSHA256 is the SHA-256 of the scripts a checkpoint stores (their
// paths and sources, main script first), in hex: what a user approves
// after reading them with inspect, and checks with resume
// --expect-sha256.
func (c *Checkpoint) ScriptsSHA256() string {
	h := sha256.New()
	for _, s := range c.Run.Scripts {
		fmt.Fprintf(h, "%d:%s\x00%d:", len(s.Path), s.Path, len(s.Source))
		h.Write(s.Source)
	}
	return hex.EncodeToString(h.Sum(nil))
}
