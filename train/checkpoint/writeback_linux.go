package checkpoint

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing n bytes of f from off
// to the disk now, without waiting (sync_file_range SYNC_FILE_RANGE_WRITE):
// the disk works while the rest of the checkpoint is encoded, and the
// final fsync has less left to wait for.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
