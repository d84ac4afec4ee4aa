package checkpoint

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
)

// A resume reads a checkpoint before the script has built the model, and
// restores it after: reading the arrays then would hold them twice (the
// checkpoint's, copied into the model's). ReadDeferred leaves the arrays
// in the file, listed (names, dtypes, shapes, where their bytes lie), and
// Restore reads them straight into the model's arrays: the resume holds
// the state once.

// deferredArray is an array of an .npz member left in the file.
type deferredArray struct {
	name  string
	dtype nd.DType
	shape []int
	// off and n: where its data lies in the member, and its length.
	off, n int64
}

// deferredNPZ is an .npz member whose arrays are left in the file, which
// stays open (the file at the path may be replaced meanwhile, not the
// one read).
type deferredNPZ struct {
	name      string
	f         *os.File
	off, size int64
	sum       [sha256.Size]byte
	arrays    []deferredArray // in the file's order
}

// ReadDeferred is Read for a resume: it checks the file as Read does,
// but leaves the arrays of the parameters and of the algorithm state in
// the file: Parameters and AlgorithmState are nil until Restore reads
// them straight into the model's arrays (or LoadArrays reads them into
// new ones). Those two members are read once: their headers (names,
// dtypes, shapes, checked against the model before anything changes)
// now, their bytes when they are restored, with their SHA-256, so a
// tampered array is found then, an error wrapping ErrCorrupt after the
// model's arrays were written (a resume then stops). The file stays
// open as long as the checkpoint is used. A member that is not laid out
// as this program writes it (stored, little-endian, C order) is checked
// and read whole, as Read does.
func ReadDeferred(path string) (*Checkpoint, error) {
	f, size, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	man, byName, err := verify(f, size, true)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	deferred := map[string]*deferredNPZ{}
	empty, err := EncodeNPZ(nil)
	if err != nil {
		f.Close()
		return nil, err
	}
	for name := range streamed {
		mb, ok := byName[name]
		if !ok || mb.data != nil {
			continue
		}
		d := listNPZ(f, mb)
		if d == nil && mb.hashLater {
			// Not laid out as this program writes it: read whole, its
			// SHA-256 checked first.
			h := sha256.New()
			if _, err := io.Copy(h, io.NewSectionReader(f, mb.off, mb.size)); err != nil {
				f.Close()
				return nil, fmt.Errorf("checkpoint: %w", err)
			}
			if !bytes.Equal(h.Sum(nil), mb.sum[:]) {
				f.Close()
				return nil, fmt.Errorf("checkpoint %s: %w", path, corrupt("member %s does not match its SHA-256 in the manifest (the file was modified)", name))
			}
		}
		if d != nil {
			deferred[name] = d
			// parse reads an empty member: the arrays stay in the file.
			mb.data = empty
			byName[name] = mb
		}
	}
	c, err := parse(f, *man, byName)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if len(deferred) == 0 {
		f.Close()
		return c, nil
	}
	c.deferred = deferred
	return c, nil
}

// listNPZ lists the arrays of an .npz member from their headers, reading
// none of their data; nil when the member is not laid out as writeNPZ
// writes it (then it is read whole).
func listNPZ(f *os.File, mb readMember) *deferredNPZ {
	if !npy.IsLittleEndian(binary.NativeEndian) {
		return nil
	}
	sr := io.NewSectionReader(f, mb.off, mb.size)
	zr, err := zip.NewReader(sr, mb.size)
	if err != nil {
		return nil
	}
	d := &deferredNPZ{name: mb.name, f: f, off: mb.off, size: mb.size, sum: mb.sum}
	end := int64(0)
	for _, zf := range zr.File {
		name, ok := strings.CutSuffix(zf.Name, ".npy")
		if !ok || zf.Method != zip.Store || zf.CompressedSize64 != zf.UncompressedSize64 {
			return nil
		}
		start, err := zf.DataOffset()
		if err != nil || start < end || start+int64(zf.UncompressedSize64) > mb.size {
			return nil
		}
		head := make([]byte, min(int64(zf.UncompressedSize64), 4096))
		if _, err := sr.ReadAt(head, start); err != nil {
			return nil
		}
		info, hlen, err := npy.ReadHeader(head)
		if err != nil || info.FortranOrder || !npy.IsLittleEndian(info.Order) {
			return nil
		}
		if nd.CheckAlloc(info.DType, info.Shape, 0, "") != nil {
			return nil
		}
		n, _ := nd.Bytes(info.DType, info.Shape)
		if uint64(hlen)+n != zf.UncompressedSize64 {
			return nil
		}
		d.arrays = append(d.arrays, deferredArray{name: name, dtype: info.DType, shape: info.Shape, off: start + int64(hlen), n: int64(n)})
		end = start + int64(zf.UncompressedSize64)
	}
	return d
}

// named lists the member's arrays as Named of no data (their names,
// dtypes and shapes), what Restore checks before reading them.
func (d *deferredNPZ) named() []Named {
	out := make([]Named, len(d.arrays))
	for i, a := range d.arrays {
		out[i] = Named{Name: a.name, Array: &nd.Array{Shape: a.shape, Data: emptyOf(a.dtype)}}
	}
	return out
}

// emptyOf is an empty slice of dt's elements (an array's DType reads it).
func emptyOf(dt nd.DType) any {
	return nd.New(dt, 0).Data
}

// readInto reads the member's arrays into dst (one per array, in the
// file's order, each of its dtype and shape and contiguous) and checks
// the member's SHA-256 as its bytes pass: a file that does not match is
// an error (then dst holds what was read).
//
// The arrays' bytes are read in pieces by readers (parallel preads, with
// O_DIRECT where the file system allows it, directReader: the disk has
// several requests in flight, and the copies into dst, with the first
// touch of dst's pages, run on both cores) while the SHA-256, which is
// sequential, runs on this goroutine over the pieces in the file's order
// as they arrive; the few bytes between the arrays (zip and .npy
// headers) it reads itself.
func (d *deferredNPZ) readInto(dst []*nd.Array) error {
	var pieces []*readPiece
	// spans are the member's bytes in order: a gap (read and hashed
	// here), then a run of pieces.
	type span struct {
		gapOff, gapLen int64
		first, end     int // pieces[first:end]
	}
	var spans []span
	pos := int64(0)
	for i, a := range d.arrays {
		raw := nd.RawBytes(dst[i])
		if int64(len(raw)) != a.n {
			return fmt.Errorf("%s: the array to read into has %d bytes, the file %d", a.name, len(raw), a.n)
		}
		sp := span{gapOff: pos, gapLen: a.off - pos, first: len(pieces)}
		for o := 0; o < len(raw); o += readPieceSize {
			pieces = append(pieces, &readPiece{name: a.name, off: a.off + int64(o), buf: raw[o:min(o+readPieceSize, len(raw))], done: make(chan struct{})})
		}
		sp.end = len(pieces)
		spans = append(spans, sp)
		pos = a.off + a.n
	}
	spans = append(spans, span{gapOff: pos, gapLen: d.size - pos, first: len(pieces), end: len(pieces)})

	var next atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range min(readers, len(pieces)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			direct := newDirectReader(d.f, readPieceSize)
			defer func() {
				if direct != nil {
					direct.close()
				}
			}()
			for !stop.Load() {
				k := int(next.Add(1) - 1)
				if k >= len(pieces) {
					return
				}
				p := pieces[k]
				if direct != nil {
					p.err = direct.readAt(p.buf, d.off+p.off)
					if errors.Is(p.err, errDirect) {
						direct.close()
						direct = nil // through the page cache from now on
					}
				}
				if direct == nil {
					_, p.err = d.f.ReadAt(p.buf, d.off+p.off)
				}
				close(p.done)
			}
		}()
	}
	defer wg.Wait()
	defer stop.Store(true)

	h := sha256.New()
	for _, sp := range spans {
		if sp.gapLen > 0 {
			if _, err := io.Copy(h, io.NewSectionReader(d.f, d.off+sp.gapOff, sp.gapLen)); err != nil {
				return fmt.Errorf("reading: %w", err)
			}
		}
		for _, p := range pieces[sp.first:sp.end] {
			<-p.done
			if p.err != nil {
				return fmt.Errorf("reading %s: %w", p.name, p.err)
			}
			h.Write(p.buf)
		}
	}
	if !bytes.Equal(h.Sum(nil), d.sum[:]) {
		return corrupt("member %s does not match its SHA-256 in the manifest (the file was modified)", d.name)
	}
	return nil
}

// readPiece is a piece of an array that readInto's readers read.
type readPiece struct {
	name string
	// off is where the piece lies in the member.
	off  int64
	buf  []byte
	err  error
	done chan struct{}
}

// readPieceSize is the size of readInto's reads; readers is the number
// of its readers.
const (
	readPieceSize = 4 << 20
	readers       = 2
)

// load reads the member's arrays into new ones.
func (d *deferredNPZ) load() ([]Named, error) {
	out := d.named()
	dst := make([]*nd.Array, len(out))
	for i, a := range d.arrays {
		out[i].Array = nd.New(a.dtype, a.shape...)
		dst[i] = out[i].Array
	}
	if err := d.readInto(dst); err != nil {
		return nil, err
	}
	return out, nil
}

// LoadArrays reads the arrays ReadDeferred left in the file into
// Parameters and AlgorithmState (nothing to do for a checkpoint read
// whole).
func (c *Checkpoint) LoadArrays() error {
	for name, d := range c.deferred {
		arrays, err := d.load()
		if err != nil {
			return fmt.Errorf("checkpoint: %s: %w", name, err)
		}
		switch name {
		case MemberParameters:
			c.Parameters = arrays
		case MemberAlgorithmState:
			c.AlgorithmState = arrays
		}
	}
	c.deferred = nil
	return nil
}

// deferredReads is the reading into the model's arrays that Restore
// applies first: for each deferred member, the model's array of each of
// its arrays (by name). It returns nil when an array cannot be read into
// in place (not contiguous): then the arrays are loaded and copied.
func deferredReads(d *deferredNPZ, into map[string]*nd.Array) func() error {
	dst := make([]*nd.Array, len(d.arrays))
	for i, a := range d.arrays {
		t := into[a.name]
		if t == nil || int64(len(nd.RawBytes(t))) != a.n || t.DType() != a.dtype || !slices.Equal(t.Shape, a.shape) {
			return nil
		}
		dst[i] = t
	}
	return func() error { return d.readInto(dst) }
}
