package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// directAlign is the alignment of O_DIRECT reads' offsets, lengths and
// memory: a multiple of every disk's logical block size.
const directAlign = 4096

// directReader reads pieces of an open file with O_DIRECT through an
// aligned buffer: the disk writes into the buffer, and the bytes are
// copied from there into the destination. Against a read through the
// page cache this saves the kernel its page cache pages (allocating,
// charging and freeing one per 4 KB, ~1 s of system time a GB here) and
// its copy; the arrays' data is not block-aligned in the file, hence
// the buffer.
type directReader struct {
	f   *os.File
	buf []byte
}

// newDirectReader opens f's file again with O_DIRECT (the same file,
// even if its path now names another); nil where O_DIRECT is refused.
func newDirectReader(f *os.File, piece int) *directReader {
	g, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return nil
	}
	raw := make([]byte, piece+3*directAlign)
	skip := (directAlign - int(uintptr(unsafe.Pointer(&raw[0]))%directAlign)) % directAlign
	return &directReader{f: g, buf: raw[skip : skip+piece+2*directAlign]}
}

// errDirect says a direct read failed where a read through the page
// cache may not (the file system refuses O_DIRECT's alignment).
var errDirect = errors.New("O_DIRECT read refused")

// readAt fills p from off.
func (r *directReader) readAt(p []byte, off int64) error {
	lo := off &^ (directAlign - 1)
	hi := (off + int64(len(p)) + directAlign - 1) &^ (directAlign - 1)
	b := r.buf[:hi-lo]
	n := 0
	for n < len(b) {
		k, err := unix.Pread(int(r.f.Fd()), b[n:], lo+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %v", errDirect, err)
		}
		if k == 0 {
			break // the end of the file, within the last block
		}
		n += k
	}
	if int64(n) < off-lo+int64(len(p)) {
		return fmt.Errorf("reading %d bytes at %d: %w", len(p), off, io.ErrUnexpectedEOF)
	}
	copy(p, b[off-lo:])
	return nil
}

func (r *directReader) close() { r.f.Close() }
