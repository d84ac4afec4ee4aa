//go:build cgo

package h5

// #include "shim.h"
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/blocks-go/blocks/nd"
)

// Reading rows straight from the file. A numeric source stored
// contiguously, uncompressed and in the memory layout (h5py's default for
// a dataset written whole, little-endian on this machine) has its rows at
// known offsets of the file: out of core, its batches are read with
// pread, one per run of consecutive rows, up to directReaders at a time,
// instead of one H5Dread of a hyperslab union (which libhdf5 reads run
// after run, through its 64 KB sieve buffer). On a disk, a shuffled batch
// of 128 rows is then 128 requests in flight instead of one after the
// other. The bytes are the file's, as H5Dread would copy them (no type
// conversion applies when the stored and memory types are equal).

// directReaders is the most reads of one batch in flight at once.
const directReaders = 16

// directMin is the least number of runs for which a batch's reads are
// spread over goroutines; fewer are read one after the other.
const directMin = 4

// openDirect opens the file for direct reads and marks the sources that
// allow them (raw ≥ 0). Only with the default or sec2 driver (the file's
// bytes are its HDF5 address space, after any user block) and out of
// core. Lock held.
func (d *H5PYDataset) openDirect() error {
	if d.opts.LoadInMemory || (d.opts.Driver != "" && d.opts.Driver != "sec2") {
		return nil
	}
	for _, s := range d.srcs {
		s.raw = -1
	}
	f, err := os.Open(d.path)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	some := false
	for _, s := range d.srcs {
		if s.vlen || s.flat || s.width > 0 || s.dtype == nd.Bool {
			continue
		}
		mt, err := nativeType(s.dtype)
		if err != nil {
			continue
		}
		off := int64(C.h5fuel_raw_offset(s.ds, mt))
		rowElems, ok := nd.ProdChecked(s.shape[1:])
		if off < 0 || !ok || s.shape[0] < 0 {
			continue
		}
		rowBytes := int64(rowElems) * int64(s.dtype.Size())
		if rowBytes > 0 && int64(s.shape[0]) > (st.Size()-off)/rowBytes {
			continue // the rows would lie past the end of the file
		}
		s.raw, s.rowBytes, s.file, some = off, rowBytes, f, true
	}
	if !some {
		f.Close()
		return nil
	}
	// Beyond this point the sources refer to f: release closes it.
	d.rawFile = f
	return nil
}

// segment is one pread: n bytes at file offset off into dst.
type segment struct {
	off int64
	dst unsafe.Pointer
	n   int
}

// readDirect reads the rows of reads (as readInto) into base with pread.
func (s *source) readDirect(f *os.File, base unsafe.Pointer, reads [][]run) error {
	var segs []segment
	at := 0
	for _, runs := range reads {
		for _, r := range runs {
			n := int64(r.stop - r.start)
			if n == 0 {
				continue
			}
			segs = append(segs, segment{s.raw + int64(r.start)*s.rowBytes, unsafe.Add(base, int64(at)*s.rowBytes), int(n * s.rowBytes)})
			at += int(n)
		}
	}
	read := func(g segment) error {
		buf := unsafe.Slice((*byte)(g.dst), g.n)
		n, err := f.ReadAt(buf, g.off)
		if n < len(buf) {
			return fmt.Errorf("reading %d bytes at offset %d: %v (got %d)", len(buf), g.off, err, n)
		}
		return nil
	}
	if len(segs) < directMin {
		for _, g := range segs {
			if err := read(g); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan segment, len(segs))
	)
	for _, g := range segs {
		next <- g
	}
	close(next)
	for range min(directReaders, len(segs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range next {
				if err := read(g); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
