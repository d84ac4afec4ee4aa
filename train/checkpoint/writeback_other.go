//go:build !linux

package checkpoint

import "os"

// startWriteback does nothing where sync_file_range does not exist: the
// final fsync writes everything.
func startWriteback(f *os.File, off, n int64) {}

// holdReplaced holds nothing elsewhere (a file open where it is replaced
// may keep the rename from succeeding).
func holdReplaced(path string) *os.File { return nil }
