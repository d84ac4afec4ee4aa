package main

import (
	"fmt"
	"os"
	"path/filepath"
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

// repl --no-train FILE runs FILE up to its first main_loop.run(), keeping
// its globals, and trains nothing; run() at the prompt then trains.
func TestTerminalReplNoTrain(t *testing.T) {
	script := writeScript(t, "train.star", fmt.Sprintf(trainingScript, 40)+"main_loop.run()\nprint(\"AFTER RUN\")\n")
	tm := startTerminal(t, []string{"BLOCKS_REPL_HISTORY=" + filepath.Join(t.TempDir(), "h")}, "repl", "--no-train", script)
	tm.expect("stopped at its first main_loop.run() (--no-train)")
	tm.expect(">>> ")
	tm.line(`print("IT", main_loop.status["iterations_done"])`)
	tm.expect("IT 0")
	tm.line("main_loop.run()")
	tm.expect(">>> ")
	tm.line(`print("IT", main_loop.status["iterations_done"])`)
	tm.expect("IT 40")
	tm.exit()
	if strings.Contains(tm.screen(), "AFTER RUN") {
		t.Error("--no-train ran the file past its main_loop.run()")
	}
}

// The package documentation (go doc) names every command, so it cannot
// fall behind the commands as they are added.
func TestPackageDocNamesEveryCommand(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, ok := strings.Cut(string(src), "\npackage main")
	if !ok {
		t.Fatal("main.go: no package clause")
	}
	names := []string{"version", "help"}
	for name := range commands {
		names = append(names, name)
	}
	for _, name := range names {
		if !strings.Contains(doc, "//\tblocks-repl "+name+" ") {
			t.Errorf("main.go's package documentation does not list %q", "blocks-repl "+name)
		}
	}
}
