package nd

import "sync"

// A Recycler lends the buffers of the arrays a producer makes again and
// again (a transformer's float32 batches) and takes each back when its
// consumer releases the array, so that a stream running at full speed does
// not allocate and zero a new buffer for every batch, as numpy's allocator
// reuses the memory of a batch that nothing refers to any more.
//
// A producer lends only to a consumer that asked for it and releases each
// array once nothing else reads it (fuel.Lender: the main loop after a
// training step and its extensions, an evaluation after its batch); an
// array that consumer hands to code that may keep it (a script) is kept
// first (Keep). Release does nothing to a kept array or to one that no
// Recycler lent. A Recycler is safe for concurrent use: a producer in a
// background goroutine (MultiProcessing) draws from it while the consumer
// releases.
type Recycler struct {
	mu    sync.Mutex
	free  [][]float32
	free8 [][]uint8 // a dataset's uint8 batches (Lent)
}

// recyclerKeep is how many released buffers a Recycler keeps: enough for
// the batches in flight between a producer and its consumer.
const recyclerKeep = 4

// Float32 returns a float32 array of the given shape whose contents are
// undefined (a lent buffer is not cleared): the caller sets every element.
// A nil Recycler lends nothing: it returns an ordinary new array.
func (r *Recycler) Float32(shape ...int) *Array {
	n := Prod(shape)
	if r == nil {
		return New(Float32, shape...)
	}
	var buf []float32
	r.mu.Lock()
	for i := len(r.free) - 1; i >= 0; i-- {
		if cap(r.free[i]) >= n {
			buf = r.free[i][:n]
			r.free[i] = r.free[len(r.free)-1]
			r.free = r.free[:len(r.free)-1]
			break
		}
	}
	r.mu.Unlock()
	if buf == nil {
		if err := CheckBudget(Float32, shape); err != nil {
			panic(err)
		}
		buf = make([]float32, n)
	}
	return &Array{Shape: shape, Data: buf, recycler: r}
}

// Lent returns an array of dtype dt and the given shape whose contents are
// undefined, lent when dt is float32 or uint8 (a dataset's batches, which
// the caller fills); other dtypes, or a nil Recycler, give an ordinary new
// array.
func (r *Recycler) Lent(dt DType, shape ...int) *Array {
	switch {
	case r == nil:
		return New(dt, shape...)
	case dt == Float32:
		return r.Float32(shape...)
	case dt != Uint8:
		return New(dt, shape...)
	}
	n := Prod(shape)
	var buf []uint8
	r.mu.Lock()
	for i := len(r.free8) - 1; i >= 0; i-- {
		if cap(r.free8[i]) >= n {
			buf = r.free8[i][:n]
			r.free8[i] = r.free8[len(r.free8)-1]
			r.free8 = r.free8[:len(r.free8)-1]
			break
		}
	}
	r.mu.Unlock()
	if buf == nil {
		if err := CheckBudget(Uint8, shape); err != nil {
			panic(err)
		}
		buf = make([]uint8, n)
	}
	return &Array{Shape: shape, Data: buf, recycler: r}
}

// Release tells the Recycler that lent a's buffer that nothing will read a
// again: the buffer goes back to it, and a becomes an empty array (shape
// (0,)), so that a reader that was wrongly kept sees no data rather than
// another batch's. Release does nothing to an array no Recycler lent, to a
// kept one, or to one already released.
func (a *Array) Release() {
	r := a.recycler
	if r == nil {
		return
	}
	a.recycler = nil
	switch buf := a.Data.(type) {
	case []float32:
		a.Shape, a.Data = []int{0}, buf[:0:0]
		r.mu.Lock()
		if len(r.free) < recyclerKeep {
			r.free = append(r.free, buf[:cap(buf)])
		}
		r.mu.Unlock()
	case []uint8:
		a.Shape, a.Data = []int{0}, buf[:0:0]
		r.mu.Lock()
		if len(r.free8) < recyclerKeep {
			r.free8 = append(r.free8, buf[:cap(buf)])
		}
		r.mu.Unlock()
	}
}

// Keep makes a an ordinary array that Release leaves alone: what hands an
// array to code that may hold on to it (a script) keeps it first.
func (a *Array) Keep() { a.recycler = nil }

// HandOver moves a's loan to b, a view of all of a's buffer that takes a's
// place in a pipeline (a transformer reshaping each batch it passes on,
// and dropping a): b is then released in a's stead, and a becomes an
// ordinary array. It does nothing unless b holds exactly a's float32 or
// uint8 buffer.
func (a *Array) HandOver(b *Array) {
	if a.recycler == nil || !sameBuffer(a.Data, b.Data) {
		return
	}
	b.recycler, a.recycler = a.recycler, nil
}

// sameBuffer reports whether x and y are the same non-empty float32 or
// uint8 slice.
func sameBuffer(x, y any) bool {
	switch x := x.(type) {
	case []float32:
		y, ok := y.([]float32)
		return ok && len(x) == len(y) && len(x) > 0 && &x[0] == &y[0]
	case []uint8:
		y, ok := y.([]uint8)
		return ok && len(x) == len(y) && len(x) > 0 && &x[0] == &y[0]
	}
	return false
}
