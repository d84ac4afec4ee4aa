package fuel

// Lender is an epoch iterator that can lend the buffers of its items to a
// consumer that gives them back.
//
// An item an epoch iterator returns belongs to its caller, who may keep it
// as long as it likes. A consumer that is done with each item before it
// asks for the next (a training loop after its step and its extensions, an
// evaluation after its batch) may instead let the pipeline reuse the
// buffers of the items it has finished with, as numpy's allocator reuses
// the memory of a batch nothing refers to any more: it asks the iterator
// to lend (Lend), then releases every array of every item once nothing
// reads it (nd.Array.Release), and keeps first (nd.Array.Keep) an array
// it hands to code that may hold on to it. A consumer that never asks
// gets arrays that no later item touches.
//
// In this project only fuel/transformers lends (the float32 batches of a
// Cast over ScaleAndShift) or passes the request down (the transformers
// that hand their input's arrays on or make new ones, never keeping
// them).
type Lender interface {
	EpochIterator
	// Lend makes the items after the call lent: an array of an item may
	// hold a buffer that a later item reuses once the consumer has
	// released the array. It reports whether any part of the pipeline
	// lends; when none does, the items stay the caller's as before.
	Lend() bool
}

// Lend asks it to lend its items' buffers (Lender), for a consumer that
// releases every array it is done with, and reports whether it will. An
// iterator that is not a Lender gives ordinary arrays.
func Lend(it EpochIterator) bool {
	if l, ok := it.(Lender); ok {
		return l.Lend()
	}
	return false
}

// Viewer is a lending epoch iterator that can give some sources' uint8
// arrays as views of the dataset's storage (fuel.ViewingDataset), for a
// consumer inside the pipeline that reads each such array once, before it
// asks for the next item, and never hands it on: the fused ScaleAndShift
// and Cast, which converts the bytes straight from the dataset instead of
// from a copy. The arrays the pipeline gives its own consumer are never
// views.
type Viewer interface {
	Lender
	// View makes the uint8 arrays of the sources marked in which views
	// where it can, from the next item on (once items are lent); it
	// reports whether it may.
	View(which []bool) bool
}
