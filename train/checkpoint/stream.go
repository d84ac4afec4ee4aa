package checkpoint

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
)

// The file is written as a stream: no member, and not the whole file, is
// ever held in memory. The members' sizes are known before their bytes
// (the JSON members are small and encoded first; an .npz member's size
// follows from its arrays' shapes), so the tar headers can be written
// first; each member's SHA-256 and each .npy entry's CRC-32 are computed
// as its bytes pass. The manifest, the first member, lists the SHA-256s:
// it is written with the right length and placeholder digests, and
// rewritten in place once the last member has passed. The bytes are those
// the whole-file encoder wrote (TestStreamedBytesEqualWholeFile).

// encodeMember is a member to stream: small ones as bytes, an .npz from
// its arrays.
type encodeMember struct {
	name   string
	size   int64
	data   []byte
	npz    bool
	arrays []Named
}

// encodePlan is a checkpoint ready to stream: its members and manifest.
type encodePlan struct {
	c       *Checkpoint
	members []encodeMember
	// manLen is the manifest's length, the same with placeholder and
	// real digests.
	manLen int
	// Size is the sum of the members' sizes (the file is that plus the
	// tar headers and padding).
	Size int64
}

// digestPlaceholder stands for a SHA-256 in hex until it is known.
var digestPlaceholder = strings.Repeat("0", 64)

// plan encodes the small members and sizes the large ones. It fills
// Manifest.Members (with placeholder digests), the format and version
// fields and, when empty, Created.
func (c *Checkpoint) plan() (*encodePlan, error) {
	if c.deferred != nil {
		return nil, fmt.Errorf("checkpoint: its arrays are still in the file it was read from (ReadDeferred): LoadArrays first")
	}
	p := &encodePlan{c: c}
	for i := range c.Run.Scripts {
		s := &c.Run.Scripts[i]
		s.Member = fmt.Sprintf("%s%03d_%s", scriptPrefix, i, filepath.Base(s.Path))
		p.members = append(p.members, encodeMember{name: s.Member, data: s.Source})
	}
	cfg, err := json.MarshalIndent(c.Run, "", " ")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: config: %w", err)
	}
	params, err := npzSize(c.Parameters)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: parameters: %w", err)
	}
	alg, err := npzSize(c.AlgorithmState)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: algorithm state: %w", err)
	}
	it, err := json.Marshal(c.Iteration)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: iteration state: %w", err)
	}
	lg, err := json.Marshal(c.Log)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: log: %w", err)
	}
	p.members = append(p.members, encodeMember{name: MemberConfig, data: cfg},
		encodeMember{name: MemberParameters, size: params, npz: true, arrays: c.Parameters},
		encodeMember{name: MemberAlgorithmState, size: alg, npz: true, arrays: c.AlgorithmState},
		encodeMember{name: MemberIterationState, data: it})
	if len(c.ScriptObjects) > 0 {
		p.members = append(p.members, encodeMember{name: MemberScriptObjects, data: c.ScriptObjects})
	}
	p.members = append(p.members, encodeMember{name: MemberLog, data: lg})
	m := &c.Manifest
	m.Format, m.FormatVersion = FormatName, FormatVersion
	if m.ProjectVersion == "" {
		m.ProjectVersion = ProjectVersion
	}
	if m.Created == "" {
		m.Created = time.Now().UTC().Format(time.RFC3339Nano)
	}
	m.Members = nil
	for i := range p.members {
		mb := &p.members[i]
		if !mb.npz {
			mb.size = int64(len(mb.data))
		}
		p.Size += mb.size
		m.Members = append(m.Members, Member{Name: mb.name, Size: mb.size, SHA256: digestPlaceholder})
	}
	man, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return nil, fmt.Errorf("checkpoint: manifest: %w", err)
	}
	p.manLen = len(man)
	p.Size += int64(p.manLen) + 65
	return p, nil
}

// WriterAt is where a checkpoint is streamed: written in order, then
// its manifest rewritten in place.
type WriterAt interface {
	io.Writer
	io.WriterAt
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.n += int64(n)
	return n, err
}

// streamBuffer is the write buffer between the tar stream and the file:
// the headers and small members go out in large writes, the arrays'
// bytes (larger) straight through.
const streamBuffer = 1 << 20

// writeTo streams the checkpoint into out.
func (p *encodePlan) writeTo(out WriterAt) error {
	bw := bufio.NewWriterSize(out, streamBuffer)
	cw := &countWriter{w: bw}
	tw := tar.NewWriter(cw)
	header := func(name string, size int64) error {
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: size, ModTime: npzTime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("checkpoint: %s: %w", name, err)
		}
		return nil
	}
	m := &p.c.Manifest
	if err := header(MemberManifest, int64(p.manLen)); err != nil {
		return err
	}
	manOffset := cw.n
	if _, err := tw.Write(make([]byte, p.manLen)); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", MemberManifest, err)
	}
	// Each member's SHA-256 goes on while the next members are written:
	// the digests are needed only for the manifest, at the end, so the
	// hashing of one member overlaps that of the next and the writing of
	// both (their bytes stay unchanged until writeTo returns).
	hashes := make([]*pipeHash, 0, len(p.members))
	defer func() {
		for _, h := range hashes {
			h.sum()
		}
	}()
	for _, mb := range p.members {
		if err := header(mb.name, mb.size); err != nil {
			return err
		}
		stable := [][]byte{mb.data}
		for _, na := range mb.arrays {
			if b := nd.RawBytes(na.Array); len(b) >= hashCopyBelow {
				stable = append(stable, b)
			}
		}
		h := startHash(stable)
		hashes = append(hashes, h)
		w := io.MultiWriter(tw, h)
		var err error
		if mb.npz {
			err = writeNPZ(w, mb.arrays)
		} else {
			_, err = w.Write(mb.data)
		}
		if err != nil {
			return fmt.Errorf("checkpoint: %s: %w", mb.name, err)
		}
		h.close()
	}
	if f, ok := out.(interface{ startTail() }); ok {
		// The disk writes the members' last bytes while the digests are
		// awaited.
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		f.startTail()
	}
	for i, h := range hashes {
		m.Members[i].SHA256 = hex.EncodeToString(h.sum())
	}
	man, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return fmt.Errorf("checkpoint: manifest: %w", err)
	}
	if len(man) != p.manLen {
		return fmt.Errorf("checkpoint: the manifest has %d bytes, %d were planned", len(man), p.manLen)
	}
	sum := sha256.Sum256(man)
	check := []byte(hex.EncodeToString(sum[:]) + "\n")
	if err := header(MemberChecksum, int64(len(check))); err != nil {
		return err
	}
	if _, err := tw.Write(check); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", MemberChecksum, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := out.WriteAt(man, manOffset); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", MemberManifest, err)
	}
	return nil
}

// pipeHash is a member's SHA-256, computed on its own goroutine while the
// writer goes on with the member's next bytes (their CRC-32 and the
// write system calls): the hashing, the largest part of a save's CPU,
// overlaps the writing. Bytes that lie in stable memory (the arrays and
// data being saved, which do not change until the save has returned) are
// handed over as they are; any other bytes (headers, the buffers of the
// zip and tar writers, which are reused) are copied first: they are
// small.
type pipeHash struct {
	stable [][]byte
	ch     chan []byte
	done   chan []byte
	closed bool
	digest []byte
}

// hashCopyBelow: bytes written in pieces shorter than this are copied
// to the hashing goroutine, whatever their memory.
const hashCopyBelow = 64 << 10

// startHash starts a member's hashing goroutine; stable lists the memory
// that stays unchanged until sum has returned.
func startHash(stable [][]byte) *pipeHash {
	h := &pipeHash{stable: stable, ch: make(chan []byte, 64), done: make(chan []byte, 1)}
	go func() {
		d := sha256.New()
		for b := range h.ch {
			d.Write(b)
		}
		h.done <- d.Sum(nil)
	}()
	return h
}

// Write queues p's bytes for hashing (it never fails).
func (h *pipeHash) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) < hashCopyBelow || !h.inStable(p) {
		p = bytes.Clone(p)
	}
	h.ch <- p
	return len(p), nil
}

// inStable reports whether p lies within one of the stable buffers.
func (h *pipeHash) inStable(p []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	hi := lo + uintptr(len(p))
	for _, s := range h.stable {
		if len(s) == 0 {
			continue
		}
		slo := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		if lo >= slo && hi <= slo+uintptr(len(s)) {
			return true
		}
	}
	return false
}

// close ends the bytes to hash: the goroutine finishes the digest on its
// own.
func (h *pipeHash) close() {
	if !h.closed {
		h.closed = true
		close(h.ch)
	}
}

// sum waits for the hashing goroutine and returns the digest of every
// byte written; after it no byte handed over is referenced. It may be
// called more than once.
func (h *pipeHash) sum() []byte {
	h.close()
	if h.digest == nil {
		h.digest = <-h.done
	}
	return h.digest
}

// memFile is a WriterAt in memory (Encode's).
type memFile struct{ b []byte }

func (f *memFile) Write(p []byte) (int, error) {
	f.b = append(f.b, p...)
	return len(p), nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(f.b)) {
		return 0, fmt.Errorf("write at %d beyond the end (%d)", off, len(f.b))
	}
	return copy(f.b[off:], p), nil
}

// WriteTo streams the checkpoint (the bytes Encode returns) into w. It
// fills Manifest.Members, the format and version fields and, when empty,
// Created.
func (c *Checkpoint) WriteTo(w WriterAt) error {
	p, err := c.plan()
	if err != nil {
		return err
	}
	return p.writeTo(w)
}

// Encode returns the tar file. It fills Manifest.Members, the format and
// version fields and, when empty, Created. Write a file with WriteFile,
// which streams it.
func (c *Checkpoint) Encode() ([]byte, error) {
	p, err := c.plan()
	if err != nil {
		return nil, err
	}
	f := &memFile{b: make([]byte, 0, p.Size+int64(len(p.members)+3)*1536)}
	if err := p.writeTo(f); err != nil {
		return nil, err
	}
	return f.b, nil
}

// npzHeader is the zip entry header of an array, as numpy.savez names
// it; every entry has the same fixed time, so the same arrays always
// give the same bytes.
func npzHeader(name string) *zip.FileHeader {
	return &zip.FileHeader{Name: name + ".npy", Method: zip.Store, Modified: npzTime}
}

// npyLen is the length of a's .npy file and its header.
func npyHeader(a *nd.Array) ([]byte, int64, error) {
	hdr, err := npy.Header(a.DType(), a.Shape)
	if err != nil {
		return nil, 0, err
	}
	if !npy.Supported(a.DType()) {
		return nil, 0, fmt.Errorf("dtype %s has no numpy bytes here", a.DType())
	}
	return hdr, int64(len(hdr)) + int64(a.Size())*int64(a.DType().Size()), nil
}

// zip64Limit: below it no entry, offset or total of an archive needs
// zip64 records, so an .npz's size is that of its headers plus its data.
const zip64Limit = 1<<32 - 1<<20

// npzSize is the size of the .npz writeNPZ writes: the zip writer's
// headers (written for empty entries) plus the .npy files' lengths. An
// archive near 4 GB (zip64 records) is sized by writing it to a counter.
func npzSize(arrays []Named) (int64, error) {
	var data int64
	for _, na := range arrays {
		_, n, err := npyHeader(na.Array)
		if err != nil {
			return 0, fmt.Errorf("npz: %s: %w", na.Name, err)
		}
		data += n
	}
	cw := &countWriter{w: io.Discard}
	if data >= zip64Limit {
		if err := writeNPZ(cw, arrays); err != nil {
			return 0, err
		}
		return cw.n, nil
	}
	zw := zip.NewWriter(cw)
	for _, na := range arrays {
		if _, err := zw.CreateHeader(npzHeader(na.Name)); err != nil {
			return 0, fmt.Errorf("npz: %s: %w", na.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return 0, fmt.Errorf("npz: %w", err)
	}
	if cw.n+data >= zip64Limit {
		cw = &countWriter{w: io.Discard}
		if err := writeNPZ(cw, arrays); err != nil {
			return 0, err
		}
		return cw.n, nil
	}
	return cw.n + data, nil
}

// writeNPZ streams arrays as numpy.savez does: a zip archive (stored,
// not compressed) with one NAME.npy member per array, in the given order.
func writeNPZ(w io.Writer, arrays []Named) error {
	zw := zip.NewWriter(w)
	seen := map[string]bool{}
	for _, na := range arrays {
		if seen[na.Name] {
			return fmt.Errorf("npz: the name %q is used twice", na.Name)
		}
		seen[na.Name] = true
		hdr, _, err := npyHeader(na.Array)
		if err != nil {
			return fmt.Errorf("npz: %s: %w", na.Name, err)
		}
		fw, err := zw.CreateHeader(npzHeader(na.Name))
		if err != nil {
			return fmt.Errorf("npz: %s: %w", na.Name, err)
		}
		if _, err := fw.Write(hdr); err != nil {
			return err
		}
		if err := writeArrayData(fw, na.Array); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("npz: %w", err)
	}
	return nil
}

// writePiece is the size of the pieces an array's memory is written in.
const writePiece = 4 << 20

// chunkElems bounds the elements converted at a time where the memory is
// not the file's bytes.
const chunkElems = 1 << 16

// writeArrayData writes a's elements as .npy data (little-endian, C
// order) without a copy of the array: its own memory where the machine
// is little-endian, chunks of it otherwise.
func writeArrayData(w io.Writer, a *nd.Array) error {
	if npy.IsLittleEndian(binary.NativeEndian) { // an array's memory is its .npy data
		if b := nd.RawBytes(a); b != nil || a.Size() == 0 {
			// In pieces, so that a large array's hashing overlaps its
			// own writing (pipeHash).
			for len(b) > writePiece {
				if _, err := w.Write(b[:writePiece]); err != nil {
					return err
				}
				b = b[writePiece:]
			}
			_, err := w.Write(b)
			return err
		}
	}
	var buf []byte
	n := a.Size()
	for lo := 0; lo < n; lo += chunkElems {
		hi := min(lo+chunkElems, n)
		part := &nd.Array{Shape: []int{hi - lo}, Data: nd.SliceData(a.Data, lo, hi)}
		var err error
		buf, err = npy.AppendData(buf[:0], part, binary.LittleEndian)
		if err != nil {
			return err
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
