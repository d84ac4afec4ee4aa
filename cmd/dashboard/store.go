package dashboard

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Run is one training run as the dashboard lists it: a log UUID of an
// SQLite log, or of a checkpoint found in a directory.
type Run struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Source string `json:"source"`
	Kind   string `json:"kind"` // "sqlite" or "checkpoint"
	// Chain is the run and the runs it continues (resumed_from), newest
	// first; ChainError says why it stops early (a cycle, a missing run).
	Chain       []string `json:"chain"`
	ChainError  string   `json:"chain_error,omitempty"`
	ContinuedBy []string `json:"continued_by,omitempty"`
	// Status: running, stopping, finished, stopped (interrupted,
	// resumable), failed, not responding, incomplete, or checkpoint.
	Status        string  `json:"status"`
	Live          bool    `json:"live"`
	StopRequested bool    `json:"stop_requested,omitempty"`
	Iterations    int     `json:"iterations"`
	Epochs        int     `json:"epochs"`
	Heartbeat     float64 `json:"heartbeat,omitempty"`
	PID           int     `json:"pid,omitempty"`
	Host          string  `json:"host,omitempty"`
	Script        string  `json:"script,omitempty"`
}

// ConfigItem is one tunable of a run; Override is the --set text when
// the command line set it.
type ConfigItem struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Override string `json:"override,omitempty"`
}

// Detail is what the page shows of a run besides its curves.
type Detail struct {
	Run
	// Config is the run's tunables (from a checkpoint), or ConfigRecord
	// (the log's row-0 record "config") and the overrides.
	Config       []ConfigItem      `json:"config"`
	ConfigRecord string            `json:"config_record,omitempty"`
	ScriptPath   string            `json:"script_path,omitempty"`
	ScriptSHA256 string            `json:"script_sha256,omitempty"`
	ScriptText   string            `json:"script_text,omitempty"`
	Command      []string          `json:"command,omitempty"`
	Checkpoints  []CheckpointInfo  `json:"checkpoints"`
	StatusValues map[string]string `json:"status_values"`
}

// CheckpointInfo is where a checkpoint of the run is.
type CheckpointInfo struct {
	Path       string `json:"path"`
	Exists     bool   `json:"exists"`
	Iterations int    `json:"iterations,omitempty"`
	Created    string `json:"created,omitempty"`
}

// Data is a run's numeric channels from iteration Since on, along its
// resumed_from chain (a later run's value winning), with what the x axes
// need.
type Data struct {
	Run       string                  `json:"run"`
	Since     int                     `json:"since"`
	Channels  map[string][][2]float64 `json:"channels"`
	EpochEnds []int                   `json:"epoch_ends"`
	// Times are (iteration, Unix seconds) pairs from the run's agent.
	Times [][2]float64 `json:"times"`
	// Next, when not 0, is where the answer stopped (a row cap): ask
	// again with since=Next for the rest.
	Next int `json:"next,omitempty"`
}

// ErrNoRun is returned for an unknown run id.
var ErrNoRun = errors.New("no such run")

// Store finds runs in SQLite logs and checkpoints and reads them. Paths
// are the files and directories named on the command line; directories
// are searched (two levels deep) for logs (.sqlite, .sqlite3, .db) and
// checkpoints (.tar) each time Refresh runs.
type Store struct {
	paths []string
	// queryTimeout bounds each log's queries (a planted log whose status
	// is a view that never ends is interrupted and skipped); logw gets
	// the reasons files are skipped; summaryLimit bounds what is read of
	// each checkpoint.
	queryTimeout time.Duration
	logw         io.Writer
	summaryLimit int64

	refreshMu sync.Mutex // one Refresh at a time
	mu        sync.Mutex
	logs      map[string]*logFile
	cks       map[string]*ckFile
	runs      map[string]*runRef
	order     []string
	version   uint64
	scanned   time.Time // the last search of the paths
	found     []string  // the logs it found
	// refreshed is set once a Refresh has read the paths.
	refreshed bool
}

// QueryTimeout is how long the queries of one log may take, in one
// refresh or one request, unless Options say otherwise.
const QueryTimeout = 10 * time.Second

// SummaryLimit is how many bytes of a checkpoint's config, scripts and
// log the dashboard reads (its parameters are never read).
const SummaryLimit = 256 << 20

// ScanEvery is how often Refresh searches the directories and reads
// changed checkpoints.
const ScanEvery = 2 * time.Second

type logFile struct {
	path string
	db   *sql.DB
	sig  string
	// bad is the signature at which the log failed to read: it is
	// skipped until it changes.
	bad string
}

type ckFile struct {
	path string
	sig  string
	c    *checkpoint.Checkpoint
	err  error
}

type runRef struct {
	run Run
	log *logFile
	ck  *ckFile // the newest checkpoint of a checkpoint-only run
}

// NewStore returns a store over the given paths; call Refresh to read
// them.
func NewStore(paths []string) *Store {
	return &Store{paths: paths, queryTimeout: QueryTimeout, logw: io.Discard, summaryLimit: SummaryLimit,
		logs: map[string]*logFile{}, cks: map[string]*ckFile{}, runs: map[string]*runRef{}}
}

// Close closes the databases.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.logs {
		l.db.Close()
	}
	s.logs = map[string]*logFile{}
	return nil
}

func isLog(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".sqlite", ".sqlite3", ".db":
		return true
	}
	return false
}

func isCheckpoint(name string) bool {
	return strings.ToLower(filepath.Ext(name)) == ".tar" && !strings.HasPrefix(filepath.Base(name), ".")
}

// discover lists the logs and checkpoints under the store's paths.
func (s *Store) discover() (logs, cks []string) {
	for _, p := range s.paths {
		st, err := os.Stat(p)
		if err != nil {
			if isLog(p) {
				logs = append(logs, p) // may appear later (a run not started yet)
			}
			continue
		}
		if !st.IsDir() {
			if isCheckpoint(p) {
				cks = append(cks, p)
			} else {
				logs = append(logs, p)
			}
			continue
		}
		root := filepath.Clean(p)
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			depth := strings.Count(strings.TrimPrefix(path, root), string(filepath.Separator))
			if d.IsDir() {
				if path != root && (depth > 2 || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if isLog(path) {
				logs = append(logs, path)
			} else if isCheckpoint(path) {
				cks = append(cks, path)
			}
			return nil
		})
	}
	return logs, cks
}

// signature changes when a file (or its write-ahead log) changes.
func signature(paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%d.%d;", st.Size(), st.ModTime().UnixNano())
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// openReadOnly opens an SQLite log for reading only.
func openReadOnly(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+abs+"?mode=ro&_pragma=busy_timeout(1000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	return db, nil
}

// Version counts the changes Refresh has seen.
func (s *Store) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// skipped says on the store's log why a file is left out.
func (s *Store) skipped(path string, err error) {
	fmt.Fprintf(s.logw, "dashboard: skipping %s: %v\n", path, err)
}

// ensureRefreshed refreshes once, for a request that comes before the
// poller's first refresh.
func (s *Store) ensureRefreshed(ctx context.Context) {
	s.mu.Lock()
	done := s.refreshed
	s.mu.Unlock()
	if done || !s.refreshMu.TryLock() {
		return // a refresh under way (the poller's): the request does not wait for it
	}
	s.refreshMu.Unlock()
	s.Refresh(ctx)
}

// Refresh looks for new or changed logs and checkpoints and rebuilds the
// run list; it reports whether anything changed. Each log's queries get
// the store's query timeout (and end with ctx): a log that fails or times
// out is skipped, with the reason on the store's log, until it changes.
func (s *Store) Refresh(ctx context.Context) bool {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	// The directories are searched, and changed checkpoints read, at
	// most every ScanEvery; the logs found are looked at every time.
	s.mu.Lock()
	scan := time.Since(s.scanned) >= ScanEvery
	s.mu.Unlock()
	var logs, cks []string
	if scan {
		logs, cks = s.discover()
	}
	s.mu.Lock()
	if scan {
		s.scanned = time.Now()
		s.found = logs
	} else {
		logs = s.found
	}
	changed := false
	for _, p := range logs {
		sig := signature(p, p+"-wal")
		l := s.logs[p]
		if l != nil && l.sig == sig {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if l == nil {
			db, err := openReadOnly(p)
			if err != nil {
				continue
			}
			l = &logFile{path: p, db: db}
			s.logs[p] = l
		}
		l.sig = sig
		changed = true
	}
	// Changed checkpoints are read without the lock (only what the list
	// needs: ReadSummary skips the parameters).
	var toRead []string
	seen := map[string]bool{}
	if !scan {
		for p := range s.cks {
			seen[p] = true
		}
	}
	for _, p := range cks {
		seen[p] = true
		if c := s.cks[p]; c == nil || c.sig != signature(p) {
			toRead = append(toRead, p)
		}
	}
	for p := range s.cks {
		if !seen[p] {
			delete(s.cks, p)
			changed = true
		}
	}
	s.mu.Unlock()
	read := make([]*ckFile, 0, len(toRead))
	for _, p := range toRead {
		if ctx.Err() != nil {
			return false
		}
		sig := signature(p)
		c, err := checkpoint.ReadSummary(p, s.summaryLimit)
		if err != nil {
			s.skipped(p, err)
		}
		read = append(read, &ckFile{path: p, sig: sig, c: c, err: err})
	}
	s.mu.Lock()
	for _, c := range read {
		s.cks[c.path] = c
		changed = true
	}
	if !changed && s.refreshed {
		s.mu.Unlock()
		return false
	}
	// The queries run without the lock: a slow log (a writer holding
	// it) never blocks the handlers.
	logFiles := make(map[string]*logFile, len(s.logs))
	for k, v := range s.logs {
		if v.bad != v.sig {
			logFiles[k] = v
		}
	}
	ckFiles := make(map[string]*ckFile, len(s.cks))
	for k, v := range s.cks {
		ckFiles[k] = v
	}
	s.mu.Unlock()
	runs, order, failed := buildRuns(ctx, logFiles, ckFiles, s.queryTimeout)
	if ctx.Err() != nil {
		return false // stopping: nothing is marked bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, err := range failed {
		l := logFiles[p]
		l.bad = l.sig
		s.skipped(p, err)
	}
	s.runs, s.order = runs, order
	s.version++
	s.refreshed = true
	return changed
}

// stored decodes a value of Blocks' tables (numbers, text, JSON blobs).
func stored(v any) any {
	if b, ok := v.([]byte); ok {
		var out any
		if json.Unmarshal(b, &out) == nil {
			return out
		}
		return string(b)
	}
	return v
}

func asInt(v any) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

func asInts(v any) []int {
	l, _ := v.([]any)
	out := []int{}
	for _, e := range l {
		if f, ok := e.(float64); ok {
			out = append(out, int(f))
		}
	}
	return out
}

func display(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case []byte:
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

type agentRow struct {
	pid                   int
	host, state, script   string
	started, heartbeat    float64
	stopRequested         bool
	scriptPath, scriptSum string
}

// logRuns reads the runs of one log.
func logRuns(ctx context.Context, l *logFile) (map[string]map[string]any, map[string]agentRow, error) {
	status := map[string]map[string]any{}
	rows, err := l.db.QueryContext(ctx, `SELECT uuid, "key", value FROM status`)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var u, k string
		var v any
		if err := rows.Scan(&u, &k, &v); err != nil {
			rows.Close()
			return nil, nil, err
		}
		if status[u] == nil {
			status[u] = map[string]any{}
		}
		status[u][k] = stored(v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	agents := map[string]agentRow{}
	arows, err := l.db.QueryContext(ctx, `SELECT uuid, pid, host, started, heartbeat, state, script_path, script_sha256, stop_requested IS NOT NULL FROM dashboard_runs`)
	if err == nil {
		for arows.Next() {
			var u string
			var a agentRow
			var pid sql.NullInt64
			var host, state, sp, ss sql.NullString
			var st, hb sql.NullFloat64
			if err := arows.Scan(&u, &pid, &host, &st, &hb, &state, &sp, &ss, &a.stopRequested); err != nil {
				break
			}
			a.pid, a.host, a.started, a.heartbeat, a.state = int(pid.Int64), host.String, st.Float64, hb.Float64, state.String
			a.scriptPath, a.scriptSum = sp.String, ss.String
			agents[u] = a
		}
		arows.Close()
		if err := arows.Err(); err != nil {
			return nil, nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return status, agents, nil
}

func shortID(u string) string {
	if len(u) > 8 {
		return u[:8]
	}
	return u
}

// buildRuns makes the run list from the open logs and the checkpoints;
// failed has the logs that could not be read within timeout each.
func buildRuns(ctx context.Context, logs map[string]*logFile, ckFiles map[string]*ckFile, timeout time.Duration) (runs map[string]*runRef, order []string, failed map[string]error) {
	runs, failed = map[string]*runRef{}, map[string]error{}
	paths := make([]string, 0, len(logs))
	for p := range logs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	now := unixNow()
	// The logs are read concurrently (maxLogReads at once), each within
	// timeout: planted logs that never answer cost one timeout together.
	type result struct {
		runs  map[string]*runRef
		order []string
		err   error
	}
	results := make([]result, len(paths))
	slots := make(chan struct{}, maxLogReads)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			lctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			r := &results[i]
			r.runs, r.order, r.err = logRunList(lctx, logs[p], now)
			if r.err != nil && lctx.Err() != nil {
				r.err = fmt.Errorf("its queries took over %v (stopped): %w", timeout, r.err)
			}
		}()
	}
	wg.Wait()
	for i, p := range paths {
		r := results[i]
		if r.err != nil {
			failed[p] = r.err
			continue
		}
		for _, u := range r.order {
			if runs[u] != nil {
				continue // the same run in two logs: the first one is shown
			}
			runs[u] = r.runs[u]
			order = append(order, u)
		}
	}
	addCheckpointRuns(runs, &order, ckFiles)
	for _, u := range order {
		for _, anc := range runs[u].run.Chain[1:] {
			if a := runs[anc]; a != nil {
				a.run.ContinuedBy = append(a.run.ContinuedBy, u)
			}
		}
	}
	return runs, order, failed
}

// maxLogReads is how many logs a refresh reads at once.
const maxLogReads = 8

// logRunList reads the runs of one log.
func logRunList(ctx context.Context, l *logFile, now float64) (map[string]*runRef, []string, error) {
	p := l.path
	runs := map[string]*runRef{}
	var order []string
	{
		status, agents, err := logRuns(ctx, l)
		if err != nil {
			return nil, nil, err
		}
		parent := func(u string) (string, bool) {
			st, ok := status[u]
			if !ok {
				return "", false
			}
			r, _ := st["resumed_from"].(string)
			return r, true
		}
		ids := make([]string, 0, len(status))
		for u := range status {
			ids = append(ids, u)
		}
		sort.Strings(ids)
		for _, u := range ids {
			st := status[u]
			r := Run{ID: u, Source: p, Kind: "sqlite", Iterations: asInt(st["iterations_done"]), Epochs: asInt(st["epochs_done"])}
			chain, cerr := mainloop.ResumedChain(u, parent)
			r.Chain = chain
			if cerr != nil {
				r.ChainError = cerr.Error()
			}
			a, hasAgent := agents[u]
			if hasAgent {
				r.PID, r.Host, r.Heartbeat, r.StopRequested = a.pid, a.host, a.heartbeat, a.stopRequested
				r.Script = filepath.Base(a.scriptPath)
			}
			flags, err := lastRowFlags(ctx, l.db, u, r.Iterations)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case hasAgent && a.state == "running" && now-a.heartbeat < LiveWithin.Seconds():
				r.Live = true
				r.Status = "running"
				if a.stopRequested {
					r.Status = "stopping"
				}
			case flags[mainloop.RecordGotException]:
				r.Status = "failed"
			case flags[mainloop.RecordBatchInterruptReceived] || flags[mainloop.RecordEpochInterruptReceived]:
				r.Status = "stopped"
			case flags[mainloop.RecordTrainingFinished]:
				r.Status = "finished"
			case hasAgent && a.state == "running":
				r.Status = "not responding"
			default:
				r.Status = "incomplete"
			}
			name := r.Script
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
			}
			r.Name = name + " " + shortID(u)
			runs[u] = &runRef{run: r, log: l}
			order = append(order, u)
		}
	}
	return runs, order, nil
}

// addCheckpointRuns adds the checkpoint-only runs: the newest checkpoint
// of each UUID no log has.
func addCheckpointRuns(runs map[string]*runRef, order *[]string, ckFiles map[string]*ckFile) {
	ckPaths := make([]string, 0, len(ckFiles))
	for p := range ckFiles {
		ckPaths = append(ckPaths, p)
	}
	sort.Strings(ckPaths)
	for _, p := range ckPaths {
		c := ckFiles[p]
		if c.c == nil || c.c.Log.UUID == "" {
			continue
		}
		u := c.c.Log.UUID
		if ref := runs[u]; ref != nil {
			if ref.ck != nil && c.c.Log.Status.IterationsDone > ref.ck.c.Log.Status.IterationsDone {
				ref.ck = c
				ref.run.Iterations = c.c.Log.Status.IterationsDone
				ref.run.Epochs = c.c.Log.Status.EpochsDone
			}
			continue
		}
		r := Run{ID: u, Source: p, Kind: "checkpoint", Chain: []string{u}, Status: "checkpoint",
			Iterations: c.c.Log.Status.IterationsDone, Epochs: c.c.Log.Status.EpochsDone,
			Script: filepath.Base(c.c.MainScript().Path)}
		r.Name = r.Script + " " + shortID(u)
		runs[u] = &runRef{run: r, ck: c}
		*order = append(*order, u)
	}
}

// lastRowFlags reads the flags of a run's last row.
func lastRowFlags(ctx context.Context, db *sql.DB, uuid string, it int) (map[string]bool, error) {
	out := map[string]bool{}
	rows, err := db.QueryContext(ctx, `SELECT "key", value FROM entries WHERE uuid = ? AND time = ? AND "key" IN (?, ?, ?, ?)`, uuid, it,
		mainloop.RecordGotException, mainloop.RecordBatchInterruptReceived, mainloop.RecordEpochInterruptReceived, mainloop.RecordTrainingFinished)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return out, nil
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v any
		if rows.Scan(&k, &v) == nil {
			out[k] = k == mainloop.RecordGotException || mainloop.Truthy(stored(v))
		}
	}
	return out, ctx.Err()
}

// Runs lists the runs, in the order of their logs, then checkpoints.
func (s *Store) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Run, 0, len(s.order))
	for _, u := range s.order {
		out = append(out, s.runs[u].run)
	}
	return out
}

func (s *Store) ref(id string) (*runRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	if r == nil {
		return nil, fmt.Errorf("%w %q", ErrNoRun, id)
	}
	cp := *r
	return &cp, nil
}

// stopped says why the queries of a request ended early: the request
// ended (parent), or they took over the query timeout (ctx).
func (s *Store) stopped(parent, ctx context.Context, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("the request ended: %w", err)
	case ctx.Err() != nil:
		return fmt.Errorf("the queries took over %v (stopped): %w", s.queryTimeout, err)
	}
	return err
}

// MaxDataRows is how many log rows one data request reads at most; the
// rest comes in the next requests (Data.Next).
const MaxDataRows = 20_000

// Data reads a run's channels from iteration since on: at most about
// maxRows rows of the log, the answer then stopping before iteration
// d.Next (0: the answer is complete).
func (s *Store) Data(ctx context.Context, id string, since, maxRows int) (*Data, error) {
	ref, err := s.ref(id)
	if err != nil {
		return nil, err
	}
	d := &Data{Run: id, Since: since, Channels: map[string][][2]float64{}, EpochEnds: []int{}, Times: [][2]float64{}}
	if ref.log == nil {
		return ckData(d, ref.ck.c), nil
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, s.queryTimeout)
	defer cancel()
	fail := func(err error) (*Data, error) {
		return nil, fmt.Errorf("reading %s: %w", ref.log.path, s.stopped(parent, ctx, err))
	}
	db := ref.log.db
	chain := ref.run.Chain
	perRun := max(maxRows/len(chain), 1)
	// The page ends before the first iteration past perRun rows of any
	// run of the chain (one iteration at least).
	until := math.MaxInt64
	for _, u := range chain {
		var t int64
		err := db.QueryRowContext(ctx, `SELECT time FROM entries WHERE uuid = ? AND time >= ? ORDER BY time LIMIT 1 OFFSET ?`, u, since, perRun).Scan(&t)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		until = min(until, max(int(t), since+1))
	}
	if until != math.MaxInt64 {
		d.Next = until
	}
	type key struct {
		ch string
		it int
	}
	merged := map[key]float64{}
	// Oldest first: a later run's value wins.
	for i := len(chain) - 1; i >= 0; i-- {
		rows, err := db.QueryContext(ctx, `SELECT time, "key", value FROM entries WHERE uuid = ? AND time >= ? AND time < ? AND typeof(value) IN ('integer', 'real') ORDER BY time LIMIT ?`,
			chain[i], since, until, perRun)
		if err != nil {
			return fail(err)
		}
		for rows.Next() {
			var it int
			var k string
			var v float64
			if err := rows.Scan(&it, &k, &v); err != nil {
				rows.Close()
				return fail(err)
			}
			merged[key{k, it}] = v
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fail(err)
		}
	}
	for k, v := range merged {
		d.Channels[k.ch] = append(d.Channels[k.ch], [2]float64{float64(k.it), v})
	}
	for _, pts := range d.Channels {
		sort.Slice(pts, func(a, b int) bool { return pts[a][0] < pts[b][0] })
	}
	var ends any
	if err := db.QueryRowContext(ctx, `SELECT value FROM status WHERE uuid = ? AND "key" = ?`, id, mainloop.StatusEpochEnds).Scan(&ends); err == nil {
		d.EpochEnds = asInts(stored(ends))
	}
	times := map[int]float64{}
	for i := len(chain) - 1; i >= 0; i-- {
		rows, err := db.QueryContext(ctx, `SELECT iteration, time FROM dashboard_times WHERE uuid = ? AND iteration >= ? AND iteration < ? LIMIT ?`,
			chain[i], since, until, perRun)
		if err != nil {
			break // a log written without the agent has no times
		}
		for rows.Next() {
			var it int
			var t float64
			if rows.Scan(&it, &t) == nil {
				times[it] = t
			}
		}
		rows.Close()
	}
	if ctx.Err() != nil {
		return fail(ctx.Err())
	}
	for it, t := range times {
		d.Times = append(d.Times, [2]float64{float64(it), t})
	}
	sort.Slice(d.Times, func(a, b int) bool { return d.Times[a][0] < d.Times[b][0] })
	return d, nil
}

// ckData fills d from a checkpoint's log.
func ckData(d *Data, c *checkpoint.Checkpoint) *Data {
	for _, row := range c.Log.Rows {
		if row.Iteration < d.Since {
			continue
		}
		for k, v := range row.Records {
			x, err := v.Decode()
			if err != nil {
				continue
			}
			if f, ok := channelPoint(x); ok {
				d.Channels[k] = append(d.Channels[k], [2]float64{float64(row.Iteration), f})
			}
		}
	}
	d.EpochEnds = append(d.EpochEnds, c.Log.Status.EpochEnds...)
	return d
}

// channelPoint reads a checkpoint log's record as a channel's value, as
// the SQLite log stores channels (numbers as INTEGER or REAL): a number
// or a 0-d array, finite; bools and other arrays are no channel.
func channelPoint(x any) (float64, bool) {
	if a, ok := x.(*nd.Array); ok && (a == nil || a.NDim() != 0) {
		return 0, false
	}
	f, ok := mainloop.ChannelValue(x)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Detail reads a run's config, script, status and checkpoints.
func (s *Store) Detail(ctx context.Context, id string) (*Detail, error) {
	ref, err := s.ref(id)
	if err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, s.queryTimeout)
	defer cancel()
	d := &Detail{Run: ref.run, Config: []ConfigItem{}, Checkpoints: []CheckpointInfo{}, StatusValues: map[string]string{}}
	s.mu.Lock()
	var cks []*ckFile
	for _, c := range s.cks {
		if c.c != nil && c.c.Log.UUID == id {
			cks = append(cks, c)
		}
	}
	s.mu.Unlock()
	sort.Slice(cks, func(a, b int) bool { return cks[a].path < cks[b].path })
	known := map[string]bool{}
	addCk := func(path string) {
		if a, err := filepath.Abs(path); err == nil {
			path = a
		}
		if known[path] {
			return
		}
		known[path] = true
		info := CheckpointInfo{Path: path}
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			info.Exists = true
		}
		for _, c := range cks {
			if a, _ := filepath.Abs(c.path); a == path {
				info.Iterations = c.c.Log.Status.IterationsDone
				info.Created = c.c.Manifest.Created
			}
		}
		d.Checkpoints = append(d.Checkpoints, info)
	}
	if ref.log != nil {
		if err := logDetail(ctx, d, ref.log, id); err != nil {
			return nil, s.stopped(parent, ctx, err)
		}
		for _, p := range savedTo(ctx, ref.log.db, id, ref.log.path) {
			addCk(p)
		}
	}
	for _, c := range cks {
		addCk(c.path)
	}
	// The config and script of a checkpoint, when the log has none.
	var best *checkpoint.Checkpoint
	for _, c := range cks {
		if best == nil || c.c.Log.Status.IterationsDone > best.Log.Status.IterationsDone {
			best = c.c
		}
	}
	if best != nil {
		if len(d.Config) == 0 {
			for _, name := range best.Run.ConfigOrder {
				v, _ := best.Run.Config[name].Decode()
				d.Config = append(d.Config, ConfigItem{Name: name, Value: display(v), Override: best.Run.Overrides[name]})
			}
			for _, k := range sortedKeys(best.Run.Overrides) {
				if _, ok := best.Run.Config[k]; !ok {
					d.Config = append(d.Config, ConfigItem{Name: k, Value: best.Run.Overrides[k], Override: best.Run.Overrides[k]})
				}
			}
		}
		if d.ScriptText == "" {
			m := best.MainScript()
			sum := sha256.Sum256(m.Source)
			d.ScriptPath, d.ScriptText, d.ScriptSHA256 = m.Path, string(m.Source), hex.EncodeToString(sum[:])
			d.Command = best.Manifest.Command
		}
		if ref.log == nil {
			st := best.Log.Status
			d.StatusValues["iterations_done"] = fmt.Sprint(st.IterationsDone)
			d.StatusValues["epochs_done"] = fmt.Sprint(st.EpochsDone)
			d.StatusValues["_epoch_ends"] = fmt.Sprint(st.EpochEnds)
			for k, v := range st.Extra {
				x, _ := v.Decode()
				d.StatusValues[k] = display(x)
			}
		}
	}
	return d, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// logDetail reads a log run's status, config record and agent record.
func logDetail(ctx context.Context, d *Detail, l *logFile, id string) error {
	rows, err := l.db.QueryContext(ctx, `SELECT "key", value FROM status WHERE uuid = ?`, id)
	if err != nil {
		return fmt.Errorf("reading %s: %w", l.path, err)
	}
	for rows.Next() {
		var k string
		var v any
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return err
		}
		d.StatusValues[k] = display(stored(v))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", l.path, err)
	}
	// The config record is in row 0 of the first run of the chain.
	for _, u := range d.Chain {
		var v any
		if err := l.db.QueryRowContext(ctx, `SELECT value FROM entries WHERE uuid = ? AND time = 0 AND "key" = 'config'`, u).Scan(&v); err == nil {
			d.ConfigRecord = display(stored(v))
		}
	}
	d.Config = configItems(d.ConfigRecord, nil)
	var sp, ss, st, ov, cmd sql.NullString
	err = l.db.QueryRowContext(ctx, `SELECT script_path, script_sha256, script, overrides, command FROM dashboard_runs WHERE uuid = ?`, id).Scan(&sp, &ss, &st, &ov, &cmd)
	if err == nil {
		d.ScriptPath, d.ScriptSHA256, d.ScriptText = sp.String, ss.String, st.String
		var o map[string]string
		_ = json.Unmarshal([]byte(ov.String), &o)
		d.Config = configItems(d.ConfigRecord, o)
		_ = json.Unmarshal([]byte(cmd.String), &d.Command)
	}
	return ctx.Err()
}

// savedTo lists the checkpoint paths a run's Checkpoint extension
// recorded (saved_to), relative paths taken from the log's directory.
func savedTo(ctx context.Context, db *sql.DB, id, logPath string) []string {
	// The cwd is read before the rows are opened: a query made while rows
	// hold a connection needs a second one, and two such requests at once
	// would take the pool's two connections and wait for each other forever.
	var cwd string
	_ = db.QueryRowContext(ctx, `SELECT cwd FROM dashboard_runs WHERE uuid = ?`, id).Scan(&cwd)
	rows, err := db.QueryContext(ctx, `SELECT value FROM entries WHERE uuid = ? AND "key" = 'saved_to' ORDER BY time`, id)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []string
	seen := map[string]bool{}
	for rows.Next() {
		var v any
		if rows.Scan(&v) != nil {
			continue
		}
		list, _ := stored(v).([]any)
		for _, e := range list {
			p, ok := e.(string)
			if !ok || p == "" {
				continue
			}
			if !filepath.IsAbs(p) {
				base := cwd
				if base == "" {
					base = filepath.Dir(logPath)
				}
				p = filepath.Join(base, p)
			}
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// configItems lists the tunables of a config record (a Starlark dict
// literal, {"name": value, ...}, as blocks.config writes it) with the
// overrides marked; an override of a name the record lacks (config.get)
// is listed too. A record that does not parse is left to ConfigRecord.
func configItems(record string, overrides map[string]string) []ConfigItem {
	items := []ConfigItem{}
	seen := map[string]bool{}
	for _, kv := range splitDict(record) {
		items = append(items, ConfigItem{Name: kv[0], Value: kv[1], Override: overrides[kv[0]]})
		seen[kv[0]] = true
	}
	for _, k := range sortedKeys(overrides) {
		if !seen[k] {
			items = append(items, ConfigItem{Name: k, Value: overrides[k], Override: overrides[k]})
		}
	}
	return items
}

// splitDict splits {"a": 1, "b": [2, 3]} into its keys and value texts;
// nil when s is not such a literal.
func splitDict(s string) [][2]string {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil
	}
	var parts []string
	depth, start := 0, 1
	var quote byte
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '(' || c == '{':
			depth++
		case c == ']' || c == ')' || c == '}':
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if quote != 0 || depth != 0 {
		return nil
	}
	if rest := strings.TrimSpace(s[start : len(s)-1]); rest != "" {
		parts = append(parts, rest)
	}
	var out [][2]string
	for _, p := range parts {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		k = strings.TrimSpace(k)
		if !ok || len(k) < 2 || k[0] != '"' || k[len(k)-1] != '"' {
			return nil
		}
		out = append(out, [2]string{k[1 : len(k)-1], strings.TrimSpace(v)})
	}
	return out
}
