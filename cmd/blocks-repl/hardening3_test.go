package main

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core/checkpoint"
)

// sqliteFile makes a small SQLite database at path (one table, one row)
// and returns its bytes.
func sqliteFile(t *testing.T, path string) []byte {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE accounts (name TEXT); INSERT INTO accounts VALUES ('alice');"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestResumeDashboardLogFromCheckpoint: resume --dashboard without --log
// took the log path from the checkpoint's recorded command line, which no
// write check saw: a forged manifest (resealed, as anyone can) made a
// confined resume add the log's tables to any SQLite database and switch
// it to WAL. That path is now checked as the script's writes are, and
// only a new file in the run directory is created.
func TestResumeDashboardLogFromCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	_, good := sbCheckpoint(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.db")
	for _, c := range []struct {
		name, log, want string
		args            []string
		code            int
	}{
		{"outside", victim, "outside the run directory", nil, 1},
		{"users-db", "users.db", "users.db: the file exists and this run did not create it", nil, 1},
		{"symlink-out", "link.db", "link.db: the file exists", nil, 1},
		{"new-log", "fresh.sqlite", "", nil, 0},
		{"named-by-user", "users.db", "", []string{"--log", "users.db"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Remove(victim)
			want := sqliteFile(t, victim)
			users := sqliteFile(t, filepath.Join(dir, "users.db"))
			// A dangling link: CheckWrite resolves what exists, and
			// SQLite would create its target outside.
			os.Symlink(filepath.Join(outside, "made.db"), filepath.Join(dir, "link.db"))
			forged := resealManifest(t, good, func(m *checkpoint.Manifest) {
				m.Command = []string{"blocks-repl", "run", "--log", c.log, "exp.star"}
			})
			if err := os.WriteFile(filepath.Join(dir, "run.tar"), forged, 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{"resume", "--dashboard"}, c.args...), "--set", "epochs=2", "run.tar")
			code, _, errs := runBinIn(t, dir, nil, args...)
			noGoTrace(t, errs)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("status %d, stderr:\n%s", code, errs)
			}
			if b, _ := os.ReadFile(victim); !bytes.Equal(b, want) {
				t.Errorf("%s was modified", victim)
			}
			if exists(victim+"-wal") || exists(victim+"-shm") || exists(filepath.Join(outside, "made.db")) {
				t.Errorf("the resume wrote beside %s", victim)
			}
			if code == 1 {
				if !strings.Contains(errs, "--log "+c.log) {
					t.Errorf("the error does not say how to continue that log:\n%s", errs)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "users.db")); !bytes.Equal(b, users) {
					t.Error("users.db was modified")
				}
				return
			}
			if !exists(filepath.Join(dir, c.log)) {
				t.Errorf("the resumed run wrote no log %s", c.log)
			}
		})
	}
}

// TestConfinedWritesOnlyItsOwnFiles: numpy.save (and every other writer
// but Checkpoint, which replaces only checkpoints) from a confined resume
// overwrote a user's files in the run directory. A confined run now
// creates files and rewrites only those it created.
func TestConfinedWritesOnlyItsOwnFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	_, good := sbCheckpoint(t)
	for _, c := range []struct{ name, attack, victim string }{
		{"numpy.save", `load("numpy", "save"); save("mine", zeros((2,))); save("mine.npy", zeros((3,))); save("results", zeros((3,)))`, "results.npy"},
		{"fill_hdf5_file", `fill_hdf5_file("mine.hdf5", [("train", "features", zeros((2, 2)))]); fill_hdf5_file("data.hdf5", [("train", "features", zeros((2, 2)))])`, "data.hdf5"},
		{"h5py.File", `load("h5py", "File"); File("data.hdf5", "w")`, "data.hdf5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(dir, c.victim)
			if err := os.WriteFile(victim, []byte("the user's results\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			forge(t, good, c.attack, filepath.Join(dir, "run.tar"))
			code, _, errs := runBinIn(t, dir, nil, "resume", "--set", "epochs=2", "run.tar")
			noGoTrace(t, errs)
			if code != 1 || !strings.Contains(errs, c.victim+": the file exists and this run did not create it") || !strings.Contains(errs, "exp.star:18") {
				t.Errorf("status %d, stderr:\n%s", code, errs)
			}
			if b, _ := os.ReadFile(victim); string(b) != "the user's results\n" {
				t.Errorf("%s was overwritten (%d bytes)", c.victim, len(b))
			}
			if strings.HasPrefix(c.attack, "fill") && !exists(filepath.Join(dir, "mine.hdf5")) || strings.Contains(c.attack, `"mine"`) && !exists(filepath.Join(dir, "mine.npy")) {
				t.Error("the run could not write a file of its own")
			}
		})
	}
	// --trust lifts the rule, as it lifts the run directory's.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "results.npy"), []byte("the user's results\n"), 0o644)
	forge(t, good, `load("numpy", "save"); save("results", zeros((3,)))`, filepath.Join(dir, "run.tar"))
	if code, _, errs := runBinIn(t, dir, nil, "resume", "--trust", "--set", "epochs=2", "run.tar"); code != 0 {
		t.Errorf("--trust: status %d, stderr:\n%s", code, errs)
	}
}
