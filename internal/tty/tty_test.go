package tty

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/creack/pty"
)

// A pseudo-terminal's two ends are terminals to the reader and the writer
// that hold them; a regular file, a pipe, a buffer and nil are not.
func TestIs(t *testing.T) {
	ptmx, tt, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tt.Close()
	if !Is(tt) {
		t.Error("the pty's tty is not a terminal")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var nilFile *os.File
	for name, v := range map[string]any{"file": f, "pipe reader": r, "pipe writer": w, "buffer": new(bytes.Buffer), "nil": nil, "nil file": nilFile} {
		if Is(v) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
