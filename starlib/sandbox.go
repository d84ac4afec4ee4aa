package starlib

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"
)

// Sandbox is what a script may touch besides computing. Scripts have no
// way to run processes or open arbitrary files (Starlark has neither);
// what is left is limited here:
//
//   - load() reads registered modules, the embedded standard library, and
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
	if !within(realPath(abs), root) {
		return &SandboxError{fmt.Sprintf("load(%q): %s is outside the script's directory %s (a script loads modules, the standard library and .star files under its own directory)", module, abs, root)}
	}
	return nil
}

// CheckWrite returns an error when the script running on thread may not
// write path: a confined run writes only under its run directory unless
// trusted. Extensions and builtins that write files call it first.
func CheckWrite(thread *starlark.Thread, path string) error {
	s := sandboxOf(thread)
	if !s.Confined || s.Trust {
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
