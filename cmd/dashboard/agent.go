package dashboard

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

// The dashboard's two tables, beside Blocks' entries and status in the
// run's SQLite log. The run (its Agent) writes them; the dashboard only
// reads them, except stop_requested, its one write.
const agentSchema = `
CREATE TABLE IF NOT EXISTS dashboard_runs (
    uuid TEXT PRIMARY KEY,
    pid INTEGER, host TEXT,
    started REAL, heartbeat REAL,
    state TEXT,                 -- running, ended
    cwd TEXT,                   -- the run's working directory (relative saved_to paths)
    script_path TEXT, script_sha256 TEXT, script TEXT,
    overrides TEXT,             -- JSON object: NAME -> the --set text
    command TEXT,               -- JSON array: the command line
    stop_requested REAL         -- NULL, or when a stop was requested (Unix seconds)
);
CREATE TABLE IF NOT EXISTS dashboard_times (
    uuid TEXT NOT NULL, iteration INTEGER NOT NULL, time REAL NOT NULL,
    PRIMARY KEY (uuid, iteration)
);
`

// HeartbeatEvery is how often a running Agent writes its heartbeat and
// looks for a stop request; a run whose heartbeat is older than
// LiveWithin is not live.
const (
	HeartbeatEvery = 500 * time.Millisecond
	LiveWithin     = 5 * time.Second
)

// RunInfo describes the process that trains, for the dashboard.
type RunInfo struct {
	ScriptPath string
	Script     []byte
	Overrides  map[string]string
	Command    []string
}

// Agent is the run's side of the dashboard: a main loop's LogBackend that
// wraps the SQLite backend and, in the same database, records the run
// (process id, host, script and its SHA-256, --set overrides), the wall
// time at which each iteration was synced, and a heartbeat; it also polls
// for a stop request that a dashboard writes (stop_requested), and acts
// on it as on SIGTERM: the main loop finishes the current batch, runs the
// after_training extensions (a Checkpoint saves) and returns normally.
//
// The control channel is the database itself, so a run started anywhere
// (another terminal, a batch job) can be stopped by any dashboard that
// reads its log, without signals or open ports.
type Agent struct {
	// Backend is the SQLite log backend the agent wraps (its Sync runs
	// first).
	Backend mainloop.LogBackend
	// Path is the SQLite database Backend writes.
	Path string
	Info RunInfo
	// Messages receives the note printed when a stop is requested (nil:
	// os.Stderr).
	Messages io.Writer

	disabled bool // the agent failed; only Backend works

	mu      sync.Mutex
	db      *sql.DB
	uuid    string
	times   map[int]float64 // iteration -> Unix time, not yet written
	seen    int             // the last iteration given a time
	stop    atomic.Bool     // a stop request was read
	acted   bool
	done    chan struct{}
	wg      sync.WaitGroup
	pollErr error
}

// Sync stores the log (the wrapped backend), notes the time of a new
// iteration and, when a stop was requested, marks the log as a SIGTERM
// does (batch_interrupt_received), which ends training after this batch.
func (a *Agent) Sync(l *mainloop.TrainingLog) error {
	if err := a.Backend.Sync(l); err != nil {
		return err
	}
	if a.disabled {
		return nil
	}
	a.mu.Lock()
	if a.db == nil || a.uuid != l.UUID {
		a.mu.Unlock()
		a.stopPolling()
		if err := a.start(l.UUID); err != nil {
			// The dashboard is an aid: training goes on without it.
			fmt.Fprintf(a.messages(), "blocks-repl: dashboard: %v (the run goes on without live control)\n", err)
			a.disabled = true
			return nil
		}
		a.mu.Lock()
	}
	if it := l.Status.IterationsDone; it > a.seen {
		a.times[it] = unixNow()
		a.seen = it
	}
	a.mu.Unlock()
	if a.stop.Load() && !a.acted {
		a.acted = true
		fmt.Fprintln(a.messages(), "WARNING:blocks.main_loop:the dashboard requested a stop: finishing the current batch, running the after_training extensions (a Checkpoint saves), then exiting")
		l.CurrentRow()[mainloop.RecordBatchInterruptReceived] = true
		l.Status.BatchInterruptReceived = true
	}
	return nil
}

func (a *Agent) messages() io.Writer {
	if a.Messages != nil {
		return a.Messages
	}
	return os.Stderr
}

func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// start opens the agent's connection, records the run and starts the
// heartbeat.
func (a *Agent) start(uuid string) error {
	db, err := sql.Open("sqlite", sqlitelog.BusyDSN(a.Path))
	if err != nil {
		return fmt.Errorf("opening %s: %w", a.Path, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(agentSchema); err != nil {
		db.Close()
		return fmt.Errorf("creating the dashboard tables in %s: %w", a.Path, err)
	}
	host, _ := os.Hostname()
	cwd, _ := os.Getwd()
	ov, _ := json.Marshal(a.Info.Overrides)
	cmd, _ := json.Marshal(a.Info.Command)
	sum := sha256.Sum256(a.Info.Script)
	now := unixNow()
	if _, err := db.Exec(`INSERT OR REPLACE INTO dashboard_runs
        (uuid, pid, host, started, heartbeat, state, cwd, script_path, script_sha256, script, overrides, command, stop_requested)
        VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, NULL)`,
		uuid, os.Getpid(), host, now, now, cwd, a.Info.ScriptPath, hex.EncodeToString(sum[:]), string(a.Info.Script), string(ov), string(cmd)); err != nil {
		db.Close()
		return fmt.Errorf("recording the run in %s: %w", a.Path, err)
	}
	a.mu.Lock()
	a.db, a.uuid = db, uuid
	a.times = map[int]float64{}
	a.seen = -1
	a.acted = false
	a.stop.Store(false)
	a.done = make(chan struct{})
	a.mu.Unlock()
	a.wg.Add(1)
	go a.poll(a.done)
	return nil
}

// poll writes the heartbeat and the buffered times and reads the stop
// request, every HeartbeatEvery, until done closes.
func (a *Agent) poll(done chan struct{}) {
	defer a.wg.Done()
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if err := a.flush("running"); err != nil && a.pollErr == nil {
				a.pollErr = err
				fmt.Fprintf(a.messages(), "blocks-repl: dashboard: %v\n", err)
			}
		}
	}
}

// flush writes the pending times and the heartbeat with the given state
// and reads the stop request.
func (a *Agent) flush(state string) error {
	a.mu.Lock()
	db, uuid := a.db, a.uuid
	times := a.times
	a.times = map[int]float64{}
	a.mu.Unlock()
	if db == nil {
		return nil
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for it, tm := range times {
		if _, err := tx.Exec(`INSERT OR IGNORE INTO dashboard_times (uuid, iteration, time) VALUES (?, ?, ?)`, uuid, it, tm); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(`UPDATE dashboard_runs SET heartbeat = ?, state = ? WHERE uuid = ?`, unixNow(), state, uuid); err != nil {
		return err
	}
	var req sql.NullFloat64
	if err := tx.QueryRow(`SELECT stop_requested FROM dashboard_runs WHERE uuid = ?`, uuid).Scan(&req); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if req.Valid {
		a.stop.Store(true)
	}
	return nil
}

func (a *Agent) stopPolling() {
	a.mu.Lock()
	done := a.done
	a.done = nil
	a.mu.Unlock()
	if done != nil {
		close(done)
		a.wg.Wait()
	}
}

// Close stops the heartbeat, marks the run ended, and closes the wrapped
// backend when it is an io.Closer (the main loop reopens both at its next
// Sync).
func (a *Agent) Close() error {
	a.stopPolling()
	var err error
	if a.db != nil {
		err = a.flush("ended")
		if cerr := a.db.Close(); err == nil {
			err = cerr
		}
		a.mu.Lock()
		a.db = nil
		a.mu.Unlock()
	}
	if c, ok := a.Backend.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
