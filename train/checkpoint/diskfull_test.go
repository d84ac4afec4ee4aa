package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A full disk during a checkpoint write (injected: the second half of the
// write fails with ENOSPC): Write returns an error naming the checkpoint
// and the cause, the previous checkpoint is untouched, no temporary file
// is left behind and no older checkpoint is rotated away.
func TestWriteDiskFullKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.tar")
	if err := Write(path, []byte("first checkpoint"), WriteOptions{KeepLast: 2, PrevIteration: -1}); err != nil {
		t.Fatal(err)
	}
	full := func(f *os.File, b []byte) (int, error) {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	err := Write(path, []byte("second checkpoint, never complete"), WriteOptions{KeepLast: 2, PrevIteration: 1, writeSecondHalf: full})
	if err == nil {
		t.Fatal("no error from a write to a full disk")
	}
	if msg := err.Error(); !strings.Contains(msg, "writing "+path) || !strings.Contains(msg, "no space left on device") {
		t.Errorf("error %q does not name the checkpoint and the cause", msg)
	}
	b, rerr := os.ReadFile(path)
	if rerr != nil || !bytes.Equal(b, []byte("first checkpoint")) {
		t.Errorf("the previous checkpoint is %q (%v)", b, rerr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %v, want only run.tar", names)
	}
}
