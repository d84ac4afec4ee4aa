//go:build cgo

package h5

import (
	"fmt"
	"os"
	"time"
)

// fileStamp is what tells a file that changed: its size and modification
// time.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: st.Size(), modTime: st.ModTime()}, nil
}

// ErrFileChanged is wrapped by the error of a read from a file that was
// truncated, rewritten or removed since the dataset opened it.
var ErrFileChanged = fmt.Errorf("the file changed since it was opened")

// checkUnchanged fails when the file read out of core was truncated,
// rewritten or removed under a running epoch: HDF5 would go on reading
// the old layout (zeros past a truncation), so the change must stop the
// reads with an error that names the file. One stat per batch.
func (d *H5PYDataset) checkUnchanged() error {
	now, err := stampOf(d.path)
	if err != nil {
		return fmt.Errorf("h5: %s: %w: %v", d.path, ErrFileChanged, err)
	}
	if now.size != d.opened.size {
		return fmt.Errorf("h5: %s: %w (truncated or rewritten): %d bytes when opened, %d now; reopen it to read the new contents",
			d.path, ErrFileChanged, d.opened.size, now.size)
	}
	if !now.modTime.Equal(d.opened.modTime) {
		return fmt.Errorf("h5: %s: %w (modified at %s, opened when last modified at %s); reopen it to read the new contents",
			d.path, ErrFileChanged, now.modTime.Format(time.RFC3339Nano), d.opened.modTime.Format(time.RFC3339Nano))
	}
	return nil
}
