package datasets

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idx files are read whole when a dataset opens (MNIST keeps them in
// memory), so a file changed later cannot reach a running epoch; one
// truncated before (a partial download, a full disk) gives an error that
// names the file, plain or gzipped, never a panic.
func TestTruncatedIDXNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	whole := []byte{0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(whole)
	zw.Close()
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"plain-idx3-ubyte", whole[:len(whole)-3]},
		{"header-idx3-ubyte", whole[:10]},
		{"zipped-idx3-ubyte.gz", gz.Bytes()[:gz.Len()-6]},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadIDXFile(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v does not name the file", c.name, err)
			continue
		}
		t.Logf("%s: %v", c.name, err)
	}
}
