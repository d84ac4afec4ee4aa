//go:build cgo

package server

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadCertificateHostileFiles: ReadCertificate read the whole file
// before its 64 KiB check (a key symlinked to /dev/zero: memory without
// end; a FIFO: fuel serve waited for a writer forever) and took a secret
// key that every user could read. Now it opens without blocking, wants a
// regular file, reads at most 64 KiB + 1, and refuses a world-readable
// secret key.
func TestReadCertificateHostileFiles(t *testing.T) {
	dir := t.TempDir()
	pub, sec, err := WriteCertificates(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.key_secret")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.key_secret")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.key")
	if err := os.WriteFile(big, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open.key_secret")
	b, _ := os.ReadFile(sec)
	if err := os.WriteFile(open, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{zero, "zero.key_secret is a device, not a key file"},
		{fifo, "fifo.key_secret is a named pipe (FIFO), not a key file"},
		{big, "big.key is larger than 64 KiB, not a key file"},
		{open, "open.key_secret holds a secret key, and every user of this machine can read it (mode 0644): anyone could act as its owner; make it private (chmod 600 "},
	} {
		done := make(chan error, 1)
		go func() {
			_, _, err := ReadCertificate(c.path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want an error saying %q", filepath.Base(c.path), err, c.want)
			}
		case <-time.After(30 * time.Second): // far beyond a read of 64 KiB
			t.Errorf("%s: ReadCertificate has not returned after 30 s", filepath.Base(c.path))
		}
	}
	// The files WriteCertificates makes: a world-readable public key, a
	// private secret key.
	for _, p := range []string{pub, sec} {
		if _, _, err := ReadCertificate(p); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}
