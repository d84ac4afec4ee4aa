package checkpoint

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// bigForeignTar writes a tar file of size bytes (sparse on disk) whose
// one member, data.bin, fills it: what a dataset archive beside the
// checkpoints looks like to a dashboard that searches a directory.
func bigForeignTar(t *testing.T, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dataset.tar")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	if err := tw.WriteHeader(&tar.Header{Name: "data.bin", Mode: 0o644, Size: size - 2048, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // the member's data: holes
		t.Fatal(err)
	}
	return path
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestReadRefusesForeignTarUnread: a 4 GiB tar file that is not a
// checkpoint is refused after its first header, by ReadSummary (the
// dashboard) and by Read (inspect, resume): it once was read whole (8.4
// GB resident).
func TestReadRefusesForeignTarUnread(t *testing.T) {
	path := bigForeignTar(t, 4<<30)
	for name, read := range map[string]func() error{
		"ReadSummary": func() error { _, err := ReadSummary(path, 1<<20); return err },
		"Read":        func() error { _, err := Read(path); return err },
	} {
		var err error
		n := allocated(func() { err = read() })
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `the first member is "data.bin", not manifest.json`) {
			t.Errorf("%s: %v", name, err)
		}
		if n > 1<<20 {
			t.Errorf("%s allocated %d bytes refusing a foreign tar file", name, n)
		}
	}
}

// TestReadSummary: the summary of a checkpoint has its manifest, config,
// scripts and log as Read gives them, reading none of the parameters; a
// modified log or checksum is refused, and so are config, scripts and
// log larger than the limit, unread.
func TestReadSummary(t *testing.T) {
	c := sample(t)
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.tar")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ReadSummary(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sum.Manifest, full.Manifest) || !reflect.DeepEqual(sum.Run, full.Run) || !reflect.DeepEqual(sum.Log, full.Log) {
		t.Error("the summary differs from the checkpoint")
	}
	if sum.Parameters != nil || sum.AlgorithmState != nil {
		t.Error("the summary read the parameters")
	}
	small := int64(0)
	for _, m := range full.Manifest.Members {
		if m.Name == MemberLog {
			small = m.Size
		}
	}
	if _, err := ReadSummary(path, small); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "take more than") {
		t.Errorf("over the limit: %v", err)
	}
	logAt := strings.Index(string(data), `"rows"`)
	bad := []byte(string(data))
	bad[logAt+1] ^= 1
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSummary(path, 1<<20); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "log.json does not match its SHA-256") {
		t.Errorf("a modified log: %v", err)
	}
	// A checkpoint file with more than its manifest lists is refused by
	// Read before it is read whole.
	if err := os.WriteFile(path, append(data, make([]byte, 1<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "its manifest lists") {
		t.Errorf("a file longer than its manifest: %v", err)
	}
}
