package h5

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// maxCompression bounds how many bytes of data one stored byte may stand
// for: deflate, HDF5's strongest standard filter, reaches about 1032:1.
// A dataset declaring more than this many times what the file stores is
// not data (a header forged, or a dataset created and never written).
const maxCompression = 1100

// checkDeclared refuses a source whose declared shape cannot be real: its
// element count overflows, or its bytes are far more than the file's
// storage for it could hold, compressed. Nothing is allocated before it
// passes.
func checkDeclared(dt nd.DType, shape []int, stored uint64) error {
	bytes, ok := nd.Bytes(dt, shape)
	if !ok {
		return fmt.Errorf("the dataset declares shape %v of %s, whose size overflows (no array can hold it)", shape, dt)
	}
	if bytes > 64<<10 && bytes/maxCompression > stored {
		return fmt.Errorf("the dataset declares shape %v of %s (%s), but the file stores %s of it: a dataset never written, or a forged header",
			shape, dt, nd.FormatBytes(bytes), nd.FormatBytes(stored))
	}
	return nil
}

// checkLoadable refuses to load rows of rowShape of dt in memory when they
// cannot fit the memory budget (nd.CheckBudget: the machine's memory, or
// --max-memory).
func checkLoadable(dt nd.DType, rows int, rowShape []int) error {
	shape := append([]int{rows}, rowShape...)
	if err := nd.CheckBudget(dt, shape); err != nil {
		return fmt.Errorf("load_in_memory: %w; open it without load_in_memory to read it batch by batch", err)
	}
	return nil
}
