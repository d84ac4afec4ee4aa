package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSessionCheckpointStoresItsCode: a checkpoint written from an
// interactive session (the REPL's, and so the Jupyter kernel's) stores
// the session's code up to the input that wrote it as its script
// (session.star in the current directory), and resume continues it.
// Before, such a checkpoint stored no script and could not be resumed.
func TestSessionCheckpointStoresItsCode(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "jupyter", "session_checkpoint.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(binary(t))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FUEL_FLOATX=float32")
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PARAMS ") {
		t.Fatalf("the session: %v\n%s", err, out)
	}
	ckpt := filepath.Join(dir, "c.tar")
	code, insp, errs := runBinary(t, "", "inspect", ckpt)
	if code != 0 {
		t.Fatalf("inspect: exit %d\n%s", code, errs)
	}
	for _, want := range []string{filepath.Join(dir, "session.star"), "# Saved from a blocks-repl session", "mlp = MLP([Rectifier(), Softmax()], [784, 20, 10]", "main_loop.run()"} {
		if !strings.Contains(insp, want) {
			t.Errorf("the checkpoint's script lacks %q:\n%s", want, insp)
		}
	}
	if strings.Contains(insp, `print("PARAMS"`) {
		t.Errorf("the checkpoint's script has inputs after the one that wrote it:\n%s", insp)
	}
	w := startWatched(t, dir, nil, "resume", ckpt)
	if code := w.exitCode(t, 120e9); code != 0 || !strings.Contains(w.stderr(), "training continues from") {
		t.Fatalf("resume: exit %d\n%s", code, w.stderr())
	}
}
