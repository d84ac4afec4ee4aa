package h5

import (
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// FuzzDeclaredShapes feeds the shapes, dtypes and stored sizes an HDF5
// file may declare to the checks made before any allocation: a shape
// that passes must have an element count that fits an int and bytes the
// file's storage can hold (at deflate's best ratio); loading it in memory
// must fit the machine.
func FuzzDeclaredShapes(f *testing.F) {
	f.Add(uint8(0), uint64(1e9), uint64(4), uint64(0), uint8(2), uint64(0))
	f.Add(uint8(0), uint64(1e12), uint64(784), uint64(0), uint8(2), uint64(1904))
	f.Add(uint8(0), uint64(3), uint64(1<<62+1), uint64(4), uint8(3), uint64(0))
	f.Add(uint8(5), uint64(60000), uint64(784), uint64(0), uint8(2), uint64(60000*784*4))
	f.Add(uint8(1), uint64(1<<63), uint64(1), uint64(1), uint8(3), uint64(1<<40))
	f.Fuzz(func(t *testing.T, dtc uint8, d0, d1, d2 uint64, rank uint8, stored uint64) {
		dts := []nd.DType{nd.Uint8, nd.Int16, nd.Uint16, nd.Int32, nd.Int64, nd.Float32, nd.Float64, nd.Bool}
		dt := dts[int(dtc)%len(dts)]
		var shape []int
		for _, d := range []uint64{d0, d1, d2}[:1+int(rank)%3] {
			if d > 1<<63-1 {
				return // datasetShape refuses these
			}
			shape = append(shape, int(d))
		}
		if err := checkDeclared(dt, shape, stored); err != nil {
			return
		}
		b, ok := nd.Bytes(dt, shape)
		if !ok {
			t.Fatalf("shape %v of %s overflows but passed", shape, dt)
		}
		if b > 64<<10 && b/maxCompression > stored {
			t.Fatalf("shape %v of %s (%d bytes) passed with %d bytes stored", shape, dt, b, stored)
		}
		if err := checkLoadable(dt, shape[0], shape[1:]); err == nil && b > nd.PhysicalMemory() {
			t.Fatalf("shape %v of %s (%d bytes) may be loaded on a machine of %d", shape, dt, b, nd.PhysicalMemory())
		}
	})
}
