package checkpoint

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/extensions"
)

// The format this package writes and the only one it reads.
const (
	FormatName    = "blocks-go checkpoint"
	FormatVersion = 1
)

// ProjectVersion is the project's version, recorded in every manifest
// and printed by blocks-repl version. A build may set it at link time:
// -ldflags "-X github.com/blocks-go/blocks/train/checkpoint.ProjectVersion=...".
var ProjectVersion = "0.1.0-dev"

// Member names of the tar file.
const (
	MemberManifest       = "manifest.json"
	MemberConfig         = "config.json"
	MemberParameters     = "_parameters"
	MemberAlgorithmState = "algorithm_state.npz"
	MemberIterationState = "iteration_state.json"
	MemberLog            = "log.json"
	MemberChecksum       = "manifest.sha256"
	scriptPrefix         = "scripts/"
)

// Member describes one member of the tar file in the manifest.
type Member struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Manifest is the checkpoint's table of contents.
type Manifest struct {
	Format         string   `json:"format"`
	FormatVersion  int      `json:"format_version"`
	ProjectVersion string   `json:"project_version"`
	Created        string   `json:"created"`
	Command        []string `json:"command"`
	// Script is the path of the main script as it was run.
	Script         string   `json:"script"`
	IterationsDone int      `json:"iterations_done"`
	EpochsDone     int      `json:"epochs_done"`
	Members        []Member `json:"members"`
	// Kept are the older checkpoints (base names, beside this one, oldest
	// first) the run wrote with keep_last: the only files it may prune.
	Kept []string `json:"kept,omitempty"`
}

// ScriptFile is a script or a file it loaded, with the absolute path it
// had when the checkpoint's run read it.
type ScriptFile struct {
	Path   string `json:"path"`
	Member string `json:"member"`
	Source []byte `json:"-"`
}

// RunConfig is how the script was run: its overrides, its resolved
// tunables, Fuel's default_seed and floatX, and its files (main first).
type RunConfig struct {
	Overrides   map[string]string `json:"overrides"`
	Config      map[string]Value  `json:"config,omitempty"`
	ConfigOrder []string          `json:"config_order,omitempty"`
	DefaultSeed int               `json:"default_seed"`
	FloatX      string            `json:"floatX"`
	Scripts     []ScriptFile      `json:"scripts"`
	// Microbatches is the number of microbatches each batch was cut into
	// (docs/distributed.md); 0 or 1: none. A resume continues with it.
	Microbatches int `json:"microbatches,omitempty"`
	// Added is the Checkpoint the command line added to the script's
	// first main loop (blocks-repl run --checkpoint); resume and replay
	// add it again.
	Added *AddedCheckpoint `json:"added_checkpoint,omitempty"`
}

// AddedCheckpoint is a Checkpoint extension given on the command line
// rather than in the script: its path and triggers (after_training
// always; every_n_epochs, every_n_batches when not 0).
type AddedCheckpoint struct {
	Path          string `json:"path"`
	EveryNEpochs  int    `json:"every_n_epochs,omitempty"`
	EveryNBatches int    `json:"every_n_batches,omitempty"`
}

// Triggers are the extension's triggers other than after_training.
func (a *AddedCheckpoint) Triggers() extensions.Triggers {
	t := extensions.Triggers{}
	if a.EveryNEpochs > 0 {
		t[extensions.TriggerEveryNEpochs] = a.EveryNEpochs
	}
	if a.EveryNBatches > 0 {
		t[extensions.TriggerEveryNBatches] = a.EveryNBatches
	}
	return t
}

// RNGState is the state of one generator and what it belongs to.
type RNGState struct {
	Owner string          `json:"owner"`
	State numpyrand.State `json:"state"`
}

// IterationState is where training stands: the callback that wrote the
// checkpoint, the epoch iterator's position (mid-epoch), and the
// generators of the data pipeline and of the graph's random ops.
type IterationState struct {
	Callback      string              `json:"callback"`
	EpochIterator *fuel.IteratorState `json:"epoch_iterator,omitempty"`
	StreamRNGs    []RNGState          `json:"stream_rngs"`
	RandomOps     []RNGState          `json:"random_ops"`
	// RandomStreams are the generators of every draw of the run's random
	// streams (Bindings.RandomStreams), in order.
	RandomStreams []RNGState `json:"random_streams,omitempty"`
	// Extensions are the states of extensions that keep one between
	// callbacks (TrainingDataMonitoring's partial aggregates).
	Extensions []ExtensionData `json:"extensions,omitempty"`
	// StreamStates are the states of the data pipeline's parts that keep
	// one from epoch to epoch (fuel.Stateful), in the order met.
	StreamStates []json.RawMessage `json:"stream_states,omitempty"`
}

// ExtensionData is the state of the extension at Index of the main loop.
type ExtensionData struct {
	Index  int       `json:"index"`
	Name   string    `json:"name"`
	Arrays [][]Value `json:"arrays"`
}

// Checkpoint is a checkpoint in memory.
type Checkpoint struct {
	Manifest       Manifest
	Run            RunConfig
	Parameters     []Named
	AlgorithmState []Named
	Iteration      IterationState
	Log            LogData
	// ScriptObjects is the member script_objects.json (ObjectStates);
	// nil when the run has no script objects to save.
	ScriptObjects []byte
	// deferred: the .npz members ReadDeferred left in the file, by
	// member name (their arrays are not in Parameters and
	// AlgorithmState).
	deferred map[string]*deferredNPZ
}

// MainScript is the main script file.
func (c *Checkpoint) MainScript() ScriptFile {
	if len(c.Run.Scripts) == 0 {
		return ScriptFile{}
	}
	return c.Run.Scripts[0]
}

// Files maps the absolute path of every stored script to its source.
func (c *Checkpoint) Files() map[string][]byte {
	m := map[string][]byte{}
	for _, s := range c.Run.Scripts {
		m[s.Path] = s.Source
	}
	return m
}

type member struct {
	name string
	data []byte
}

// ErrCorrupt is wrapped by every error about a file that is not a whole,
// untouched checkpoint of this format.
var ErrCorrupt = errors.New("not a valid checkpoint")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Decode reads a tar file written by Encode. It checks everything before
// returning anything: the members and their order, the manifest's own
// checksum, every member's size and SHA-256, the format and its version,
// and that every member parses. A truncated, tampered or foreign file is
// an error wrapping ErrCorrupt.
func Decode(data []byte) (*Checkpoint, error) {
	return decode(bytes.NewReader(data), int64(len(data)))
}

// readMember is a member as the first pass read it: its bytes (all but
// the .npz members, which stay in the file), where it lies and its
// SHA-256.
type readMember struct {
	name      string
	data      []byte
	off, size int64
	sum       [sha256.Size]byte
	// hashLater: the member was not read; sum is the manifest's, checked
	// when its arrays are read (ReadDeferred).
	hashLater bool
}

// streamed are the members decode leaves in the file: read twice (their
// SHA-256, then their arrays), never held whole.
var streamed = map[string]bool{MemberParameters: true, MemberAlgorithmState: true}

// decode reads a checkpoint of size bytes from r in two passes: the
// first checks the tar structure, the manifest and every member's
// SHA-256, holding only the small members; the second decodes the
// arrays of the .npz members from the file, straight into their arrays.
func decode(r io.ReaderAt, size int64) (*Checkpoint, error) {
	man, byName, err := verify(r, size, false)
	if err != nil {
		return nil, err
	}
	return parse(r, *man, byName)
}

// verify is decode's first pass: the tar structure, the manifest and its
// checksum, and every member's size and SHA-256. It holds the small
// members only. With deferHash the .npz members are not read: their
// SHA-256 is the manifest's, checked as their arrays are read
// (ReadDeferred).
func verify(r io.ReaderAt, size int64, deferHash bool) (*Manifest, map[string]readMember, error) {
	sr := io.NewSectionReader(r, 0, size)
	tr := tar.NewReader(sr)
	var members []readMember
	// No member is read before its size is known to be possible: at most
	// what the file holds, and, once the manifest is read, exactly what
	// the manifest says. A bomb (a sparse member declaring gigabytes of
	// holes, a header claiming more than the file) is refused unread.
	var mp *Manifest
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, corrupt("reading the tar archive (truncated?): %v", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, nil, corrupt("member %q is not a regular file", hdr.Name)
		}
		for k := range hdr.PAXRecords {
			if strings.HasPrefix(k, "GNU.sparse.") {
				return nil, nil, corrupt("member %q is a sparse file (a checkpoint has none)", hdr.Name)
			}
		}
		if hdr.Size < 0 || hdr.Size > size {
			return nil, nil, corrupt("member %q declares %d bytes, more than the whole file holds (%d): the file is truncated or forged", hdr.Name, hdr.Size, size)
		}
		if mp != nil && hdr.Name != MemberChecksum {
			i := len(members) - 1 // the manifest is members[0]
			if i >= len(mp.Members) {
				return nil, nil, corrupt("member %q is not in the manifest (it lists %d members)", hdr.Name, len(mp.Members))
			}
			if want := mp.Members[i]; hdr.Name != want.Name || hdr.Size != want.Size {
				return nil, nil, corrupt("member %d is %q of %d bytes, the manifest says %q of %d", i+1, hdr.Name, hdr.Size, want.Name, want.Size)
			}
		}
		if mp != nil && hdr.Name == MemberChecksum && hdr.Size > 1024 {
			return nil, nil, corrupt("member %s has %d bytes (a checksum has 64)", hdr.Name, hdr.Size)
		}
		off, _ := sr.Seek(0, io.SeekCurrent)
		m := readMember{name: hdr.Name, off: off, size: hdr.Size}
		h := sha256.New()
		if deferHash && streamed[hdr.Name] && len(members) > 0 {
			m.hashLater = true
		} else if streamed[hdr.Name] && len(members) > 0 {
			if _, err := io.CopyN(h, tr, hdr.Size); err != nil {
				return nil, nil, corrupt("reading member %q (truncated?): %v", hdr.Name, err)
			}
		} else {
			m.data = make([]byte, hdr.Size)
			if _, err := io.ReadFull(tr, m.data); err != nil {
				return nil, nil, corrupt("reading member %q (truncated?): %v", hdr.Name, err)
			}
			h.Write(m.data)
		}
		h.Sum(m.sum[:0])
		members = append(members, m)
		if len(members) == 1 && hdr.Name == MemberManifest {
			mp = new(Manifest)
			if err := json.Unmarshal(m.data, mp); err != nil {
				return nil, nil, corrupt("the manifest is not valid JSON: %v", err)
			}
		}
	}
	if len(members) == 0 {
		return nil, nil, corrupt("the file holds no tar members (empty or truncated)")
	}
	if members[0].name != MemberManifest {
		return nil, nil, corrupt("the first member is %q, not %s", members[0].name, MemberManifest)
	}
	last := members[len(members)-1]
	if last.name != MemberChecksum {
		return nil, nil, corrupt("the last member is %q, not %s: the file is truncated", last.name, MemberChecksum)
	}
	var man Manifest
	if err := json.Unmarshal(members[0].data, &man); err != nil {
		return nil, nil, corrupt("the manifest is not valid JSON: %v", err)
	}
	if man.Format != FormatName {
		return nil, nil, corrupt("the manifest's format is %q, not %q", man.Format, FormatName)
	}
	if man.FormatVersion != FormatVersion {
		return nil, nil, fmt.Errorf("%w: the checkpoint has format version %d, written by blocks-repl %s; this blocks-repl (%s) reads version %d only",
			ErrCorrupt, man.FormatVersion, man.ProjectVersion, ProjectVersion, FormatVersion)
	}
	if strings.TrimSpace(string(last.data)) != hex.EncodeToString(members[0].sum[:]) {
		return nil, nil, corrupt("the manifest does not match its checksum (the file was modified)")
	}
	body := members[1 : len(members)-1]
	if len(body) != len(man.Members) {
		return nil, nil, corrupt("the manifest lists %d members, the file holds %d", len(man.Members), len(body))
	}
	byName := map[string]readMember{}
	for i, mb := range body {
		want := man.Members[i]
		if mb.name != want.Name {
			return nil, nil, corrupt("member %d is %q, the manifest says %q", i+1, mb.name, want.Name)
		}
		if mb.size != want.Size {
			return nil, nil, corrupt("member %s has %d bytes, the manifest says %d", mb.name, mb.size, want.Size)
		}
		if mb.hashLater {
			if sum, err := hex.DecodeString(want.SHA256); err != nil || len(sum) != sha256.Size {
				return nil, nil, corrupt("member %s has SHA-256 %q in the manifest", mb.name, want.SHA256)
			} else {
				copy(mb.sum[:], sum)
			}
		} else if hex.EncodeToString(mb.sum[:]) != want.SHA256 {
			return nil, nil, corrupt("member %s does not match its SHA-256 in the manifest (the file was modified)", mb.name)
		}
		byName[mb.name] = mb
	}
	return &man, byName, nil
}

// parse is decode's second pass: the members' contents, the arrays read
// from r.
func parse(r io.ReaderAt, man Manifest, byName map[string]readMember) (*Checkpoint, error) {
	need := func(name string) ([]byte, error) {
		mb, ok := byName[name]
		if !ok {
			return nil, corrupt("member %s is missing", name)
		}
		return mb.data, nil
	}
	npz := func(name string) ([]Named, error) {
		mb, ok := byName[name]
		if !ok {
			return nil, corrupt("member %s is missing", name)
		}
		var arrays []Named
		var err error
		if mb.data != nil {
			arrays, err = DecodeNPZ(mb.data)
		} else {
			arrays, err = decodeNPZ(io.NewSectionReader(r, mb.off, mb.size), mb.size)
		}
		if err != nil {
			return nil, corrupt("%s: %v", name, err)
		}
		return arrays, nil
	}
	c := &Checkpoint{Manifest: man}
	b, err := need(MemberConfig)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &c.Run); err != nil {
		return nil, corrupt("%s: %v", MemberConfig, err)
	}
	if len(c.Run.Scripts) == 0 {
		return nil, corrupt("the checkpoint holds no script")
	}
	for i := range c.Run.Scripts {
		s := &c.Run.Scripts[i]
		if s.Source, err = need(s.Member); err != nil {
			return nil, err
		}
	}
	if c.Parameters, err = npz(MemberParameters); err != nil {
		return nil, err
	}
	if c.AlgorithmState, err = npz(MemberAlgorithmState); err != nil {
		return nil, err
	}
	if b, err = need(MemberIterationState); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &c.Iteration); err != nil {
		return nil, corrupt("%s: %v", MemberIterationState, err)
	}
	if err := checkKeyLengths(b); err != nil {
		return nil, corrupt("%s: %v", MemberIterationState, err)
	}
	for _, r := range slices.Concat(c.Iteration.StreamRNGs, c.Iteration.RandomOps, c.Iteration.RandomStreams) {
		if r.State.Pos < 0 || r.State.Pos > 624 {
			return nil, corrupt("%s: generator %s has position %d", MemberIterationState, r.Owner, r.State.Pos)
		}
	}
	if mb, ok := byName[MemberScriptObjects]; ok {
		if !json.Valid(mb.data) {
			return nil, corrupt("%s: not JSON", MemberScriptObjects)
		}
		c.ScriptObjects = mb.data
	}
	if b, err = need(MemberLog); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &c.Log); err != nil {
		return nil, corrupt("%s: %v", MemberLog, err)
	}
	if _, err := c.Log.Decode(); err != nil {
		return nil, corrupt("%s: %v", MemberLog, err)
	}
	return c, nil
}

// Read reads and checks the checkpoint at path (see Decode) as a
// stream: the arrays are read into their memory, the file is never held
// whole.
func Read(path string) (*Checkpoint, error) {
	f, size, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := decode(f, size)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

// openChecked opens the checkpoint at path for reading, with its size,
// once its head is checked: a foreign tar file (or one far larger than
// its manifest says) is refused after its first member, before it is
// read whole.
func openChecked(path string) (*os.File, int64, error) {
	if err := checkHead(path); err != nil {
		if errors.Is(err, ErrCorrupt) {
			return nil, 0, fmt.Errorf("checkpoint %s: %w", path, err)
		}
		return nil, 0, fmt.Errorf("checkpoint: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("checkpoint: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("checkpoint: %w", err)
	}
	return f, fi.Size(), nil
}

// readManifest is the manifest of the checkpoint at path, once the whole
// file is checked (Decode's checks but the parsing of the members).
func readManifest(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	man, _, err := verify(f, fi.Size(), false)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return man, nil
}

// WriteOptions are Write's options.
type WriteOptions struct {
	// KeepLast is how many checkpoints to keep: path and KeepLast-1 older
	// ones (0 or 1: only path).
	KeepLast int
	// PrevIteration is the iteration of the checkpoint path holds now,
	// which names it when it is kept.
	PrevIteration int
	// Owned, when not nil, lists the older checkpoints the run kept
	// (base names, oldest first): only those are pruned or replaced, and
	// the one kept now is appended to it; a file of a kept name that the
	// run did not write is never touched (an error says so).
	Owned *[]string
	// PauseHalfway (a test hook), when not nil, is called half way
	// through the temporary file, so that a test can kill the process
	// during a checkpoint write; the writer says so on stderr first.
	PauseHalfway func()
	// writeSecondHalf (a test hook), when not nil, writes the second half
	// of the temporary file in place of (*os.File).Write, so that a test
	// can inject a full disk.
	writeSecondHalf func(*os.File, []byte) (int, error)
}

// Write saves data at path atomically: it writes a temporary file in the
// same directory, syncs it, renames it over path and syncs the directory,
// so that path always holds a whole checkpoint (the previous one after a
// crash). With KeepLast > 1 the checkpoint path held so far is kept
// beside it as STEM_iterN.EXT (N its iteration, PrevIteration; a hard
// link, or a copy where links are not supported) and only the newest
// KeepLast-1 of those are kept. Stale temporary files of an interrupted
// write are removed.
//
// Temporary files are named .NAME.tmp-PID-*: only those of processes that
// no longer run are removed, never one another live process is writing.
func Write(path string, data []byte, o WriteOptions) error {
	return writeAtomic(path, int64(len(data)), o, func(w WriterAt) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFile streams c into path (the bytes of Encode, never held in
// memory whole) atomically, as Write does.
func WriteFile(path string, c *Checkpoint, o WriteOptions) error {
	p, err := c.plan()
	if err != nil {
		return err
	}
	return writeAtomic(path, p.Size, o, p.writeTo)
}

// tempWriter writes the temporary file; the test hooks act half way
// through its size.
type tempWriter struct {
	f       *os.File
	n, half int64
	// flushed is where the last writeback started.
	flushed    int64
	passed     bool
	pause      func()
	secondHalf func(*os.File, []byte) (int, error)
}

func (w *tempWriter) Write(p []byte) (int, error) {
	if w.passed || w.n+int64(len(p)) <= w.half {
		write := (*os.File).Write
		if w.passed && w.secondHalf != nil {
			write = w.secondHalf
		}
		n, err := write(w.f, p)
		w.n += int64(n)
		if w.n-w.flushed >= writebackChunk {
			startWriteback(w.f, w.flushed, w.n-w.flushed)
			w.flushed = w.n
		}
		return n, err
	}
	k := int(w.half - w.n)
	n, err := w.f.Write(p[:k])
	w.n += int64(n)
	if err != nil {
		return n, err
	}
	w.passed = true
	if w.pause != nil {
		fmt.Fprintln(os.Stderr, "checkpoint: write in progress")
		w.pause()
	}
	m, err := w.Write(p[k:])
	return n + m, err
}

// writebackChunk: the temporary file's writeback starts every this many
// bytes.
const writebackChunk = 8 << 20

func (w *tempWriter) WriteAt(p []byte, off int64) (int, error) { return w.f.WriteAt(p, off) }

// startTail starts the writeback of what is written and not yet handed
// to the disk (the stream's end, while the last digests are computed).
func (w *tempWriter) startTail() {
	if w.n > w.flushed {
		startWriteback(w.f, w.flushed, w.n-w.flushed)
		w.flushed = w.n
	}
}

// writeAtomic is Write with fill writing the temporary file (size bytes,
// about: the test hooks act half way).
func writeAtomic(path string, size int64, o WriteOptions, fill func(WriterAt) error) error {
	keepLast, prevIteration, owned := o.KeepLast, o.PrevIteration, o.Owned
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	prefix := tmpPrefix(base)
	if old, _ := filepath.Glob(filepath.Join(dir, prefix+"*")); len(old) > 0 {
		for _, o := range old {
			if staleTemp(strings.TrimPrefix(filepath.Base(o), prefix)) {
				_ = os.Remove(o)
			}
		}
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s%d-*", prefix, os.Getpid()))
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	tmp := f.Name()
	_ = f.Chmod(0o644)
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("checkpoint: writing %s: %w", path, err)
	}
	w := &tempWriter{f: f, half: size / 2, pause: o.PauseHalfway, secondHalf: o.writeSecondHalf}
	if err := fill(w); err != nil {
		return fail(err)
	}
	if !w.passed && w.pause != nil {
		fmt.Fprintln(os.Stderr, "checkpoint: write in progress")
		w.pause()
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("checkpoint: writing %s: %w", path, err)
	}
	if keepLast > 1 && prevIteration >= 0 {
		if _, err := os.Stat(path); err == nil {
			kept := KeptName(path, prevIteration)
			if owned != nil && !slices.Contains(*owned, filepath.Base(kept)) {
				if _, err := os.Lstat(kept); err == nil {
					os.Remove(tmp)
					return fmt.Errorf("checkpoint: keeping the previous checkpoint as %s: a file of that name exists that this run did not write; refusing to replace it", kept)
				}
			}
			_ = os.Remove(kept)
			if err := os.Link(path, kept); err != nil {
				if err := copyFile(path, kept); err != nil {
					os.Remove(tmp)
					return fmt.Errorf("checkpoint: keeping %s: %w", kept, err)
				}
			}
			if owned != nil && !slices.Contains(*owned, filepath.Base(kept)) {
				*owned = append(*owned, filepath.Base(kept))
			}
		}
	}
	// The checkpoint replaced is freed when its last reference goes:
	// held open across the rename, that is after the save, off its path.
	replaced := holdReplaced(path)
	if err := os.Rename(tmp, path); err != nil {
		if replaced != nil {
			replaced.Close()
		}
		os.Remove(tmp)
		return fmt.Errorf("checkpoint: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	if replaced != nil {
		go replaced.Close()
	}
	if keepLast > 0 {
		if owned != nil {
			pruneOwned(dir, owned, keepLast-1)
		} else {
			pruneKept(path, keepLast-1)
		}
	}
	return nil
}

// pruneOwned removes the oldest of the kept files the run wrote until n
// are left.
func pruneOwned(dir string, owned *[]string, n int) {
	for len(*owned) > n {
		_ = os.Remove(filepath.Join(dir, (*owned)[0]))
		*owned = (*owned)[1:]
	}
}

// KeptName is the name an older checkpoint of path is kept under:
// STEM_iterN.EXT.
func KeptName(path string, iteration int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s_iter%d%s", strings.TrimSuffix(path, ext), iteration, ext)
}

// Kept lists the older checkpoints kept beside path, oldest first.
func Kept(path string) []string {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	matches, _ := filepath.Glob(stem + "_iter*" + ext)
	type kept struct {
		name string
		it   int
	}
	var ks []kept
	for _, m := range matches {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(m, stem+"_iter"), ext))
		if err == nil {
			ks = append(ks, kept{m, n})
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].it < ks[j].it })
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.name
	}
	return out
}

func pruneKept(path string, n int) {
	ks := Kept(path)
	for len(ks) > n {
		_ = os.Remove(ks[0])
		ks = ks[1:]
	}
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// checkKeyLengths refuses a generator whose key does not have the 624
// words of the Mersenne Twister's state: JSON would fill a shorter key
// with zeros (a different generator) without a word.
func checkKeyLengths(iterationState []byte) error {
	var st struct {
		StreamRNGs []struct {
			Owner string `json:"owner"`
			State struct {
				Key []json.RawMessage `json:"Key"`
			} `json:"state"`
		} `json:"stream_rngs"`
		RandomOps []struct {
			Owner string `json:"owner"`
			State struct {
				Key []json.RawMessage `json:"Key"`
			} `json:"state"`
		} `json:"random_ops"`
		RandomStreams []struct {
			Owner string `json:"owner"`
			State struct {
				Key []json.RawMessage `json:"Key"`
			} `json:"state"`
		} `json:"random_streams"`
	}
	if err := json.Unmarshal(iterationState, &st); err != nil {
		return err
	}
	want := len(numpyrand.State{}.Key)
	for _, r := range st.StreamRNGs {
		if len(r.State.Key) != want {
			return fmt.Errorf("generator %s has a key of %d words, not %d", r.Owner, len(r.State.Key), want)
		}
	}
	for _, r := range st.RandomOps {
		if len(r.State.Key) != want {
			return fmt.Errorf("generator %s has a key of %d words, not %d", r.Owner, len(r.State.Key), want)
		}
	}
	for _, r := range st.RandomStreams {
		if len(r.State.Key) != want {
			return fmt.Errorf("generator %s has a key of %d words, not %d", r.Owner, len(r.State.Key), want)
		}
	}
	return nil
}
