package checkpoint

import (
	"archive/tar"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// locks are the checkpoint paths this process holds, by absolute path:
// a lock is taken once and held until the process ends (flock locks
// belong to an open file, so a second open in the same process would
// conflict with the first).
var locks struct {
	sync.Mutex
	held map[string]*os.File
}

// LockName is the lock file of a checkpoint path: .NAME.lock beside it.
func LockName(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+".lock")
}

// LockError is a checkpoint path another process is writing.
type LockError struct {
	Path  string
	Owner string // what the other process wrote in the lock file
}

func (e *LockError) Error() string {
	return fmt.Sprintf("checkpoint %s is in use by another run (%s); two runs writing one checkpoint would destroy each other's files: give this run another path, or wait for that one to end",
		e.Path, e.Owner)
}

// Lock takes an exclusive lock on the checkpoint path for the rest of the
// process's life (a lock file beside it, flock'ed, holding this process's
// id and command). It fails at once with a *LockError naming the process
// that holds it. Taking a lock this process holds already is a no-op. The
// directory must exist: the error names it when it does not.
func Lock(path string) error {
	if err := CheckDir(path); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	locks.Lock()
	defer locks.Unlock()
	if locks.held[abs] != nil {
		return nil
	}
	name := LockName(abs)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("checkpoint: locking %s: %w", path, err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil && !sameFile(f, name) {
		// The holder released and removed the file between our open and
		// our flock: the lock we hold is on a file no one else will see.
		f.Close()
		locks.Unlock()
		defer locks.Lock()
		return Lock(path)
	}
	if err != nil {
		b := make([]byte, 512)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		owner := strings.TrimSpace(string(b[:n]))
		if owner == "" {
			owner = "a process that has not written its id yet"
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &LockError{Path: path, Owner: owner}
		}
		return fmt.Errorf("checkpoint: locking %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d: %s\n", os.Getpid(), strings.Join(os.Args, " "))), 0)
	if locks.held == nil {
		locks.held = map[string]*os.File{}
	}
	locks.held[abs] = f
	return nil
}

// CheckDir returns an error naming the directory of path when it does
// not exist or is not a directory: a run checks its output paths before
// training, not at the first write.
func CheckDir(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checkpoint %s: the directory %s does not exist (create it first)", path, dir)
		}
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("checkpoint %s: %s is not a directory", path, dir)
	}
	return nil
}

// CheckReplaceable returns an error when path exists and is not a
// checkpoint (a tar file whose first member is the manifest): a run
// replaces only checkpoints, never a user's file that happens to have the
// name.
func CheckReplaceable(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("checkpoint: %s exists and is not a regular file; refusing to replace it", path)
	}
	h, err := tar.NewReader(f).Next()
	if err != nil || h.Name != MemberManifest {
		return fmt.Errorf("checkpoint: %s exists and is not a checkpoint; refusing to replace it with one (choose another path, or move the file away)", path)
	}
	return nil
}

// tmpName is the prefix of a temporary file of this process for path:
// .NAME.tmp-PID-.
func tmpPrefix(base string) string { return "." + base + ".tmp-" }

// staleTemp reports whether a temporary file name (after the prefix) was
// left by a process that no longer runs, or by this one: only those are
// removed, never the file another live process is writing.
func staleTemp(rest string) bool {
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err = syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// sameFile reports whether the open file f is still the file at name.
func sameFile(f *os.File, name string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(name)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// ReleaseLocks removes the lock files this process holds and releases
// them, when its runs are over (a command's end): a run leaves nothing
// beside its checkpoint but the checkpoint. A process that dies holds no
// lock (the kernel releases it); its lock file stays, unlocked, and the
// next run takes it.
func ReleaseLocks() {
	locks.Lock()
	defer locks.Unlock()
	for abs, f := range locks.held {
		_ = os.Remove(LockName(abs))
		f.Close()
		delete(locks.held, abs)
	}
}
