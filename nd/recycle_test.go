package nd

import (
	"sync"
	"testing"
)

// A released buffer is lent again (to a request it fits), a kept or
// foreign array is left alone, a second release does nothing, and at most
// recyclerKeep buffers wait.
func TestRecycler(t *testing.T) {
	var r Recycler
	a := r.Float32(4, 8)
	if a.DType() != Float32 || a.Size() != 32 {
		t.Fatalf("got %s%v", a.DType(), a.Shape)
	}
	p := &a.Data.([]float32)[0]
	a.Release()
	if a.Size() != 0 || len(a.Shape) != 1 {
		t.Fatalf("released array is %v", a.Shape)
	}
	a.Release()          // no-op
	b := r.Float32(2, 8) // a short batch fits in the released buffer
	if &b.Data.([]float32)[0] != p || b.Size() != 16 {
		t.Fatal("the released buffer was not lent again")
	}
	c := r.Float32(4, 8) // nothing free: a new buffer
	if &c.Data.([]float32)[0] == p {
		t.Fatal("a lent buffer was lent twice")
	}
	b.Keep()
	b.Release()
	if b.Size() != 16 || len(r.free) != 0 {
		t.Fatal("a kept array was released")
	}
	FromSlice([]float32{1, 2}).Release() // not lent: nothing happens
	big := r.Float32(1000)
	bp := &big.Data.([]float32)[0]
	big.Release()
	if d := r.Float32(8); &d.Data.([]float32)[0] != bp || len(r.free) != 0 {
		t.Fatal("the free buffer was not used")
	}
	var lent []*Array
	for range 2 * recyclerKeep {
		lent = append(lent, r.Float32(3))
	}
	for _, x := range lent {
		x.Release()
	}
	if len(r.free) != recyclerKeep {
		t.Fatalf("%d free buffers, want %d", len(r.free), recyclerKeep)
	}
}

// HandOver moves the loan to a view of the whole buffer (a reshaped
// batch), which is then released in the original's stead; a view of part
// of the buffer, or a copy, takes nothing.
func TestRecyclerHandOver(t *testing.T) {
	var r Recycler
	a := r.Float32(4, 8)
	p := &a.Data.([]float32)[0]
	part := &Array{Shape: []int{8}, Data: a.Data.([]float32)[:8]}
	a.HandOver(part)
	a.HandOver(a.Copy())
	b, err := a.Reshape(4, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	a.HandOver(b)
	a.Release() // no longer lent: nothing happens
	part.Release()
	if len(r.free) != 0 || a.Size() != 32 {
		t.Fatal("an array that had handed its loan over was released")
	}
	b.Release()
	if c := r.Float32(32); &c.Data.([]float32)[0] != p {
		t.Fatal("the reshaped batch's release did not return the buffer")
	}
}

// A producer goroutine drawing while a consumer releases (as under
// MultiProcessing); run with -race.
func TestRecyclerConcurrent(t *testing.T) {
	var r Recycler
	ch := make(chan *Array, 3)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 1000 {
			a := r.Float32(64)
			for k := range a.Data.([]float32) {
				a.Data.([]float32)[k] = float32(i)
			}
			ch <- a
		}
		close(ch)
	}()
	i := 0
	for a := range ch {
		for _, v := range a.Data.([]float32) {
			if v != float32(i) {
				t.Fatalf("batch %d holds %v", i, v)
			}
		}
		a.Release()
		i++
	}
	wg.Wait()
}

// Lent lends uint8 buffers as Float32 lends float32 ones (a dataset's
// batches), HandOver moves a uint8 loan to a view, and other dtypes are
// ordinary arrays.
func TestRecyclerLentUint8(t *testing.T) {
	var r Recycler
	a := r.Lent(Uint8, 2, 3)
	p := &a.Data.([]uint8)[0]
	v := &Array{Shape: []int{6}, Data: a.Data}
	a.HandOver(v)
	a.Release() // the loan moved to v: nothing happens
	if a.Size() != 6 {
		t.Fatalf("released after HandOver: %v", a.Shape)
	}
	v.Release()
	if v.Size() != 0 {
		t.Fatalf("a released view is %v", v.Shape)
	}
	b := r.Lent(Uint8, 5)
	if &b.Data.([]uint8)[0] != p {
		t.Error("the released uint8 buffer was not reused")
	}
	c := r.Lent(Int64, 4)
	c.Release()
	if c.Size() != 4 || c.DType() != Int64 {
		t.Errorf("an int64 array was lent: %v %v", c.DType(), c.Shape)
	}
	var nilR *Recycler
	if d := nilR.Lent(Uint8, 3); d.recycler != nil {
		t.Error("a nil Recycler lent")
	}
}
