package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/blocks-go/blocks/core/extensions"
	"github.com/blocks-go/blocks/core/mainloop"
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
	// PauseHalfway is WriteOptions.PauseHalfway (a test hook).
	PauseHalfway func()

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
	if err != nil {
		e.pending = err
		return
	}
	e.applyExt = applyExt
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
	row[RecordSavedTo] = append(slices.Clone(already), path)
	err := e.save(b, path, string(c.Callback))
	if err != nil {
		row[RecordSavedTo] = nil
	}
	return err
}

func (e *CheckpointExtension) save(b Bindings, path, callback string) error {
	if e.ReadOnly {
		return nil
	}
	c, err := Capture(b, callback)
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
	if e.lastIteration < 0 {
		if old, err := Read(path); err == nil {
			e.lastIteration = old.Manifest.IterationsDone
			e.owned = slices.Clone(old.Manifest.Kept)
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
	data, err := c.Encode()
	if err != nil {
		return err
	}
	if err := Write(path, data, WriteOptions{KeepLast: e.KeepLast, PrevIteration: e.lastIteration, Owned: &e.owned, PauseHalfway: e.PauseHalfway}); err != nil {
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
	return e.SimpleExtension.BeforeTraining()
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

// BeforeBatch reports a failed restore.
func (e *CheckpointExtension) BeforeBatch(b mainloop.Batch) error {
	if e.pending != nil {
		return e.pending
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
