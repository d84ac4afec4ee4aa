package starlib

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel/config"
)

// Sandbox is what a script may touch besides computing. Scripts have no
// way to run processes or open arbitrary files (Starlark has neither);
// what is left is limited here:
//
//   - load() reads the Library's modules, the embedded standard library, and
//     .star files under the main script's directory (RootDir) only;
//   - when Confined (a checkpoint received from elsewhere being resumed or
//     replayed), files are written only under RunDir and no network
//     connection is made, unless Trust lifts both limits (--trust).
//
// A plain run of one's own script is not Confined: it writes where it
// says and connects to the data-server addresses it names.
type Sandbox struct {
	RootDir  string // load() resolves .star files under it; empty: the main script's directory
	RunDir   string // where a confined run may write; empty: the working directory
	Confined bool
	Trust    bool
	// LoadRoots are more directories load() may read .star files under
	// (a project's shared helpers above the script's directory); a
	// confined run may also read data files there.
	LoadRoots []string
	// ReadDirs are more directories a confined run may read data files
	// under, besides the run directory and the data path
	// (FUEL_DATA_PATH): the resumed checkpoint's directory.
	ReadDirs []string
	// WriteFiles are files a confined run may write although they lie
	// outside the run directory: the checkpoint being resumed.
	WriteFiles []string
	// Scratch, when set (replay), receives every file the run writes,
	// under its own name: the caller removes it afterwards, so that the
	// run leaves nothing behind.
	Scratch string
	// Created records the files a confined run created (WritePath), the
	// only ones it may write again. Runs of one command share it (resume
	// runs the script twice when --set changes an override: a probe,
	// then the run); nil: the run keeps its own.
	Created *CreatedFiles
}

// CreatedFiles is a set of files (real paths) a confined run created.
type CreatedFiles struct {
	mu    sync.Mutex
	paths map[string]bool
}

// SandboxError is an action the sandbox refused.
type SandboxError struct{ Msg string }

func (e *SandboxError) Error() string { return e.Msg }

func sandboxOf(thread *starlark.Thread) Sandbox {
	if s := state(thread); s != nil {
		return s.sandbox
	}
	return Sandbox{}
}

// within reports whether path is dir or below it (both absolute, cleaned).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// RealPath is path, absolute, with symbolic links resolved as far as they
// exist (two names of one file give one RealPath).
func RealPath(path string) string { return realPath(path) }

// realPath is path with symbolic links resolved as far as they exist, so
// that a link inside the allowed directory cannot point outside it.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	dir, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// checkLoad refuses a .star file outside the root directory.
func (s Sandbox) checkLoad(module, abs string) error {
	if s.RootDir == "" {
		return nil
	}
	root := realPath(s.RootDir)
	for _, r := range s.LoadRoots {
		if within(realPath(abs), realPath(r)) {
			return nil
		}
	}
	if !within(realPath(abs), root) {
		return &SandboxError{fmt.Sprintf("load(%q): %s is outside the script's directory %s (a script loads modules, the standard library and .star files under its own directory; run it with --load-root DIR to allow a shared folder)", module, abs, root)}
	}
	return nil
}

// CheckWrite returns an error when the script running on thread may not
// write path: a confined run writes only under its run directory unless
// trusted. Extensions and builtins that write files call it first.
//
// Writers call WritePath instead, which also sends a replay's files to
// its scratch directory and lets a confined run replace only files it
// created.
func CheckWrite(thread *starlark.Thread, path string) error {
	return sandboxOf(thread).checkWrite(path)
}

// checkWrite is CheckWrite's rule.
func (s Sandbox) checkWrite(path string) error {
	if !s.Confined || s.Trust {
		return nil
	}
	if s.writeFile(path) {
		return nil
	}
	dir := s.RunDir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	dir = realPath(dir)
	if !within(realPath(path), dir) {
		return &SandboxError{fmt.Sprintf("writing %s: outside the run directory %s; this checkpoint's script may write only there unless you resume it with --trust", path, dir)}
	}
	return nil
}

// writeFile reports whether path is one of WriteFiles.
func (s Sandbox) writeFile(path string) bool {
	for _, f := range s.WriteFiles {
		if realPath(f) == realPath(path) {
			return true
		}
	}
	return false
}

// CheckCreate returns an error unless a confined run may create path: it
// lies under the run directory (CheckWrite's rule) and nothing is there
// yet, not even a symbolic link. It is the check for a path that
// something other than the script names but the checkpoint chose (the
// SQLite log named in its recorded command line): a checkpoint may make
// a confined run create files in its run directory, never open one the
// user already has. Not confined, or trusted: nil.
func (s Sandbox) CheckCreate(path string) error {
	if err := s.checkWrite(path); err != nil {
		return err
	}
	if !s.Confined || s.Trust || s.writeFile(path) {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return &SandboxError{fmt.Sprintf("writing %s: the file exists and this run did not create it; a checkpoint's script replaces only files it created unless you resume it with --trust", path)}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return &SandboxError{fmt.Sprintf("writing %s: %v", path, err)}
	}
	return nil
}

// CheckNetwork returns an error when the script running on thread may not
// connect to (or serve on) addr: a confined run has no network unless
// trusted. The data server's builtins call it.
func CheckNetwork(thread *starlark.Thread, addr string) error {
	s := sandboxOf(thread)
	if !s.Confined || s.Trust {
		return nil
	}
	return &SandboxError{fmt.Sprintf("connecting to %s: this checkpoint's script has no network access; resume it with --trust to let it reach the data server it names", addr)}
}

// WritePath is the one way a builtin or extension gets a file to write:
// the path it must open, after the sandbox's check. A replay's writes go
// to its scratch directory (same name, under it); a confined run's writes
// outside its run directory are refused, and so are its writes to a file
// that existed before the run and that it did not create (a user's
// results.npy beside the checkpoint): it creates files, and rewrites only
// those. (Checkpoint has its own rule: it replaces checkpoints.)
func WritePath(thread *starlark.Thread, path string) (string, error) {
	s := sandboxOf(thread)
	if s.Scratch != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", err
		}
		p := filepath.Join(s.Scratch, abs)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		return p, nil
	}
	if err := CheckWrite(thread, path); err != nil {
		return "", err
	}
	if !s.Confined || s.Trust {
		return path, nil
	}
	// A confined run replaces only the files it created: it records each
	// path it was given that did not exist yet.
	c := s.Created
	if c == nil { // a thread that is no run's
		c = &CreatedFiles{}
	}
	rp := realPath(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paths[rp] {
		return path, nil
	}
	if err := s.CheckCreate(path); err != nil {
		return "", err
	}
	if c.paths == nil {
		c.paths = map[string]bool{}
	}
	c.paths[rp] = true
	return path, nil
}

// CheckRead returns an error when a confined run may not read path: it
// reads data only under the run directory, the data path
// (FUEL_DATA_PATH), the load roots and the directories given (ReadDirs:
// the resumed checkpoint's), unless trusted. Not the directory the stored
// script names: that path is part of the checkpoint, chosen by whoever
// made it. Builtins that open a
// file a script names (datasets, TextFile, Load) call it first.
func CheckRead(thread *starlark.Thread, path string) error {
	s := sandboxOf(thread)
	if !s.Confined || s.Trust {
		return nil
	}
	rp := realPath(path)
	for _, d := range s.readRoots() {
		if d != "" && within(rp, realPath(d)) {
			return nil
		}
	}
	return &SandboxError{fmt.Sprintf("reading %s: outside the directories this checkpoint's script may read (%s); resume it with --trust to let it read there",
		path, strings.Join(s.readRoots(), ", "))}
}

// readRoots are the directories a confined run reads under.
func (s Sandbox) readRoots() []string {
	run := s.RunDir
	if run == "" {
		run, _ = os.Getwd()
	}
	// Not RootDir: a stored script's directory is whatever the
	// checkpoint says (it could say /).
	roots := []string{run}
	roots = append(roots, config.DataPath()...)
	roots = append(roots, s.LoadRoots...)
	roots = append(roots, s.ReadDirs...)
	return roots
}
