package main

import (
	"strings"
	"testing"
)

// --help after a command prints its usage (exit 0); a usage error prints
// the command's usage lines, not the whole help (exit 2); the help
// explains --trust.
func TestCommandHelpAndUsageErrors(t *testing.T) {
	for _, cmd := range []string{"run", "resume", "replay", "inspect", "graph", "repl"} {
		code, out, errs := runBinary(t, "", cmd, "--help")
		if code != 0 || !strings.HasPrefix(out, "usage:\n  blocks-repl "+cmd) || errs != "" {
			t.Errorf("%s --help: exit %d\nstdout:\n%s\nstderr:\n%s", cmd, code, out, errs)
		}
	}
	if _, out, _ := runBinary(t, "", "resume", "--help"); !strings.Contains(out, "--trust            a checkpoint is data from elsewhere") {
		t.Errorf("resume --help does not explain --trust:\n%s", out)
	}
	if _, out, _ := runBinary(t, "", "help"); !strings.Contains(out, "--trust") || !strings.Contains(out, "sandboxed") {
		t.Errorf("the help does not explain --trust:\n%s", out)
	}
	for _, args := range [][]string{{"run", "--bogus", "x.star"}, {"replay"}, {"inspect", "a.tar", "b.tar"}, {"graph"}, {"frobnicate"}} {
		code, _, errs := runBinary(t, "", args...)
		if code != 2 || strings.Count(errs, "\n") > 10 || strings.Contains(errs, "flag: help requested") {
			t.Errorf("%v: exit %d, %d lines of stderr:\n%s", args, code, strings.Count(errs, "\n"), errs)
		}
	}
}
