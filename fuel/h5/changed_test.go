//go:build cgo

package h5

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// changedFile writes a 1000×64 float32 source (256 KiB) and opens it out
// of core.
func changedFile(t *testing.T) (string, *H5PYDataset) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.hdf5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	x := nd.New(nd.Float32, 1000, 64)
	for i := range x.Data.([]float32) {
		x.Data.([]float32)[i] = float32(i%97) + 1
	}
	if err := w.CreateSource("x", nd.Float32, x.Shape, []string{"batch", "feature"}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRows("x", 0, x); err != nil {
		t.Fatal(err)
	}
	w.AddSplit(SplitDef{Name: "all", Start: 0, Stop: 1000})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, []string{"all"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.GetData(fuel.Request{Start: 0, Stop: 100}); err != nil {
		t.Fatal(err)
	}
	return path, d
}

func wantChanged(t *testing.T, d *H5PYDataset, path, what string) {
	t.Helper()
	_, err := d.GetData(fuel.Request{Start: 900, Stop: 1000})
	if err == nil {
		t.Fatalf("%s: no error from a read", what)
	}
	if !errors.Is(err, ErrFileChanged) || !strings.Contains(err.Error(), path) {
		t.Errorf("%s: error %q does not say the file changed or does not name it", what, err)
	}
	t.Logf("%s: %v", what, err)
}

// A file truncated under a running epoch: the next read fails with an
// error that names the file (HDF5 alone would read zeros past the end).
func TestFileTruncatedUnderEpoch(t *testing.T) {
	path, d := changedFile(t)
	if err := os.Truncate(path, 64<<10); err != nil {
		t.Fatal(err)
	}
	wantChanged(t, d, path, "truncated")
}

// A file rewritten in place (same size, new contents and time).
func TestFileRewrittenUnderEpoch(t *testing.T) {
	path, d := changedFile(t)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	if _, err := f.WriteAt(make([]byte, 4096), st.Size()-4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, future, future); err != nil { // a coarse clock could keep the old time
		t.Fatal(err)
	}
	wantChanged(t, d, path, "rewritten")
}

// A file removed under a running epoch.
func TestFileRemovedUnderEpoch(t *testing.T) {
	path, d := changedFile(t)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	wantChanged(t, d, path, "removed")
}
