// Package sqlitelog is Blocks' SQLite log backend (blocks/log/sqlite.py)
// for the main loop's TrainingLog, on modernc.org/sqlite (pure Go).
//
// A database holds many runs, each identified by its log's UUID, in two
// tables, as in Blocks:
//
//	entries(uuid TEXT, time INTEGER, "key" TEXT, value)   one row per log record
//	status(uuid TEXT, "key" TEXT, value)                  the log's status
//
// Numbers are stored as INTEGER or REAL and strings as TEXT, so SQL can
// read them directly; other values (bools, arrays, lists, None) as a BLOB
// holding their JSON form (Blocks pickles them). A resumed run's status
// has resumed_from = the UUID of the run it continues: loading a run
// follows that chain (a recursive query) and gives the records of every
// ancestor, a later run's record winning over an earlier one's for the
// same iteration and key.
//
// Use a DB as the main loop's LogBackend (MainLoop.LogBackend = db): it
// stores the rows written since the last sync after every batch and
// epoch.
package sqlitelog

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/blocks-go/blocks/train/mainloop"
)

const schema = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE IF NOT EXISTS entries (uuid TEXT NOT NULL, time INTEGER NOT NULL, "key" TEXT NOT NULL, value,
    PRIMARY KEY (uuid, time, "key"));
CREATE TABLE IF NOT EXISTS status (uuid TEXT NOT NULL, "key" TEXT NOT NULL, value,
    PRIMARY KEY (uuid, "key"));
`

// DB is an SQLite log database.
type DB struct {
	db *sql.DB
	// synced is, per run, the first iteration whose row may still change.
	synced map[string]int
}

// Open opens (creating when missing) the SQLite log database at path.
// Another process may write the same database (a second run, a
// dashboard's stop request): a write waits up to 10 s for the other
// writer instead of failing at once.
func Open(path string) (*DB, error) {
	db, err := sql.Open("sqlite", BusyDSN(path))
	if err != nil {
		return nil, fmt.Errorf("opening the log database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("creating the log tables in %s: %w", path, err)
	}
	return &DB{db: db, synced: map[string]int{}}, nil
}

// OpenReadOnly opens an existing log database for reading only: no
// table is created and the file's journal mode is left as it is (plot
// and other reading commands).
func OpenReadOnly(path string) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("opening the log database: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: abs}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("opening the log database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return &DB{db: db, synced: map[string]int{}}, nil
}

// BusyDSN is the data source name that opens path with a busy timeout
// of 10 s (a path holding '?' is given as a file: URI).
func BusyDSN(path string) string {
	if strings.ContainsAny(path, "?#") {
		return "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(10000)"
	}
	return path + "?_pragma=busy_timeout(10000)"
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// encode is the stored form of a log value.
func encode(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return x, nil
		}
	case float32:
		if f := float64(x); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, nil
		}
	case string:
		return x, nil
	}
	if f, ok := scalar(v); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f, nil
	}
	b, err := json.Marshal(mainloop.JSONValue(v))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// scalar reads a 0-d array as a float (Blocks stores 0-d numpy values as
// floats).
func scalar(v any) (float64, bool) {
	type flat interface {
		NDim() int
		Flat(int) float64
	}
	if a, ok := v.(flat); ok && a.NDim() == 0 {
		return a.Flat(0), true
	}
	return 0, false
}

func decode(v any) (any, error) {
	switch x := v.(type) {
	case []byte:
		dec := json.NewDecoder(strings.NewReader(string(x)))
		dec.UseNumber()
		var out any
		if err := dec.Decode(&out); err != nil {
			return nil, fmt.Errorf("decoding a stored value: %w", err)
		}
		return mainloop.FromJSON(out), nil
	case int64:
		return int(x), nil
	}
	return v, nil
}

// Sync stores the log's rows from the first one that may have changed
// since the last Sync of this run, and its whole status. It is the main
// loop's LogBackend method.
func (d *DB) Sync(l *mainloop.TrainingLog) error {
	from := d.synced[l.UUID]
	if err := d.write(l, from); err != nil {
		return err
	}
	// Extensions write to the current row only: rows before it are final.
	d.synced[l.UUID] = l.Status.IterationsDone
	return nil
}

// Save stores the whole log (every row and the status) under its UUID.
func (d *DB) Save(l *mainloop.TrainingLog) error { return d.write(l, 0) }

func (d *DB) write(l *mainloop.TrainingLog, from int) (err error) {
	tx, err := d.db.Begin()
	if err != nil {
		return fmt.Errorf("log database: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	ins, err := tx.Prepare(`INSERT OR REPLACE INTO entries (uuid, time, "key", value) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("log database: %w", err)
	}
	defer ins.Close()
	for _, it := range l.Iterations() {
		if it < from {
			continue
		}
		row, _ := l.Lookup(it)
		for k, v := range row {
			ev, err := encode(v)
			if err != nil {
				return fmt.Errorf("log database: record %q of iteration %d: %w", k, it, err)
			}
			if _, err := ins.Exec(l.UUID, it, k, ev); err != nil {
				return fmt.Errorf("log database: %w", err)
			}
		}
	}
	if _, err := tx.Exec(`DELETE FROM status WHERE uuid = ?`, l.UUID); err != nil {
		return fmt.Errorf("log database: %w", err)
	}
	for _, k := range l.Status.Keys() {
		v, _ := l.Status.Get(k)
		ev, err := encode(v)
		if err != nil {
			return fmt.Errorf("log database: status %q: %w", k, err)
		}
		if _, err := tx.Exec(`INSERT INTO status (uuid, "key", value) VALUES (?, ?, ?)`, l.UUID, k, ev); err != nil {
			return fmt.Errorf("log database: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("log database: %w", err)
	}
	return nil
}

// Load reads the run uuid: its status, and the records of it and of every
// run it was resumed from.
func (d *DB) Load(uuid string) (*mainloop.TrainingLog, error) {
	l := mainloop.NewTrainingLog()
	l.UUID = uuid
	rows, err := d.db.Query(`SELECT "key", value FROM status WHERE uuid = ?`, uuid)
	if err != nil {
		return nil, fmt.Errorf("log database: %w", err)
	}
	n := 0
	for rows.Next() {
		var k string
		var v any
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("log database: %w", err)
		}
		gv, err := decode(v)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if k == mainloop.StatusEpochEnds {
			gv = ints(gv)
		}
		if err := l.Status.Set(k, gv); err != nil {
			rows.Close()
			return nil, fmt.Errorf("log database: %w", err)
		}
		n++
	}
	rows.Close()
	if n == 0 {
		return nil, fmt.Errorf("log database: no run %s", uuid)
	}
	q, args := d.chain(uuid)
	erows, err := d.db.Query(q+`SELECT entries.time, entries."key", entries.value FROM entries JOIN chain ON entries.uuid = chain.uuid
        ORDER BY chain.depth DESC, entries.time`, args...)
	if err != nil {
		return nil, fmt.Errorf("log database: %w", err)
	}
	defer erows.Close()
	for erows.Next() {
		var it int
		var k string
		var v any
		if err := erows.Scan(&it, &k, &v); err != nil {
			return nil, fmt.Errorf("log database: %w", err)
		}
		gv, err := decode(v)
		if err != nil {
			return nil, err
		}
		r, _ := l.Row(it)
		r[k] = gv
	}
	return l, erows.Err()
}

// chain is a WITH clause that makes the table chain(uuid, depth): the run
// uuid (depth 0) and the runs it continues (mainloop.ResumedChain), and
// its arguments. A chain that stops at a run this database does not hold
// (it logged elsewhere) or at a cycle (a forged database) has the runs it
// reached.
func (d *DB) chain(uuid string) (string, []any) {
	runs, _ := mainloop.ResumedChain(uuid, d.resumedFrom)
	var q strings.Builder
	q.WriteString("WITH chain(uuid, depth) AS (VALUES ")
	args := make([]any, 0, 2*len(runs))
	for depth, u := range runs {
		if depth > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?)")
		args = append(args, u, depth)
	}
	q.WriteString(")\n")
	return q.String(), args
}

// resumedFrom is run uuid's resumed_from ("" when none) and whether the
// database holds the run (mainloop.ResumedChain's parent).
func (d *DB) resumedFrom(uuid string) (string, bool) {
	var v any
	err := d.db.QueryRow(`SELECT value FROM status WHERE uuid = ? AND "key" = 'resumed_from'`, uuid).Scan(&v)
	if err == nil {
		p, _ := v.(string)
		return p, true
	}
	var one int
	return "", d.db.QueryRow(`SELECT 1 FROM status WHERE uuid = ? LIMIT 1`, uuid).Scan(&one) == nil
}

func ints(v any) []int {
	type flat interface {
		Size() int
		Flat(int) float64
	}
	switch x := v.(type) {
	case flat:
		out := make([]int, x.Size())
		for i := range out {
			out[i] = int(x.Flat(i))
		}
		return out
	case []any:
		var out []int
		for _, e := range x {
			if n, ok := e.(int); ok {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}

// Channel returns, for the run uuid and its ancestors, the iterations at
// which record key holds a number and the values, by iteration (a later
// run's value winning), computed by SQL.
func (d *DB) Channel(uuid, key string) (iterations []int, values []float64, err error) {
	q, args := d.chain(uuid)
	rows, err := d.db.Query(q+`SELECT entries.time, entries.value FROM entries JOIN chain ON entries.uuid = chain.uuid
        WHERE entries."key" = ? AND typeof(entries.value) IN ('integer', 'real')
        ORDER BY entries.time, chain.depth DESC`, append(args, key)...)
	if err != nil {
		return nil, nil, fmt.Errorf("log database: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var it int
		var v float64
		if err := rows.Scan(&it, &v); err != nil {
			return nil, nil, fmt.Errorf("log database: %w", err)
		}
		if n := len(iterations); n > 0 && iterations[n-1] == it {
			values[n-1] = v // a later run overrides
			continue
		}
		iterations = append(iterations, it)
		values = append(values, v)
	}
	return iterations, values, rows.Err()
}

// Runs lists the UUIDs of the runs in the database, sorted.
func (d *DB) Runs() ([]string, error) {
	rows, err := d.db.Query(`SELECT DISTINCT uuid FROM status`)
	if err != nil {
		return nil, fmt.Errorf("log database: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	sort.Strings(out)
	return out, rows.Err()
}

// Lazy is a log backend that opens the database at Path on its first
// Sync; Close closes it until the next Sync (a main loop run again reopens
// it).
type Lazy struct {
	Path string
	db   *DB
}

// Sync opens the database when needed and stores the log.
func (z *Lazy) Sync(l *mainloop.TrainingLog) error {
	if z.db == nil {
		db, err := Open(z.Path)
		if err != nil {
			return err
		}
		z.db = db
	}
	return z.db.Sync(l)
}

// Close closes the database if it is open.
func (z *Lazy) Close() error {
	if z.db == nil {
		return nil
	}
	err := z.db.Close()
	z.db = nil
	return err
}
