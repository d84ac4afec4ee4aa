package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// A resume's checkpoint (ReadDeferred) holds no arrays until Restore
// reads them straight into the model's: the resumed run is the
// uninterrupted one, bit for bit, as with Read.
func TestReadDeferredRestoreMidEpoch(t *testing.T) {
	ref, refB := newLoop(t, finishAfter(t, 15))
	if err := ref.Run(); err != nil {
		t.Fatal(err)
	}
	first, firstB := newLoop(t, finishAfter(t, 9))
	if err := first.Run(); err != nil {
		t.Fatal(err)
	}
	c := mustCapture(t, firstB)
	c.Run.Scripts = []ScriptFile{{Path: "<go>", Source: []byte{}}}
	path := filepath.Join(t.TempDir(), "c.tar")
	if err := WriteFile(path, c, WriteOptions{PrevIteration: -1}); err != nil {
		t.Fatal(err)
	}
	c2, err := ReadDeferred(path)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Parameters != nil || c2.AlgorithmState != nil || len(c2.deferred) != 2 {
		t.Fatalf("ReadDeferred read the arrays: %d parameters, %d buffers, %d deferred", len(c2.Parameters), len(c2.AlgorithmState), len(c2.deferred))
	}
	if err := WriteFile(path+".2", c2, WriteOptions{PrevIteration: -1}); err == nil {
		t.Fatal("a checkpoint whose arrays are in its file was written")
	}
	second, secondB := newLoop(t, finishAfter(t, 15))
	if err := Restore(secondB, c2, Everything); err != nil {
		t.Fatal(err)
	}
	if diffs, err := Diff(secondB, c); err != nil || len(diffs) > 0 {
		t.Fatalf("restored state differs from the saved one: %v %v", diffs, err)
	}
	second.Log.Status.TrainingStarted = false
	if err := second.Run(); err != nil {
		t.Fatal(err)
	}
	if diffs, err := Diff(secondB, mustCapture(t, refB)); err != nil || len(diffs) > 0 {
		t.Errorf("resumed run differs from the uninterrupted one: %v %v", diffs, err)
	}
	// LoadArrays gives Read's arrays.
	if err := c2.LoadArrays(); err != nil {
		t.Fatal(err)
	}
	whole, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range whole.Parameters {
		if maxAbsDiff(n, c2.Parameters[i]) != 0 || n.Name != c2.Parameters[i].Name {
			t.Errorf("LoadArrays: parameter %s differs", n.Name)
		}
	}
	if len(whole.AlgorithmState) != len(c2.AlgorithmState) {
		t.Errorf("LoadArrays: %d buffers, Read %d", len(c2.AlgorithmState), len(whole.AlgorithmState))
	}
}

// An array changed in the file (after ReadDeferred or before) is refused
// when Restore reads it: its member's SHA-256 is checked as it passes.
func TestReadDeferredChangedFile(t *testing.T) {
	_, b := newLoop(t, finishAfter(t, 3))
	c := mustCapture(t, b)
	c.Run.Scripts = []ScriptFile{{Path: "<go>", Source: []byte{}}}
	path := filepath.Join(t.TempDir(), "c.tar")
	if err := WriteFile(path, c, WriteOptions{PrevIteration: -1}); err != nil {
		t.Fatal(err)
	}
	c2, err := ReadDeferred(path)
	if err != nil {
		t.Fatal(err)
	}
	d := c2.deferred[MemberParameters]
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0x7f}, d.off+d.arrays[0].off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, b2 := newLoop(t, finishAfter(t, 3))
	err = Restore(b2, c2, Everything)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "member _parameters does not match its SHA-256 in the manifest (the file was modified)") {
		t.Fatalf("Restore of a changed file: %v, want ErrCorrupt", err)
	}
	// Changed before it was read: the same.
	c3, err := ReadDeferred(path)
	if err != nil {
		t.Fatalf("ReadDeferred checks the arrays when they are restored: %v", err)
	}
	if err := Restore(b2, c3, Everything); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Restore of a changed file: %v, want ErrCorrupt", err)
	}
	// Read checks them at once.
	if _, err := Read(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read of a changed file: %v, want ErrCorrupt", err)
	}
}

// Arrays of several read pieces, read by parallel readers, arrive whole
// and in place, and their member's SHA-256 is computed in the file's
// order: a byte changed in any piece (or in the headers between the
// arrays, which are hashed too) is refused.
func TestReadDeferredPieces(t *testing.T) {
	c, _ := benchCheckpoint(1)
	big := nd.New(nd.Float32, (5*readPieceSize+123)/4) // 6 pieces, the last short
	for j := range big.F32() {
		big.F32()[j] = float32(j%9973) - 0.5
	}
	c.Parameters = append(c.Parameters, Named{"big", big}, Named{"small", nd.New(nd.Float32, 3)})
	path := filepath.Join(t.TempDir(), "c.tar")
	if err := WriteFile(path, c, WriteOptions{PrevIteration: -1}); err != nil {
		t.Fatal(err)
	}
	c2, err := ReadDeferred(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.LoadArrays(); err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Parameters {
		if got := c2.Parameters[i]; got.Name != n.Name || maxAbsDiff(n, got) != 0 {
			t.Errorf("parameter %s read as %s, differs", n.Name, got.Name)
		}
	}
	c3, err := ReadDeferred(path) // c2's list is gone after LoadArrays
	if err != nil {
		t.Fatal(err)
	}
	p := c3.deferred[MemberParameters]
	last := p.arrays[len(p.arrays)-2] // big
	for _, off := range []int64{
		p.off + last.off + 3*readPieceSize + 17, // a middle piece of big
		p.off + last.off + last.n - 1,           // its short last piece
		p.off + last.off - 2,                    // big's .npy header
	} {
		changeByte(t, path, off)
		c4, err := ReadDeferred(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := c4.LoadArrays(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("byte %d changed: %v, want ErrCorrupt", off, err)
		}
		changeByte(t, path, off) // back
	}
}

// changeByte flips the bits of the byte at off of the file at path.
func changeByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}
