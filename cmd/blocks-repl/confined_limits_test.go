package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStoredScriptLimits: resume's and replay's --max-steps reach the
// checkpoint's script (and only the command that was given it), and
// --expect-sha256 is the command's own.
func TestStoredScriptLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	_, good := sbCheckpoint(t)
	dir := t.TempDir()
	forge(t, good, "for _ in range(200000):\n    pass", filepath.Join(dir, "run.tar"))
	for _, args := range [][]string{
		{"replay", "--trust", "--max-steps", "100000", "run.tar"},
		{"resume", "--set", "epochs=2", "--max-steps", "100000", "run.tar"},
	} {
		code, out, errs := runBinIn(t, dir, nil, args...)
		if code != 1 || !strings.Contains(errs, "--max-steps") || !strings.Contains(errs, "exp.star:") {
			t.Errorf("%s: %d, want 1 and the --max-steps error at the script's line\n%s\n%s", strings.Join(args, " "), code, out, errs)
		}
	}
	if code, out, errs := runBinIn(t, dir, nil, "replay", "--trust", "--max-steps", "10000000", "run.tar"); code != 0 {
		t.Errorf("replay under a larger --max-steps: %d\n%s\n%s", code, out, errs)
	}
	code, _, errs := runBinIn(t, dir, nil, "replay", "--trust", "--expect-sha256", strings.Repeat("0", 64), "run.tar")
	if code != 1 || !strings.Contains(errs, "not the "+strings.Repeat("0", 64)+" you approved") {
		t.Errorf("replay --expect-sha256 of other scripts: %d\n%s", code, errs)
	}
}
