//go:build cgo

package h5

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// TestOutOfCore writes a 64 MiB source a part at a time (WriteRows) and
// streams it back in batches: neither side ever holds more than a part or
// a batch, so the live Go heap stays far below the file's size (the
// scaled-down version of a file larger than memory).
func TestOutOfCore(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	checkNoOpenObjects(t)
	const rows, rowLen, part = 16384, 4096, 512 // 64 MiB of uint8
	path := filepath.Join(t.TempDir(), "big.hdf5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateSource("x", nd.Uint8, []int{rows, rowLen}, []string{"batch", "feature"}); err != nil {
		t.Fatal(err)
	}
	// The peak of the live heap: collected first, so that garbage the
	// collector has not reached yet (under load it lags by tens of
	// batches) does not count; what either side holds does.
	var peak uint64
	sample := func() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	buf := nd.New(nd.Uint8, part, rowLen)
	for start := 0; start < rows; start += part {
		for i := range buf.Data.([]uint8) {
			buf.Data.([]uint8)[i] = uint8(start/part + i%7)
		}
		if err := w.WriteRows("x", start, buf); err != nil {
			t.Fatal(err)
		}
		sample()
	}
	w.AddSplit(SplitDef{Name: "all", Start: 0, Stop: rows})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, []string{"all"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for start := 0; start < rows; start += 256 {
		out, err := d.GetData(fuel.Request{Start: start, Stop: start + 256})
		if err != nil {
			t.Fatal(err)
		}
		r := start + 1 // check element 3 of the batch's second row
		if v, want := out[0].Data.([]uint8)[rowLen+3], uint8(r/part+((r%part)*rowLen+3)%7); v != want {
			t.Fatalf("row %d: %d, want %d", r, v, want)
		}
		sample()
	}
	t.Logf("heap in use peaked at %.1f MiB for a 64 MiB file", float64(peak)/(1<<20))
	if peak > 24<<20 {
		t.Errorf("heap in use peaked at %d MiB for a 64 MiB file", peak>>20)
	}
}
