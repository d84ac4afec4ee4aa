package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/blocks-go/blocks/nd"
)

// The streamed file (Encode, and WriteFile into a file) has the bytes
// of the whole-file encoder this package had before, on a checkpoint
// with every dtype an .npz member carries, empty and 0-d arrays, several
// scripts and a log.
func TestStreamedBytesEqualWholeFile(t *testing.T) {
	c := sample(t)
	c.Manifest.Created = "2026-12-06T00:00:00Z"
	extra := []*nd.Array{nd.FromSlice([]float64{1.5, -2, 3}), nd.FromSlice([]int64{7, -8}, 1, 2), nd.FromSlice([]int32{1 << 30}),
		nd.FromSlice([]int16{-3}), nd.FromSlice([]uint16{65535}), nd.FromSlice([]uint8{1, 2, 3}), nd.FromSlice([]bool{true, false}),
		nd.New(nd.Float32, 0, 4), nd.Scalar(nd.Float32, 2.5), nd.New(nd.Int8, 3*chunkElems+5), nd.New(nd.Bool, 2*chunkElems+3),
		nd.New(nd.Float32, 70000)}
	// Arrays of several chunks: bool's data is encoded a chunk at a time.
	for i := range extra[len(extra)-3].Data.([]int8) {
		extra[len(extra)-3].Data.([]int8)[i] = int8(i*7 + i/chunkElems)
	}
	for i := range extra[len(extra)-2].Data.([]bool) {
		extra[len(extra)-2].Data.([]bool)[i] = (i/chunkElems)%2 == 0 && i%3 == 0
	}
	for i, a := range extra {
		c.AlgorithmState = append(c.AlgorithmState, Named{fmt.Sprintf("%03d:extra%d", len(c.AlgorithmState), i), a})
	}
	for i := range extra[len(extra)-1].F32() {
		extra[len(extra)-1].F32()[i] = float32(i) * 0.25
	}
	want, err := c.encodeWholeFile()
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode: %d bytes differ from the whole-file encoder's %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	path := filepath.Join(t.TempDir(), "c.tar")
	if err := WriteFile(path, c, WriteOptions{KeepLast: 1, PrevIteration: -1}); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, want) {
		t.Fatalf("WriteFile: %d bytes differ from the whole-file encoder's %d (first difference at %d)", len(file), len(want), firstDiff(file, want))
	}
	// An empty algorithm state (plain SGD's) is an empty .npz.
	c.AlgorithmState = nil
	want, _ = c.encodeWholeFile()
	if got, _ = c.Encode(); !bytes.Equal(got, want) {
		t.Fatalf("Encode without algorithm state: %d bytes differ from the whole-file encoder's %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	for i, a := range extra {
		c.AlgorithmState = append(c.AlgorithmState, Named{fmt.Sprintf("%03d:extra%d", i, i), a})
	}
	// And the .npz alone.
	a, err := EncodeNPZ(c.AlgorithmState)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := encodeNPZWholeFile(c.AlgorithmState)
	if !bytes.Equal(a, b) {
		t.Fatal("EncodeNPZ differs from the whole-file encoder")
	}
	if n, _ := npzSize(c.AlgorithmState); n != int64(len(a)) {
		t.Errorf("npzSize %d, the archive has %d bytes", n, len(a))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestPipeHashCopiesReusedBuffers: bytes outside the stable memory are
// copied before the hashing goroutine reads them, so a writer that
// reuses its buffer (the zip and tar writers do) still gets the digest
// of what it wrote; bytes inside it are hashed in place.
func TestPipeHashCopiesReusedBuffers(t *testing.T) {
	stable := make([]byte, 1<<20)
	for i := range stable {
		stable[i] = byte(i * 7)
	}
	want := sha256.New()
	h := startHash([][]byte{stable})
	buf := make([]byte, 200<<10)
	for round := 0; round < 20; round++ {
		for i := range buf {
			buf[i] = byte(round + i)
		}
		h.Write(buf)
		want.Write(buf)
		part := stable[round*(32<<10) : round*(32<<10)+(100<<10)]
		h.Write(part)
		want.Write(part)
	}
	if got := h.sum(); !bytes.Equal(got, want.Sum(nil)) {
		t.Fatalf("digest %x, want %x", got, want.Sum(nil))
	}
}

// A save replacing a checkpoint holds the replaced file open across the
// rename (its release then happens after the save) and closes it: no
// descriptor is left behind, and the path holds the new checkpoint.
func TestWriteFileClosesTheReplacedFile(t *testing.T) {
	c, _ := benchCheckpoint(1)
	path := filepath.Join(t.TempDir(), "c.tar")
	openFDs := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(fds)
	}
	if err := WriteFile(path, c, WriteOptions{PrevIteration: -1}); err != nil {
		t.Fatal(err)
	}
	// No collection: an *os.File dropped unclosed is closed by the
	// collector, which would hide a leak.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := openFDs()
	for i := range 5 {
		c.Manifest.IterationsDone = i + 1
		if err := WriteFile(path, c, WriteOptions{KeepLast: 1, PrevIteration: i}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for openFDs() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := openFDs(); n > before {
		t.Errorf("%d descriptors open after 5 saves, %d before", n, before)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Manifest.IterationsDone != 5 {
		t.Errorf("the path holds iteration %d, want 5", got.Manifest.IterationsDone)
	}
}
