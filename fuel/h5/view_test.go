//go:build cgo

package h5

import (
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// TestGetDataView: a uint8 source of a dataset loaded in memory comes back
// from a slice request marked for viewing as a view of the array in memory
// (no copy), with GetData's values; unmarked sources, list requests and
// a dataset read from the file give copies as GetDataLent does.
func TestGetDataView(t *testing.T) {
	const rows, width = 40, 6
	path := filepath.Join(t.TempDir(), "u8.hdf5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	x, y := nd.New(nd.Uint8, rows, width), nd.New(nd.Uint8, rows, 1)
	for i := range x.Size() {
		x.SetFlat(i, float64(i*13%256))
	}
	for i := range rows {
		y.SetFlat(i, float64(i%10))
	}
	for _, s := range []struct {
		name string
		a    *nd.Array
	}{{"x", x}, {"y", y}} {
		if err := w.CreateSource(s.name, nd.Uint8, s.a.Shape, []string{"batch", "feature"}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRows(s.name, 0, s.a); err != nil {
			t.Fatal(err)
		}
	}
	w.AddSplit(SplitDef{Name: "all", Start: 0, Stop: rows})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, inMemory := range []bool{true, false} {
		d, err := Open(path, []string{"all"}, Options{LoadInMemory: inMemory, Sources: []string{"x", "y"}})
		if err != nil {
			t.Fatal(err)
		}
		var rec nd.Recycler
		view := []bool{true, false}
		for _, req := range []fuel.Request{{Start: 8, Stop: 24}, {Indices: []int{3, 1, 30}}} {
			want, err := d.GetData(req)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second time with buffers released before
				got, err := d.GetDataView(req, &rec, view)
				if err != nil {
					t.Fatal(err)
				}
				viewed := []bool{false, false}
				for i := range got {
					if !nd.Equal(got[i], want[i]) {
						t.Fatalf("in memory %v, %+v, source %d: %v, want %v", inMemory, req, i, got[i], want[i])
					}
					if src := d.srcs[i].data; src != nil && req.Indices == nil {
						viewed[i] = &got[i].Data.([]uint8)[0] == &src.Data.([]uint8)[req.Start*src.RowSize()]
					}
				}
				if wantView := inMemory && req.Indices == nil; viewed[0] != wantView || viewed[1] {
					t.Fatalf("in memory %v, %+v: views %v, want [%v false]", inMemory, req, viewed, wantView)
				}
				for _, a := range got {
					a.Release()
				}
			}
		}
		d.Close()
	}
}
