package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/train/checkpoint"
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

// pyExternalEnviron writes a Fuel file (split train: 4 rows of the uint8
// source features, (4, 8)) whose features are stored, through HDF5
// external storage, in /proc/self/environ: the reading process's
// environment. argv[2] is the user block's size (0 or 512).
const pyExternalEnviron = `
import h5py, numpy as np, sys
ref = h5py.special_dtype(ref=h5py.Reference)
with h5py.File(sys.argv[1], 'w', userblock_size=int(sys.argv[2])) as f:
    f.create_dataset('features', shape=(4, 8), dtype='u1', external=[('/proc/self/environ', 0, 32)])
    f.attrs['split'] = np.array([(b'train', b'features', 0, 4, h5py.Reference(), True, b'.')],
        dtype=[('split', 'S5'), ('source', 'S8'), ('start', '<i8'), ('stop', '<i8'), ('indices', ref), ('available', '?'), ('comment', 'S1')])
`

// TestHDF5ExternalDataRefused: a script wrote, with numpy.save, an .npy
// that is also an HDF5 file (its HDF5 data after a 512-byte user block)
// whose dataset's storage is /proc/self/environ; CheckRead allowed the
// file in the run directory, then libhdf5 opened the environment itself
// and the script printed it. Such files are refused now, in a confined
// resume and in a plain run alike, with an error that names what the
// file points to; the script never gets the data.
func TestHDF5ExternalDataRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py, numpy").Run(); err != nil {
		t.Skipf("%s with h5py is needed (apt-get install python3-h5py): %v", py, err)
	}
	src := t.TempDir()
	for _, ub := range []string{"0", "512"} {
		if out, err := exec.Command(py, "-c", pyExternalEnviron, filepath.Join(src, "ext"+ub+".hdf5"), ub).CombinedOutput(); err != nil {
			t.Fatalf("h5py: %v\n%s", err, out)
		}
	}
	// The .npy route: numpy.save writes a 128-byte header, then the
	// array; the user block covers the header.
	hdf, err := os.ReadFile(filepath.Join(src, "ext512.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	var ints []string
	for _, b := range hdf[128:] {
		ints = append(ints, strconv.Itoa(int(b)))
	}
	read := `d = H5PYDataset("%s", which_sets = ("train",), load_in_memory = True); print("LEAKED", d.get_data(None, slice(0, 4)))`
	viaNpy := `load("numpy", "save", "array"); save("evil", array([` + strings.Join(ints, ", ") + `], dtype = "uint8")); ` + fmt.Sprintf(read, "evil.npy")
	_, good := sbCheckpoint(t)
	for _, c := range []struct {
		name, attack, want string
		resume             bool
	}{
		{"resume-npy", viaNpy, "the HDF5 data starts 512 bytes into the file, after a user block", true},
		{"resume-external", fmt.Sprintf(read, "ext0.hdf5"), "its data lies outside the file, in /proc/self/environ (HDF5 external storage, 1 file)", true},
		{"run-external", fmt.Sprintf(read, "ext0.hdf5"), "its data lies outside the file, in /proc/self/environ (HDF5 external storage, 1 file)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			b, _ := os.ReadFile(filepath.Join(src, "ext0.hdf5"))
			os.WriteFile(filepath.Join(dir, "ext0.hdf5"), b, 0o644)
			args := []string{"resume", "--set", "epochs=2", "run.tar"}
			if c.resume {
				forge(t, good, c.attack, filepath.Join(dir, "run.tar"))
			} else {
				os.WriteFile(filepath.Join(dir, "exp.star"), []byte(strings.Replace(sbScript, "#ATTACK", c.attack, 1)), 0o644)
				args = []string{"run", "exp.star"}
			}
			code, out, errs := runBinIn(t, dir, []string{"BLOCKS_TEST_SECRET=do-not-print"}, args...)
			noGoTrace(t, errs)
			if code != 1 || !strings.Contains(errs, c.want) || !strings.Contains(errs, "refused: only data stored in the HDF5 file itself is read") || !strings.Contains(errs, "exp.star:18") {
				t.Errorf("status %d, stderr:\n%s", code, errs)
			}
			if strings.Contains(out, "LEAKED") {
				t.Errorf("the script read the environment:\n%s", out)
			}
		})
	}
}

// TestMaxMemorySizes: --max-memory 1P said "want a positive size"; the
// units go up to E now, and each refusal says what is wrong.
func TestMaxMemorySizes(t *testing.T) {
	for in, want := range map[string]uint64{"1P": 1 << 50, "1E": 1 << 60, "4E": 1 << 62, "1.5G": 3 << 29, "512MiB": 512 << 20, "100": 100} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"8E":  "8E is more than any memory (at most 4E, 2^62 bytes)",
		"1Z":  `want a size such as 512M or 8G (a number, then K, M, G, T, P or E), got "1Z"`,
		"x":   `want a size such as 512M or 8G (a number, then K, M, G, T, P or E), got "x"`,
		"NaN": `got "NaN"`,
		"0":   "want a positive size such as 512M or 8G, got 0",
		"-1G": "want a positive size such as 512M or 8G, got -1G",
	} {
		if _, err := parseSize(in); err == nil || err.Error() != want && !strings.Contains(err.Error(), want) {
			t.Errorf("parseSize(%q): %v, want %q", in, err, want)
		}
	}
}

// TestNPBoundedAndLocal: --np had no upper bound, and the processes of a
// job on this host listened on every interface (Open MPI's TCP
// transport): mpirun now gets shared memory only and the loopback
// network for its own channel.
func TestNPBoundedAndLocal(t *testing.T) {
	_, _, err := takeDistFlags([]string{"--np", "1000000", "exp.star"})
	if err == nil || !strings.Contains(err.Error(), "--np 1000000: at most ") {
		t.Errorf("--np 1000000: %v", err)
	}
	if _, d, err := takeDistFlags([]string{"--np=4", "exp.star"}); err != nil || d.np != 4 {
		t.Errorf("--np=4: %v %+v", err, d)
	}
	argv, err := mpirunCommand(2, "run", []string{"exp.star"})
	if err != nil {
		t.Skipf("no mpirun here: %v", err)
	}
	cmd := strings.Join(argv, " ")
	for _, want := range []string{" -np 2 ", " --mca btl self,vader ", " --mca oob_tcp_if_include 127.0.0.0/8 "} {
		if !strings.Contains(cmd, want) {
			t.Errorf("mpirun command %q lacks %q", cmd, want)
		}
	}
}
