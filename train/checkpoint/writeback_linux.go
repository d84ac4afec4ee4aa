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

// holdReplaced opens the file a checkpoint's rename is about to replace
// (nil when there is none, or it is not a regular file): the rename then
// drops only a link, and the file is freed (its pages dropped from the
// page cache, ~10 ms for 67 MB) when the caller closes it, after the
// save, not within the rename.
func holdReplaced(path string) *os.File {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, _ := os.Open(path)
	return f
}
