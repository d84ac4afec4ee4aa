package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// directReader gives the file's bytes at any offset and length, the
// file's last bytes (its end within a block) included.
func TestDirectReaderUnaligned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	want := make([]byte, 3*directAlign+1234)
	for i := range want {
		want[i] = byte(i*7 + i>>8)
	}
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := newDirectReader(f, 2*directAlign)
	if r == nil {
		t.Skip("O_DIRECT is refused here: the readers use the page cache")
	}
	defer r.close()
	for _, c := range []struct{ off, n int }{
		{0, 10}, {1, directAlign}, {directAlign - 1, 2}, {100, 2 * directAlign},
		{len(want) - 2*directAlign, 2 * directAlign}, {len(want) - 1, 1}, {3 * directAlign, 1234},
	} {
		got := make([]byte, c.n)
		if err := r.readAt(got, int64(c.off)); err != nil {
			t.Errorf("readAt(%d, %d): %v", c.off, c.n, err)
			continue
		}
		if !bytes.Equal(got, want[c.off:c.off+c.n]) {
			t.Errorf("readAt(%d, %d) differs from the file", c.off, c.n)
		}
	}
	if err := r.readAt(make([]byte, 10), int64(len(want)-5)); err == nil {
		t.Error("a read past the end succeeded")
	}
}
