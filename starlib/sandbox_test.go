package starlib_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

func write(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// load() reads .star files under the script's directory only: not a
// parent's, not an absolute path elsewhere, not through a symbolic link
// that points out.
func TestSandboxLoadStaysUnderTheScriptsDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "exp")
	write(t, filepath.Join(root, "secret.star"), "secret = 42\n")
	write(t, filepath.Join(dir, "lib", "ok.star"), "ok = 1\n")
	if err := os.Symlink(filepath.Join(root, "secret.star"), filepath.Join(dir, "link.star")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src, wantErr string
	}{
		{`load("lib/ok.star", "ok")`, ""},
		{`load("../secret.star", "secret")`, "outside the script's directory"},
		{`load("` + filepath.Join(root, "secret.star") + `", "secret")`, "outside the script's directory"},
		{`load("link.star", "secret")`, "outside the script's directory"},
		{`load("lib/../../secret.star", "secret")`, "outside the script's directory"},
	} {
		script := filepath.Join(dir, "main.star")
		write(t, script, tc.src+"\n")
		_, err := starlib.ExecFile(script, nil, starlib.Options{FloatX: "float32", Library: all.Library()})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got %v, want an error containing %q", tc.src, err, tc.wantErr)
		case tc.wantErr != "":
			var se *starlib.SandboxError
			if !errors.As(err, &se) {
				t.Errorf("%s: %v is not a SandboxError", tc.src, err)
			}
		}
	}
}

// A confined run writes only under its run directory and has no network,
// unless trusted; a plain run is not confined.
func TestSandboxWritesAndNetwork(t *testing.T) {
	runDir := t.TempDir()
	for _, tc := range []struct {
		sb             starlib.Sandbox
		path           string
		writeOK, netOK bool
	}{
		{starlib.Sandbox{}, "/tmp/anywhere.tar", true, true},
		{starlib.Sandbox{Confined: true, RunDir: runDir}, filepath.Join(runDir, "ckpt.tar"), true, false},
		{starlib.Sandbox{Confined: true, RunDir: runDir}, filepath.Join(runDir, "sub", "plot.png"), true, false},
		{starlib.Sandbox{Confined: true, RunDir: runDir}, filepath.Join(runDir, "..", "escape.tar"), false, false},
		{starlib.Sandbox{Confined: true, RunDir: runDir}, "/etc/passwd", false, false},
		{starlib.Sandbox{Confined: true, RunDir: runDir, Trust: true}, "/tmp/elsewhere.tar", true, true},
	} {
		in, err := starlib.NewInterp(starlib.Options{FloatX: "float32", Sandbox: tc.sb, Library: all.Library()})
		if err != nil {
			t.Fatal(err)
		}
		if err := starlib.CheckWrite(in.Thread, tc.path); (err == nil) != tc.writeOK {
			t.Errorf("%+v: CheckWrite(%s) = %v, want ok=%v", tc.sb, tc.path, err, tc.writeOK)
		} else if err != nil && !strings.Contains(err.Error(), "--trust") {
			t.Errorf("the refusal does not say how to allow it: %v", err)
		}
		if err := starlib.CheckNetwork(in.Thread, "tcp://localhost:5557"); (err == nil) != tc.netOK {
			t.Errorf("%+v: CheckNetwork = %v, want ok=%v", tc.sb, err, tc.netOK)
		}
	}
	// A thread without a run (a builtin called from Go) is not confined.
	if err := starlib.CheckWrite(&starlark.Thread{}, "/x"); err != nil {
		t.Error(err)
	}
}

// The data server's builtins ask the sandbox first.
func TestSandboxRefusesTheDataServerWhenConfined(t *testing.T) {
	src := `
load("fuel.streams", "ServerDataStream")
s = ServerDataStream(("features",), False, port = 5999, timeout = 1)
`
	_, err := starlib.ExecFile("confined.star", []byte(src), starlib.Options{FloatX: "float32", Sandbox: starlib.Sandbox{Confined: true}, Library: all.Library()})
	var se *starlib.SandboxError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "ServerDataStream") {
		t.Errorf("confined ServerDataStream: got %v, want a SandboxError", err)
	}
	if _, err := starlib.ExecFile("trusted.star", []byte(src), starlib.Options{FloatX: "float32", Sandbox: starlib.Sandbox{Confined: true, Trust: true}, Library: all.Library()}); err != nil {
		t.Errorf("trusted ServerDataStream: %v", err)
	}
}
