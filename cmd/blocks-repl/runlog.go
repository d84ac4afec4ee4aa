package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/blocks-go/blocks/cmd/dashboard"
	"github.com/blocks-go/blocks/starlib"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/mainloop"
	"github.com/blocks-go/blocks/train/sqlitelog"
)

// execWithLog runs a script as starlib.ExecFile does and, when logPath is
// set, writes the training log of the main loops it made: to an SQLite
// database as training goes (.sqlite, .sqlite3, .db), or at the end, also
// when the script failed, as JSON lines (.jsonl, .json, anything else) or
// CSV (.csv) for the last main loop.
func execWithLog(script string, src []byte, opts starlib.Options, logPath string, stderr io.Writer) error {
	in, err := starlib.NewInterp(opts)
	if err != nil {
		return err
	}
	defer scriptInterrupts(in, stderr)()
	ext := strings.ToLower(filepath.Ext(logPath))
	sqlite := ext == ".sqlite" || ext == ".sqlite3" || ext == ".db"
	loops := observeLogs(in, logPath, script, src, opts, stderr)
	_, err = in.ExecFile(script, src)
	if err == nil {
		err = in.CheckOverrides()
	}
	if logPath == "" || sqlite {
		return err
	}
	if len(*loops) == 0 {
		fmt.Fprintf(stderr, "blocks-repl: --log %s: the script made no main loop; no log written\n", logPath)
		return err
	}
	if werr := writeLogFile(logPath, ext, (*loops)[len(*loops)-1].Log); werr != nil {
		fmt.Fprintf(stderr, "blocks-repl: %v\n", werr)
		if err == nil {
			err = werr
		}
	}
	return err
}

// writeLogFile writes l atomically (a temporary file renamed into place).
func writeLogFile(path, ext string, l *mainloop.TrainingLog) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing the log: %w", err)
	}
	defer os.Remove(tmp.Name())
	if ext == ".csv" {
		err = l.WriteCSV(tmp)
	} else {
		err = l.WriteJSONLines(tmp)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// CreateTemp makes 0600; a log is an ordinary output (0644 less
		// the umask, as os.Create makes it).
		err = os.Chmod(tmp.Name(), os.FileMode(0o644&^umask()))
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing the log %s: %w", path, err)
	}
	return nil
}

// absPath is p made absolute (p itself when that fails).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// observeLogs watches the main loops a script on in makes: an SQLite
// logPath becomes their log backend, and every SQLite log backend
// (logPath, or MainLoop(log_backend="sqlite")) gets the dashboard's agent
// (wall times, a heartbeat, stop requests), except in a data-parallel job:
// a stop seen by one process alone would leave the others waiting in the
// next reduction. It returns the main loops seen.
func observeLogs(in *starlib.Interp, logPath, script string, src []byte, opts starlib.Options, stderr io.Writer) *[]*mainloop.MainLoop {
	loops := &[]*mainloop.MainLoop{}
	ext := strings.ToLower(filepath.Ext(logPath))
	sqlite := ext == ".sqlite" || ext == ".sqlite3" || ext == ".db"
	par := run.ParallelOf(in.Thread)
	single := par == nil || par.Comm == nil || par.Comm.Size() == 1
	starblocks.SetMainLoopObserver(in.Thread, func(m *mainloop.MainLoop) {
		*loops = append(*loops, m)
		if sqlite {
			// Opened at the first sync, closed when run() returns.
			m.LogBackend = &sqlitelog.Lazy{Path: logPath}
		}
		if lz, ok := m.LogBackend.(*sqlitelog.Lazy); ok && single {
			m.LogBackend = &dashboard.Agent{Backend: lz, Path: lz.Path, Messages: stderr,
				Info: dashboard.RunInfo{ScriptPath: absPath(script), Script: src, Overrides: opts.Overrides, Command: os.Args}}
		}
	})
	return loops
}
